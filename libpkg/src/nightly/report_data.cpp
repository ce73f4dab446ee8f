// SPDX-License-Identifier: BSD-3-Clause
#include "libpkg/nightly/report_data.hpp"

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "libpkg/base/error.hpp"
#include "libpkg/nightly/stats_document.hpp"
#include "stats_sqlite.hpp"

namespace libpkg::nightly {

namespace fs = std::filesystem;

namespace {

std::chrono::sys_days parse_day(const std::string& iso) {
  int y = std::stoi(iso.substr(0, 4));
  unsigned m = static_cast<unsigned>(std::stoi(iso.substr(5, 2)));
  unsigned d = static_cast<unsigned>(std::stoi(iso.substr(8, 2)));
  return std::chrono::sys_days(std::chrono::year(y) / m / d);
}

std::string format_day(std::chrono::sys_days day) {
  return fmt::format("{:%Y-%m-%d}", day);
}

// The nightly folder name of a date: 2026-11-24 → 2026_11_24.
std::string nightly_dir(std::string date) {
  std::replace(date.begin(), date.end(), '-', '_');
  return date;
}

// largest_members of the artifact `name` in the document `doc`.
std::map<std::string, u64> largest_members(const std::string& doc,
                                           const std::string& name) {
  std::map<std::string, u64> out;
  auto j = nlohmann::json::parse(doc, nullptr, false);
  if (!j.is_object()) return out;
  auto artifacts = j.find("artifacts");
  if (artifacts == j.end() || !artifacts->is_array()) return out;
  for (const auto& a : *artifacts) {
    if (!a.is_object() || a.value("name", "") != name) continue;
    auto members = a.find("largest_members");
    if (members == a.end() || !members->is_array()) continue;
    for (const auto& m : *members)
      if (m.is_object() && m.contains("name") && m["name"].is_string() &&
          m.contains("size") && m["size"].is_number_unsigned())
        out[m["name"].get<std::string>()] = m["size"].get<u64>();
  }
  return out;
}

std::string document_text(detail::SqliteDb& db, const std::string& key) {
  detail::SqliteStmt s(db, "SELECT doc FROM documents WHERE key = ?");
  s.bind(1, key);
  return s.step() ? s.text(0) : std::string();
}

void find_size_regressions(detail::SqliteDb& db, ReportData& data) {
  for (const ReportSeries& series : data.sizes) {
    const auto& p = series.points;
    if (p.size() < 2 || p.back().date != data.today) continue;
    const ReportPoint& now = p.back();
    const ReportPoint& before = p[p.size() - 2];
    if (before.value <= 0) continue;
    double growth = now.value / before.value - 1;
    if (growth <= data.size_threshold) continue;
    SizeRegression r;
    r.config = series.config;
    r.package = series.name;
    r.old_date = before.date;
    r.new_date = now.date;
    r.old_artifact = before.artifact;
    r.new_artifact = now.artifact;
    r.old_size = static_cast<u64>(before.value);
    r.new_size = static_cast<u64>(now.value);
    r.growth = growth;
    // Which members grew, from what each job recorded of its artifact.
    auto old_members =
        largest_members(document_text(db, before.key), before.artifact);
    auto new_members =
        largest_members(document_text(db, now.key), now.artifact);
    for (const auto& [name, size] : new_members) {
      auto it = old_members.find(name);
      u64 old_size = it == old_members.end() ? 0 : it->second;
      if (size > old_size) r.members.push_back({name, old_size, size});
    }
    std::sort(r.members.begin(), r.members.end(), [](auto& a, auto& b) {
      return a.new_size - a.old_size > b.new_size - b.old_size;
    });
    if (r.members.size() > 5) r.members.resize(5);
    data.size_regressions.push_back(std::move(r));
  }
}

void find_status_regressions(ReportData& data) {
  // cells are ordered by config then date.
  for (std::size_t i = 1; i < data.cells.size(); ++i) {
    const ReportCell& now = data.cells[i];
    const ReportCell& before = data.cells[i - 1];
    if (now.date != data.today || before.config != now.config) continue;
    if (now.status == "FAILED" && before.status == "SUCCEEDED")
      data.status_regressions.push_back({now.config, before.date, before.status,
                                         now.status, now.failure, now.log});
  }
}

}  // namespace

std::string config_label(const std::string& package_type,
                         const std::string& python,
                         const std::string& accelerator) {
  std::string out = package_type;
  auto add = [&](const std::string& part) {
    if (part.empty()) return;
    if (!out.empty()) out += ' ';
    out += part;
  };
  add(python.empty() ? "" : "py" + python);
  add(accelerator);
  return out.empty() ? "(unknown)" : out;
}

std::string package_of(const std::string& artifact) {
  std::string ext;
  for (const char* e : {".tar.bz2", ".conda", ".whl", ".zip", ".tar.gz"}) {
    std::string_view s(e);
    if (artifact.size() > s.size() &&
        artifact.compare(artifact.size() - s.size(), s.size(), s) == 0) {
      ext = e;
      break;
    }
  }
  // The name ends where the version starts: the first '-' before a digit.
  std::size_t end = 0;
  while ((end = artifact.find('-', end)) != std::string::npos) {
    if (end + 1 < artifact.size() && artifact[end + 1] >= '0' &&
        artifact[end + 1] <= '9')
      break;
    ++end;
  }
  std::string name = end == std::string::npos
                         ? artifact.substr(0, artifact.size() - ext.size())
                         : artifact.substr(0, end);
  return name + ext;
}

ReportData build_report(StatsStore& store, const ReportOptions& options) {
  detail::SqliteDb& db = store.db();
  ReportData data;
  data.size_threshold = options.size_threshold;
  data.today = options.today;
  if (data.today.empty()) {
    detail::SqliteStmt s(db, "SELECT max(date) FROM documents");
    if (s.step() && !s.is_null(0)) data.today = s.text(0);
  }
  if (data.today.empty()) return data;  // an empty store
  auto today = iso_date(data.today);
  if (!today)
    throw Error(Errc::usage, store.path().string(),
                "report date '" + data.today + "' is not YYYY-MM-DD");
  data.today = *today;
  std::string first = "0000-00-00";
  if (options.days > 0)
    first =
        format_day(parse_day(data.today) - std::chrono::days(options.days - 1));

  std::map<std::pair<std::string, std::string>, ReportCell> cells;
  std::set<std::string> configs, dates;
  {
    detail::SqliteStmt s(db, R"sql(
      SELECT date, package_type, python, accelerator, job, status, failure,
             log, duration_s, key
      FROM documents WHERE date >= ?1 AND date <= ?2
      ORDER BY date, coalesce(start, ''), rowid)sql");
    s.bind(1, first);
    s.bind(2, data.today);
    while (s.step()) {
      ReportCell c;
      c.date = s.text(0);
      c.config = config_label(s.text(1), s.text(2), s.text(3));
      c.job = s.text(4);
      c.status = s.text(5);
      c.failure = s.text(6);
      if (!s.is_null(7))
        c.log = options.nightly_root / nightly_dir(c.date) / s.text(7);
      if (!s.is_null(8)) c.duration_s = s.real(8);
      configs.insert(c.config);
      dates.insert(c.date);
      cells[{c.config, c.date}] = std::move(c);  // the latest wins
    }
  }
  data.configs.assign(configs.begin(), configs.end());
  // Every night of the window, also those without any job (a gap shows).
  if (options.days > 0) {
    for (auto d = parse_day(first); d <= parse_day(data.today);
         d += std::chrono::days(1))
      data.dates.push_back(format_day(d));
  } else {
    data.dates.assign(dates.begin(), dates.end());
  }
  std::map<std::string, ReportSeries> durations;
  for (auto& [key, cell] : cells) {
    if (cell.duration_s) {
      auto& series = durations[cell.config];
      series.config = cell.config;
      series.name = "duration";
      series.points.push_back({cell.date, *cell.duration_s, "", ""});
    }
    data.cells.push_back(std::move(cell));
  }
  for (auto& [config, series] : durations)
    data.durations.push_back(std::move(series));

  std::map<std::pair<std::string, std::string>, ReportSeries> sizes;
  {
    detail::SqliteStmt s(db, R"sql(
      SELECT d.date, d.package_type, d.python, d.accelerator, a.name, a.size,
             d.key
      FROM artifacts a JOIN documents d ON d.key = a.doc_key
      WHERE d.date >= ?1 AND d.date <= ?2
      ORDER BY d.date, coalesce(d.start, ''), d.rowid)sql");
    s.bind(1, first);
    s.bind(2, data.today);
    while (s.step()) {
      std::string config = config_label(s.text(1), s.text(2), s.text(3));
      std::string artifact = s.text(4);
      std::string package = package_of(artifact);
      auto& series = sizes[{config, package}];
      series.config = config;
      series.name = package;
      ReportPoint p{s.text(0), static_cast<double>(s.integer(5)), s.text(6),
                    artifact};
      // One point per night: the night's latest document.
      if (!series.points.empty() && series.points.back().date == p.date)
        series.points.back() = std::move(p);
      else
        series.points.push_back(std::move(p));
    }
  }
  for (auto& [key, series] : sizes) data.sizes.push_back(std::move(series));
  find_size_regressions(db, data);
  find_status_regressions(data);
  return data;
}

std::string report_json(const ReportData& data, int indent) {
  using json = nlohmann::ordered_json;
  auto log = [](const std::optional<fs::path>& p) {
    return p ? json(p->string()) : json(nullptr);
  };
  json j;
  j["schema"] = "libpkg-nightly-report/1";
  j["today"] = data.today;
  j["size_threshold"] = data.size_threshold;
  j["dates"] = data.dates;
  j["configs"] = data.configs;
  j["cells"] = json::array();
  for (const auto& c : data.cells)
    j["cells"].push_back(
        {{"config", c.config},
         {"date", c.date},
         {"status", c.status},
         {"job", c.job},
         {"failure", c.failure},
         {"log", log(c.log)},
         {"duration_s", c.duration_s ? json(*c.duration_s) : json(nullptr)}});
  auto series = [](const std::vector<ReportSeries>& list, const char* field) {
    json out = json::array();
    for (const auto& s : list) {
      json points = json::array();
      for (const auto& p : s.points) {
        json point = {{"date", p.date}, {field, p.value}};
        if (!p.artifact.empty()) point["artifact"] = p.artifact;
        points.push_back(std::move(point));
      }
      out.push_back(
          {{"config", s.config}, {"name", s.name}, {"points", points}});
    }
    return out;
  };
  j["sizes"] = series(data.sizes, "size");
  j["durations"] = series(data.durations, "duration_s");
  json size_regressions = json::array();
  for (const auto& r : data.size_regressions) {
    json members = json::array();
    for (const auto& m : r.members)
      members.push_back({{"name", m.name},
                         {"old_size", m.old_size},
                         {"new_size", m.new_size}});
    size_regressions.push_back({{"config", r.config},
                                {"package", r.package},
                                {"old_date", r.old_date},
                                {"new_date", r.new_date},
                                {"old_artifact", r.old_artifact},
                                {"new_artifact", r.new_artifact},
                                {"old_size", r.old_size},
                                {"new_size", r.new_size},
                                {"growth", r.growth},
                                {"members", members}});
  }
  json status_regressions = json::array();
  for (const auto& r : data.status_regressions)
    status_regressions.push_back({{"config", r.config},
                                  {"old_date", r.old_date},
                                  {"old_status", r.old_status},
                                  {"status", r.status},
                                  {"failure", r.failure},
                                  {"log", log(r.log)}});
  j["regressions"] = {{"size", size_regressions},
                      {"status", status_regressions}};
  return j.dump(indent);
}

}  // namespace libpkg::nightly
