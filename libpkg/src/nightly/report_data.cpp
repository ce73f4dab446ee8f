// SPDX-License-Identifier: BSD-3-Clause
#include "libpkg/nightly/report_data.hpp"

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <exception>
#include <functional>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>
#include <tuple>
#include <unordered_map>

#include "libpkg/base/error.hpp"
#include "libpkg/nightly/stats_document.hpp"

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

void find_size_regressions(StatsStore& store, ReportData& data) {
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
    auto old_members = largest_members(
        store.document_text(before.key).value_or(""), before.artifact);
    auto new_members = largest_members(
        store.document_text(now.key).value_or(""), now.artifact);
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
                         const std::string& accelerator,
                         const std::string& variant) {
  std::string out = package_type;
  auto add = [&](const std::string& part) {
    if (part.empty()) return;
    if (!out.empty()) out += ' ';
    out += part;
  };
  add(python.empty() ? "" : "py" + python);
  add(accelerator);
  add(variant);
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

namespace {

// `base / rest` as std::filesystem::path's operator/ spells it (an absolute
// `rest` replaces `base`), without building a path: the report joins 10^5.
std::string join_path(const std::string& base, const std::string& rest) {
  if (base.empty() || (!rest.empty() && rest.front() == '/')) return rest;
  if (base.back() == '/') return base + rest;
  return base + '/' + rest;
}

// Index of `label` in `labels`, added at the end when new.
std::size_t intern(std::unordered_map<std::string, std::size_t>& index,
                   std::vector<std::string>& labels, const std::string& label) {
  auto [it, added] = index.try_emplace(label, labels.size());
  if (added) labels.push_back(label);
  return it->second;
}

// StatsStore::for_each_document with `fn` called on a second thread: this
// thread reads (the engine's scan) while the other builds the report from
// the batch read before, so the two overlap (10^5 documents). The batches
// are reused, so copying a document into one allocates nothing once warm.
// `fn` sees the documents in order, one call at a time.
void scan_pipelined(StatsStore& store, const std::string& first,
                    const std::string& last,
                    const std::function<void(const StoredDocument&)>& fn) {
  constexpr std::size_t kBatch = 512;
  struct Batch {
    std::vector<StoredDocument> docs = std::vector<StoredDocument>(kBatch);
    std::size_t n = 0;
  };
  Batch batches[3];
  std::vector<Batch*> free_batches = {&batches[0], &batches[1], &batches[2]};
  std::deque<Batch*> ready;
  bool scanned = false;             // guarded by mutex
  std::atomic<bool> failed{false};  // fn threw: stop reading
  std::exception_ptr error;         // fn's exception
  std::mutex mutex;
  std::condition_variable changed;
  std::thread builder([&] {
    for (;;) {
      Batch* b;
      {
        std::unique_lock lock(mutex);
        changed.wait(lock, [&] { return scanned || !ready.empty(); });
        if (ready.empty()) return;
        b = ready.front();
        ready.pop_front();
      }
      try {
        for (std::size_t i = 0; i < b->n; ++i) fn(b->docs[i]);
      } catch (...) {
        std::lock_guard lock(mutex);
        error = std::current_exception();
        failed = true;
        changed.notify_all();
        return;
      }
      std::lock_guard lock(mutex);
      b->n = 0;
      free_batches.push_back(b);
      changed.notify_all();
    }
  });
  struct Stop {};  // thrown through the scan when fn failed
  auto hand_over = [&](Batch* b) {
    std::unique_lock lock(mutex);
    ready.push_back(b);
    changed.notify_all();
    changed.wait(lock, [&] { return failed || !free_batches.empty(); });
    if (failed) throw Stop{};
    Batch* next = free_batches.back();
    free_batches.pop_back();
    return next;
  };
  auto finish = [&] {
    {
      std::lock_guard lock(mutex);
      scanned = true;
    }
    changed.notify_all();
    builder.join();
  };
  Batch* current = nullptr;
  {
    std::lock_guard lock(mutex);
    current = free_batches.back();
    free_batches.pop_back();
  }
  try {
    store.for_each_document(first, last, [&](const StoredDocument& d) {
      if (failed) throw Stop{};
      current->docs[current->n++] = d;
      if (current->n == kBatch) current = hand_over(current);
    });
    if (current->n > 0) {
      std::lock_guard lock(mutex);
      ready.push_back(current);
    }
  } catch (const Stop&) {
  } catch (...) {
    finish();
    throw;
  }
  finish();
  if (error) std::rethrow_exception(error);
}

ReportData read_report(StatsStore& store, const ReportOptions& options) {
  ReportData data;
  data.size_threshold = options.size_threshold;
  data.today = options.today;
  if (data.today.empty()) data.today = store.latest_date().value_or("");
  if (data.today.empty()) return data;  // an empty store
  auto today = iso_date(data.today);
  if (!today)
    throw Error(Errc::usage, store.name(),
                "report date '" + data.today + "' is not YYYY-MM-DD");
  data.today = *today;
  std::string first = "0000-00-00";
  if (options.days > 0)
    first =
        format_day(parse_day(data.today) - std::chrono::days(options.days - 1));

  // Documents arrive in date order, so each row's cells and each series'
  // points are appended in date order: the night's latest document
  // replaces the last one of the same date. No map keyed by strings per
  // row (10^5 rows).
  //
  // A row is one configuration (its fields and variant) and one job name:
  // two jobs of one night never share a cell. The row's label is the
  // configuration's, and names the job only where two jobs have that label
  // (job files may give two jobs the same config), known after the scan.
  struct Row {
    std::size_t config;  // index in `labels`
    std::string job;
    std::vector<ReportCell> cells;
  };
  std::unordered_map<std::string, std::size_t> config_index, label_index,
      row_index, series_index;
  std::vector<std::string> labels;
  std::vector<std::size_t> jobs_per_label;
  std::vector<Row> rows;
  std::vector<ReportSeries> sizes;    // per row × package
  std::vector<std::size_t> size_row;  // each series' row
  std::vector<std::string> dates;     // ascending, the nights seen
  const std::string root = options.nightly_root.string();
  std::string fields, row_key, series_key;  // lookup keys, buffers reused
  scan_pipelined(store, first, data.today, [&](const StoredDocument& d) {
    // The configuration: looked up by its fields (no label built per
    // document), one per label (two field sets that read the same share
    // it).
    fields.clear();
    for (const std::string* f :
         {&d.package_type, &d.python, &d.accelerator, &d.variant})
      fields.append(std::to_string(f->size())).append(1, ':').append(*f);
    auto known = config_index.find(fields);
    if (known == config_index.end()) {
      std::size_t config = intern(
          label_index, labels,
          config_label(d.package_type, d.python, d.accelerator, d.variant));
      if (config == jobs_per_label.size()) jobs_per_label.push_back(0);
      known = config_index.emplace(fields, config).first;
    }
    const std::size_t config = known->second;
    row_key.assign(std::to_string(config)).append(1, ':').append(d.job);
    auto [at, added_row] = row_index.try_emplace(row_key, rows.size());
    if (added_row) {
      rows.push_back({config, d.job, {}});
      ++jobs_per_label[config];
    }
    const std::size_t row_number = at->second;
    if (dates.empty() || dates.back() != d.date) dates.push_back(d.date);
    auto& row = rows[row_number].cells;
    if (row.empty() || row.back().date != d.date) row.emplace_back();
    ReportCell& c = row.back();
    c.date = d.date;
    c.job = d.job;
    c.variant = d.variant;
    c.status = d.status;
    c.failure = d.failure;
    if (d.log)
      c.log = join_path(join_path(root, nightly_dir(d.date)), *d.log);
    else
      c.log.reset();
    c.duration_s = d.duration_s;
    for (const StatsArtifact& a : d.artifacts) {
      std::string package = package_of(a.name);
      series_key.assign(std::to_string(row_number))
          .append(1, ':')
          .append(package);
      auto [it, added] = series_index.try_emplace(series_key, sizes.size());
      if (added) {
        sizes.push_back({"", std::move(package), {}});
        size_row.push_back(row_number);
      }
      auto& points = sizes[it->second].points;
      ReportPoint p{d.date, static_cast<double>(a.size), d.key, a.name};
      // One point per night: the night's latest document.
      if (!points.empty() && points.back().date == p.date)
        points.back() = std::move(p);
      else
        points.push_back(std::move(p));
    }
  });

  // Each row's label: its configuration's, then the job where another job
  // has the same configuration ("libtorch cpu (libtorch-a)"). Rows sorted
  // by label; their cells by date already.
  std::vector<std::string> row_labels;
  row_labels.reserve(rows.size());
  for (const Row& r : rows)
    row_labels.push_back(jobs_per_label[r.config] > 1
                             ? labels[r.config] + " (" + r.job + ")"
                             : labels[r.config]);
  std::vector<std::size_t> order(rows.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return row_labels[a] < row_labels[b];
  });
  for (std::size_t i : order) {
    data.configs.push_back(row_labels[i]);
    ReportSeries durations{row_labels[i], "duration", {}};
    for (ReportCell& cell : rows[i].cells) {
      cell.config = row_labels[i];
      if (cell.duration_s)
        durations.points.push_back({cell.date, *cell.duration_s, "", ""});
      data.cells.push_back(std::move(cell));
    }
    if (!durations.points.empty())
      data.durations.push_back(std::move(durations));
  }
  for (std::size_t i = 0; i < sizes.size(); ++i)
    sizes[i].config = row_labels[size_row[i]];
  // Every night of the window, also those without any job (a gap shows).
  if (options.days > 0) {
    for (auto d = parse_day(first); d <= parse_day(data.today);
         d += std::chrono::days(1))
      data.dates.push_back(format_day(d));
  } else {
    data.dates = std::move(dates);
  }
  std::sort(sizes.begin(), sizes.end(), [](const auto& a, const auto& b) {
    return std::tie(a.config, a.name) < std::tie(b.config, b.name);
  });
  data.sizes = std::move(sizes);
  find_size_regressions(store, data);
  find_status_regressions(data);
  return data;
}

}  // namespace

ReportData build_report(StatsStore& store, const ReportOptions& options) {
  ReportData data;
  store.read_snapshot([&] { data = read_report(store, options); });
  return data;
}

std::string report_json(const ReportData& data, int indent) {
  using json = nlohmann::ordered_json;
  auto log = [](const std::optional<std::string>& p) {
    return p ? json(*p) : json(nullptr);
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
         {"variant", c.variant},
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
