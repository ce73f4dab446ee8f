// SPDX-License-Identifier: BSD-3-Clause
// What the nightly report shows, read from the stats store: the status grid
// (configurations × nights), artifact sizes and job durations over time,
// and the latest night's regressions. report_html.hpp renders it as one
// self-contained page; report_json() is the same data for scripts.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "libpkg/base/integers.hpp"
#include "libpkg/nightly/stats_store.hpp"

namespace libpkg::nightly {

struct ReportOptions {
  int days = 30;      // nights shown, ending at `today`; 0: all
  std::string today;  // YYYY-MM-DD; empty: the latest date in the store
  double size_threshold = 0.05;  // growth over the previous night flagged
  // Where logs are: <nightly_root>/<YYYY_MM_DD>/<document's log>.
  std::filesystem::path nightly_root;
};

// One configuration on one night (the latest document of that pair).
struct ReportCell {
  std::string config, date, status, job, failure;
  std::optional<std::filesystem::path> log;  // absolute
  std::optional<double> duration_s;
};

struct ReportPoint {
  std::string date;
  double value = 0;
  std::string key;       // the document
  std::string artifact;  // sizes: the artifact's file name
};

struct ReportSeries {
  std::string config, name;  // name: the package (sizes) or "duration"
  std::vector<ReportPoint> points;
};

struct MemberGrowth {
  std::string name;
  u64 old_size = 0, new_size = 0;
};

struct SizeRegression {
  std::string config, package, old_date, new_date, old_artifact, new_artifact;
  u64 old_size = 0, new_size = 0;
  double growth = 0;  // new/old - 1
  // From the documents' largest_members: which members grew most.
  std::vector<MemberGrowth> members;
};

struct StatusRegression {
  std::string config, old_date, old_status, status, failure;
  std::optional<std::filesystem::path> log;
};

struct ReportData {
  std::string today;
  double size_threshold = 0;
  std::vector<std::string> dates;       // ascending, every night of the window
  std::vector<std::string> configs;     // sorted labels
  std::vector<ReportCell> cells;        // by config then date
  std::vector<ReportSeries> sizes;      // per configuration and package
  std::vector<ReportSeries> durations;  // per configuration
  std::vector<SizeRegression> size_regressions;
  std::vector<StatusRegression> status_regressions;
};

// "manywheel py3.11 cu124": the configuration's label.
std::string config_label(const std::string& package_type,
                         const std::string& python,
                         const std::string& accelerator);
// The package an artifact belongs to across nightlies (its name without
// version): "torch.whl", "pytorch.tar.bz2", "libtorch-cxx11-abi-….zip".
std::string package_of(const std::string& artifact);

ReportData build_report(StatsStore& store, const ReportOptions& options);
std::string report_json(const ReportData& data, int indent = 2);

}  // namespace libpkg::nightly
