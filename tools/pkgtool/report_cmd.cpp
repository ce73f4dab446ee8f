// SPDX-License-Identifier: BSD-3-Clause
// `pkgtool nightly report`: the static dashboard from the stats store.
//   nightly report [--stats-url URL] [--html OUT.html] [--json OUT.json|-]
//                  [--days N] [--date YYYY-MM-DD] [--size-threshold PCT]
//                  [--nightly-root DIR]
#include <CLI/CLI.hpp>
#include <cstdio>
#include <memory>

#include "cli_parse.hpp"
#include "commands.hpp"
#include "libpkg/base/atomic_file.hpp"
#include "libpkg/base/error.hpp"
#include "libpkg/nightly/report_data.hpp"
#include "libpkg/nightly/report_html.hpp"
#include "nightly_subcommand.hpp"
#include "stats_url_option.hpp"

namespace pkgtool {

namespace {

namespace fs = std::filesystem;

void write_output(const fs::path& target, const std::string& text) {
  if (target.has_parent_path())
    libpkg::create_output_directory(target.parent_path());
  libpkg::AtomicFile out = libpkg::AtomicFile::create(target);
  out.write(text);
  out.commit();
}

int run_report(const std::vector<std::string>& args) {
  CLI::App app{"the nightly report from the stats store", "nightly report"};
  std::string db = "stats.db", html, json, root;
  double threshold = 5;
  libpkg::nightly::ReportOptions options;
  add_stats_url_option(app, db, "stats.db");
  app.add_option("--html", html, "write the page here");
  app.add_option("--json", json,
                 "write the same data as JSON here ('-': stdout)");
  app.add_option("--days", options.days,
                 "nights shown, ending at the latest (default 30; 0: all)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--date", options.today,
                 "the night reported as today (default: the latest in the "
                 "database)");
  app.add_option("--size-threshold", threshold,
                 "size growth over the previous night flagged, percent "
                 "(default 5)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--nightly-root", root,
                 "directory holding the nightly folders, for log links "
                 "(default: the SQLite file's directory; with PostgreSQL, the "
                 "current directory)");
  const char* usage =
      "usage: pkgtool nightly report [--stats-url URL] --html OUT.html "
      "[--json OUT.json|-] [--days N] [--date YYYY-MM-DD] "
      "[--size-threshold PCT] [--nightly-root DIR]";
  if (!parse_cli(app, args, "pkgtool nightly report", usage)) return 0;
  if (html.empty() && json.empty())
    usage_error("pkgtool nightly report", "--html or --json is needed");
  options.size_threshold = threshold / 100;
  auto store = std::make_unique<libpkg::nightly::StatsStore>(
      db, libpkg::nightly::StatsStore::Mode::read_only);
  const auto& where = store->location();
  if (!root.empty())
    options.nightly_root = fs::absolute(root);
  else if (where.kind == libpkg::nightly::StatsBackendKind::sqlite)
    options.nightly_root = fs::absolute(where.path).parent_path();
  else
    options.nightly_root = fs::current_path();
  auto data = libpkg::nightly::build_report(*store, options);
  // Closed now, not after the page: unmapping and freeing the engine's
  // memory costs less before the report's 10^5 strings are freed.
  store.reset();
  if (!json.empty()) {
    std::string text = libpkg::nightly::report_json(data) + "\n";
    if (json == "-")
      std::fputs(text.c_str(), stdout);
    else
      write_output(json, text);
  }
  if (!html.empty()) {
    // Written piece by piece as it is rendered (the all-nights page of 10^5
    // documents is 50 MB), renamed into place when complete.
    fs::path out = fs::absolute(html);
    libpkg::create_output_directory(out.parent_path());
    libpkg::AtomicFile file = libpkg::AtomicFile::create(out);
    libpkg::nightly::write_report_html(
        data, out.parent_path(),
        [&](std::string_view piece) { file.write(piece); });
    file.commit();
  }
  return 0;
}

const NightlySubcommand kReport(
    "report",
    "[--stats-url URL] --html OUT.html [--json OUT|-] [--days N] [--date D] "
    "[--size-threshold PCT] [--nightly-root DIR]\n"
    "      status grid, sizes, durations and regressions as one static page",
    run_report);

}  // namespace

}  // namespace pkgtool
