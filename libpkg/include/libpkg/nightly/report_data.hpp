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

/// What build_report shows: the window of nights, the report date, the
/// size-growth threshold and where logs are.
struct ReportOptions {
  int days = 30;      // nights shown, ending at `today`; 0: all
  std::string today;  // YYYY-MM-DD; empty: the latest date in the store
  double size_threshold = 0.05;  // growth over the previous night flagged
  // Where logs are: <nightly_root>/<YYYY_MM_DD>/<document's log>.
  std::filesystem::path nightly_root;
};

/// One configuration and job on one night (the latest document of that
/// pair).
struct ReportCell {
  // config: the row's label (config_label, then " (job)" where two jobs
  // share that label); variant: StatsRow::variant.
  std::string config, date, status, job, failure, variant;
  // <nightly_root>/<YYYY_MM_DD>/<the document's log>, joined as
  // std::filesystem::path's operator/ joins (a string: 10^5 of them).
  std::optional<std::string> log;
  std::optional<double> duration_s;
};

/// One value of a series on one night, with the document (and artifact) it came
/// from.
struct ReportPoint {
  std::string date;
  double value = 0;
  std::string key;       // the document
  std::string artifact;  // sizes: the artifact's file name
};

/// A time series of one configuration: a package's artifact size or the job
/// duration.
struct ReportSeries {
  std::string config, name;  // name: the package (sizes) or "duration"
  std::vector<ReportPoint> points;
};

/// One archive member's size on the two nights of a size regression.
struct MemberGrowth {
  std::string name;
  u64 old_size = 0, new_size = 0;
};

/// A package that grew more than the threshold from one night to the next.
struct SizeRegression {
  std::string config, package, old_date, new_date, old_artifact, new_artifact;
  u64 old_size = 0, new_size = 0;
  double growth = 0;  // new/old - 1
  // From the documents' largest_members: which members grew most.
  std::vector<MemberGrowth> members;
};

/// A configuration FAILED on the report date that SUCCEEDED on its previous
/// night.
struct StatusRegression {
  std::string config, old_date, old_status, status, failure;
  std::optional<std::string> log;  // as ReportCell's
};

/// Everything the report shows, as build_report computes it.
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

/// "manywheel py3.11 cu124", "libtorch cpu shared-with-deps cxx11 linux
/// x86_64": the configuration's label, the variant (StatsRow::variant)
/// last when not empty.
std::string config_label(const std::string& package_type,
                         const std::string& python,
                         const std::string& accelerator,
                         const std::string& variant = "");
/// The package an artifact belongs to across nightlies (its name without
/// version): "torch.whl", "pytorch.tar.bz2", "libtorch-cxx11-abi-….zip".
std::string package_of(const std::string& artifact);

/// Queries \p store for the window of \p options; Errc::usage when the report
/// date is not YYYY-MM-DD, and the store's errors.
ReportData build_report(StatsStore& store, const ReportOptions& options);
/// The report data as JSON text.
std::string report_json(const ReportData& data, int indent = 2);

}  // namespace libpkg::nightly
