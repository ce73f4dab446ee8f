// SPDX-License-Identifier: BSD-3-Clause
// Where everything of one nightly lives: `<root>/<YYYY_MM_DD>/` holding
//   logs/{running,succeeded,failed}/<job>.log   the live log, moved at the end
//   state/<job>.json      the job's state, replaced atomically on each change
//   jobs/<job>.json       the job's `libpkg-job/1` document (docs/nightly.md)
//   summaries/<job>.json  a driver's `--json` summary, when the job wrote one
//   cancel/<job>          a cancel request from another process
//   jobs.json             the job list of this nightly (for --resume)
//   runner.lock           flock'ed by the one runner, holding its pid
//   .runner.reserve       space held back for the runner's records (a run)
//   <artifact dirs>       what the jobs produce
#pragma once

#include <filesystem>
#include <string>

namespace libpkg::nightly {

/// Today's date in UTC as YYYY_MM_DD (the cron used local time: a bug).
std::string today_utc();
/// Accepts YYYY_MM_DD, YYYY-MM-DD and YYYYMMDD for a real calendar day and
/// returns YYYY_MM_DD; Errc::usage naming the text otherwise.
std::string normalize_date(const std::string& text);
/// True for a folder name that is a nightly date (YYYY_MM_DD).
bool is_nightly_name(const std::string& name);

/// The paths of one nightly's files (see above) under <root>/<date>.
struct Layout {
  std::filesystem::path dir;  // <root>/<date>
  std::string date;

  /// The layout of \p date (normalized, see normalize_date) under \p root made
  /// absolute; throws normalize_date's Errc::usage.
  Layout(const std::filesystem::path& root, const std::string& date);
  /// logs/running/<job>.log
  std::filesystem::path running_log(const std::string& job) const;
  /// logs/succeeded/<job>.log
  std::filesystem::path succeeded_log(const std::string& job) const;
  /// logs/failed/<job>.log
  std::filesystem::path failed_log(const std::string& job) const;
  /// state/<job>.json
  std::filesystem::path state_file(const std::string& job) const;
  /// jobs/<job>.json, the job's `libpkg-job/1` document.
  std::filesystem::path job_document(const std::string& job) const;
  /// summaries/<job>.json
  std::filesystem::path summary_file(const std::string& job) const;
  /// cancel/<job>
  std::filesystem::path cancel_request(const std::string& job) const;
  /// jobs.json
  std::filesystem::path jobs_file() const { return dir / "jobs.json"; }
  /// runner.lock
  std::filesystem::path lock_file() const { return dir / "runner.lock"; }
  /// Creates the folders; Errc::io naming the folder that can't be made.
  void create() const;
};

}  // namespace libpkg::nightly
