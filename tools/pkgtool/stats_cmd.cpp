// SPDX-License-Identifier: BSD-3-Clause
// `pkgtool stats ingest|query`: the nightly stats store (stats.db, or
// PostgreSQL with --stats-url postgresql://...).
//   stats ingest [--stats-url URL] [--date YYYY-MM-DD] FILE...
//   stats query [--stats-url URL] 'SQL' [--json|--table]
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "cli_parse.hpp"
#include "commands.hpp"
#include "libpkg/base/error.hpp"
#include "libpkg/nightly/stats_document.hpp"
#include "libpkg/nightly/stats_store.hpp"
#include "stats_url_option.hpp"
#include "subcommand_table.hpp"

namespace pkgtool {

namespace {

using libpkg::nightly::QueryCell;
using libpkg::nightly::StatsStore;

const char* kUsage =
    "usage: pkgtool stats ingest [--stats-url URL] [--date YYYY-MM-DD] "
    "FILE...\n"
    "       pkgtool stats query [--stats-url URL] SQL [--json|--table]\n"
    "URL: sqlite:PATH or a path (default stats.db), postgresql://... or a "
    "libpq connection string";

int run_ingest(const std::vector<std::string>& args) {
  CLI::App app{"store job documents and driver summaries in the stats store",
               "stats ingest"};
  std::string db = "stats.db", date;
  std::vector<std::string> files;
  add_stats_url_option(app, db, "stats.db");
  app.add_option("--date", date,
                 "date of documents that carry none (driver summaries); "
                 "default: the file's modification day (UTC)");
  app.add_option("files", files,
                 "libpkg-job/1 or libpkg-driver/1 JSON files, or directories "
                 "(every *.json under them)")
      ->required();
  if (!parse_cli(app, args, "pkgtool stats ingest", kUsage)) return 0;
  if (!date.empty() && !libpkg::nightly::iso_date(date))
    throw libpkg::Error(libpkg::Errc::usage, "pkgtool stats ingest",
                        "--date " + date + " is not YYYY-MM-DD");
  StatsStore store(db, StatsStore::Mode::read_write);
  // A directory stands for the documents under it (a nightly's jobs/, a
  // folder of CI summaries): 10^5 paths don't fit on a command line.
  std::vector<std::filesystem::path> paths;
  for (const auto& f : files) {
    if (!std::filesystem::is_directory(f)) {
      paths.emplace_back(f);
      continue;
    }
    std::vector<std::filesystem::path> found;
    for (const auto& e : std::filesystem::recursive_directory_iterator(f))
      if (e.is_regular_file() && e.path().extension() == ".json")
        found.push_back(e.path());
    // By the path's text: path's own ordering compares component by
    // component, slow for 10^5 names.
    std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) {
      return a.native() < b.native();
    });
    paths.insert(paths.end(), found.begin(), found.end());
  }
  auto r = libpkg::nightly::ingest_files(store, paths, date);
  std::printf("%s: %llu inserted, %llu replaced, %llu unchanged\n",
              store.name().c_str(), static_cast<unsigned long long>(r.inserted),
              static_cast<unsigned long long>(r.replaced),
              static_cast<unsigned long long>(r.unchanged));
  return 0;
}

nlohmann::ordered_json cell_json(const QueryCell& c) {
  switch (c.kind) {
    case QueryCell::Kind::integer:
      return c.integer;
    case QueryCell::Kind::real:
      return c.real;
    case QueryCell::Kind::text:
      return c.text;
    case QueryCell::Kind::null:
      break;
  }
  return nullptr;
}

std::string cell_text(const QueryCell& c) {
  switch (c.kind) {
    case QueryCell::Kind::integer:
      return std::to_string(c.integer);
    case QueryCell::Kind::real:
      return fmt::format("{}", c.real);
    case QueryCell::Kind::text:
      return c.text;
    case QueryCell::Kind::null:
      break;
  }
  return "NULL";
}

int run_query(const std::vector<std::string>& args) {
  CLI::App app{"ad-hoc SQL over the stats store (read-only)", "stats query"};
  std::string db = "stats.db", sql;
  bool json = false, table = false;
  add_stats_url_option(app, db, "stats.db");
  app.add_option("sql", sql,
                 "one SQL statement in the store's dialect (SQLite: "
                 "json_extract(doc, '$.f'); PostgreSQL: doc->>'f')")
      ->required();
  auto* j = app.add_flag("--json", json, "rows as a JSON array of objects");
  app.add_flag("--table", table, "aligned columns (default)")->excludes(j);
  if (!parse_cli(app, args, "pkgtool stats query", kUsage)) return 0;
  StatsStore store(db, StatsStore::Mode::read_only);
  auto result = store.query(sql);
  if (json) {
    nlohmann::ordered_json out = nlohmann::ordered_json::array();
    for (const auto& row : result.rows) {
      nlohmann::ordered_json o = nlohmann::ordered_json::object();
      for (std::size_t i = 0; i < row.size(); ++i)
        o[result.columns[i]] = cell_json(row[i]);
      out.push_back(std::move(o));
    }
    std::printf("%s\n", out.dump(2).c_str());
    return 0;
  }
  std::vector<std::size_t> width;
  for (const auto& c : result.columns) width.push_back(c.size());
  std::vector<std::vector<std::string>> text;
  for (const auto& row : result.rows) {
    auto& line = text.emplace_back();
    for (std::size_t i = 0; i < row.size(); ++i) {
      line.push_back(cell_text(row[i]));
      width[i] = std::max(width[i], line.back().size());
    }
  }
  auto print = [&](const std::vector<std::string>& cells) {
    std::string out;
    for (std::size_t i = 0; i < cells.size(); ++i) {
      if (i) out += "  ";
      out += i + 1 == cells.size() ? cells[i]
                                   : fmt::format("{:<{}}", cells[i], width[i]);
    }
    std::printf("%s\n", out.c_str());
  };
  print(result.columns);
  for (const auto& line : text) print(line);
  return 0;
}

}  // namespace

int run_stats(const std::vector<std::string>& args) {
  static const SubcommandTable table = {
      {"ingest", {"", run_ingest}},
      {"query", {"", run_query}},
  };
  return run_subcommand(table, "pkgtool stats", args, kUsage);
}

}  // namespace pkgtool
