// SPDX-License-Identifier: BSD-3-Clause
// A private scratch directory, removed with everything in it when the
// object goes away (also when an exception unwinds, and on SIGINT/SIGTERM
// through SignalCleanup), so a failed or interrupted run leaves nothing
// behind.
//
// A SIGKILL (or a power cut) cannot be handled, so leftovers are made
// recognisable and removed by the next run: the name is
// `<prefix>pid<PID>-XXXXXX` and the directory is flock()ed while in use (the
// kernel drops the lock when the process dies, whatever killed it). Creating
// a scratch directory removes every sibling with the same prefix and that
// marker which belongs to the same user and whose lock can be taken, i.e.
// whose owner is dead. The pid is for people reading `ls`; the lock is the
// proof (a pid can be reused, or belong to another pid namespace).
#pragma once

#include <filesystem>
#include <string>

#include "libpkg/base/signal_cleanup.hpp"

namespace libpkg {

/// A private temporary directory removed with its contents on destruction (and
/// on SIGINT/SIGTERM); its constructor throws Errc::io naming `parent` when
/// mkdtemp fails.
class ScratchDir {
 public:
  /// Creates `parent`/<prefix>pid<PID>-XXXXXX (mkdtemp: mode 0700, unique).
  explicit ScratchDir(const std::filesystem::path& parent,
                      const std::string& prefix = ".libpkg-");
  /// A scratch directory under the system's temporary directory ($TMPDIR
  /// or /tmp, as std::filesystem::temp_directory_path decides).
  static ScratchDir in_temp(const std::string& prefix = "libpkg-");
  ~ScratchDir();
  /// Takes over `other`'s directory, lock and cleanup; `other` owns nothing
  /// after.
  ScratchDir(ScratchDir&& other) noexcept;
  ScratchDir& operator=(ScratchDir&&) = delete;
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  /// The directory's path.
  const std::filesystem::path& path() const { return path_; }

  /// Keeps the directory (it was renamed into place): no longer removed,
  /// locked or covered by the signal handler.
  void release();

  /// Removes stale scratch directories `parent`/<prefix>pid<N>-XXXXXX whose
  /// owner is gone (done by the constructor; exposed for tests). Returns how
  /// many were removed.
  static int remove_stale(const std::filesystem::path& parent,
                          const std::string& prefix);

 private:
  std::filesystem::path path_;
  int lock_fd_ = -1;
  SignalCleanup cleanup_;
};

}  // namespace libpkg
