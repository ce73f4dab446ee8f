// SPDX-License-Identifier: BSD-3-Clause
// Room for the runner's own records on a full disk. A job that fills the
// nightly's filesystem would otherwise leave the runner unable to write the
// job's final state and document (the old cron lost logs that way): the
// runner holds a small file of allocated blocks for the whole run and
// deletes it the first time one of its writes fails for lack of space, then
// writes again.
#pragma once

#include <cstdint>
#include <filesystem>
#include <mutex>
#include <optional>

#include "libpkg/base/error.hpp"

namespace libpkg::nightly {

/// The reserve file: `bytes` allocated blocks at `file` (none when 0), removed
/// when the reserve is destroyed.
class DiskReserve {
 public:
  /// Allocates the file; Errc::io naming it ("cannot reserve N bytes for the
  /// runner's records: ...") when the filesystem has no room.
  DiskReserve(std::filesystem::path file, std::uint64_t bytes);
  ~DiskReserve();
  DiskReserve(const DiskReserve&) = delete;
  DiskReserve& operator=(const DiskReserve&) = delete;
  /// Deletes the file, freeing its blocks; true the first time (when there
  /// was something to free). Thread-safe; does not throw.
  bool release();
  /// The bytes release() freed: 0 while the reserve is held or when there
  /// was none. That room was the runner's, not the jobs', so a disk whose
  /// free space is about this much is still full for them. Thread-safe.
  std::uint64_t released_bytes();

 private:
  std::filesystem::path file_;
  std::uint64_t bytes_ = 0;
  bool held_ = false;
  bool released_ = false;
  std::mutex mu_;
};

/// True for an Error whose errno is ENOSPC or EDQUOT.
bool out_of_space(const Error& e);

/// Bytes this process may still write on the filesystem of `dir` (statvfs;
/// root may use the blocks reserved for it); nullopt when unknown.
std::optional<std::uint64_t> free_bytes(const std::filesystem::path& dir);

}  // namespace libpkg::nightly
