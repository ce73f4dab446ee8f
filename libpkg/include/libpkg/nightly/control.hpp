// SPDX-License-Identifier: BSD-3-Clause
// What other processes do with a nightly while (or after) it runs:
// cancel a job, find and read its log, list the nightlies of a root.
#pragma once

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "libpkg/nightly/layout.hpp"
#include "libpkg/nightly/runner.hpp"
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

/// Where the last `lines` lines of the first `size` bytes of the open file
/// `fd` begin: 0 when there are no more lines than that (or `lines` is 0, "all
/// of it"). A last line without a newline counts as a line; "\r\n" ends a
/// line like "\n". The file is read backwards from `size` in 64 KiB blocks,
/// so what is read is the tail itself plus at most one block, never the whole
/// file; `bytes_read`, when given, gets how much was. Throws an errno Error
/// naming `origin` when a read fails.
std::uint64_t tail_start(int fd, std::uint64_t size, std::size_t lines,
                         const std::string& origin,
                         std::uint64_t* bytes_read = nullptr);

/// Copies the bytes of `fd` from `offset` up to its current end to `out`
/// (streamed, 64 KiB at a time) and returns the offset after the last byte
/// copied. Throws an errno Error naming `origin` when a read or write fails.
std::uint64_t copy_to_end(int fd, std::uint64_t offset, std::FILE* out,
                          const std::string& origin);

/// The last `lines` lines of a file (all of it when lines is 0) as a string:
/// tail_start over the whole file, then the tail read. Throws an errno Error
/// naming `file` when it cannot be opened or read.
std::string tail_lines(const std::filesystem::path& file, std::size_t lines);

/// One nightly as `pkgtool nightly list` shows it: its job counts by state and
/// who holds its runner lock.
struct NightlyInfo {
  std::string date;
  std::size_t jobs = 0, succeeded = 0, failed = 0, cancelled = 0,
              unfinished = 0;
  LockHolder runner;  // who holds its runner lock
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
