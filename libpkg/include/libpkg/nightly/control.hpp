// SPDX-License-Identifier: BSD-3-Clause
// What other processes do with a nightly while (or after) it runs:
// cancel a job, find and read its log, list the nightlies of a root.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "libpkg/nightly/layout.hpp"
#include "libpkg/nightly/state.hpp"

namespace libpkg::nightly {

/// Cancels one job. With a runner holding the nightly: leaves a request in
/// cancel/<job> that the runner acts on (stopping the job's process group,
/// or never starting a pending job). With none: a job still recorded
/// RUNNING (a crashed runner's child) gets its process group stopped and is
/// recorded CANCELLED. Errc::not_found for an unknown job; Errc::usage for a
/// finished one. Returns a one-line description of what was done.
std::string cancel_job(const Layout& layout, const std::string& job);

/// The job's log where it is now (running/, succeeded/ or failed/);
/// Errc::not_found naming the job when it has none yet.
std::filesystem::path find_log(const Layout& layout, const std::string& job);

/// The last `lines` lines of a file (all of them when lines is 0); throws
/// read_text_file's errors.
std::string tail_lines(const std::filesystem::path& file, std::size_t lines);

/// One nightly as `pkgtool nightly list` shows it: its job counts by state and
/// the pid of the runner holding it.
struct NightlyInfo {
  std::string date;
  std::size_t jobs = 0, succeeded = 0, failed = 0, cancelled = 0,
              unfinished = 0;
  long runner_pid = 0;  // 0: no runner holds it
};
/// The nightlies under `root`, oldest first; Errc::not_found when `root` is
/// not a directory.
std::vector<NightlyInfo> list_nightlies(const std::filesystem::path& root);

/// Retention (`--keep-days N`): deletes the nightly folders of `root` older
/// than N days before `today` (YYYY_MM_DD), never `today` itself, one whose
/// runner lock is held, or anything not named like a nightly. Returns the
/// folders deleted; Errc::io naming a folder that cannot be removed.
std::vector<std::filesystem::path> prune_nightlies(
    const std::filesystem::path& root, unsigned keep_days,
    const std::string& today);

}  // namespace libpkg::nightly
