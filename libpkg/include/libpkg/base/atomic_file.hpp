// SPDX-License-Identifier: BSD-3-Clause
// An output file that appears at its target path completely or not at all.
//
// Bytes go to a temporary file in the target's directory (so the final
// rename(2) is atomic on the same filesystem). `commit()` sets the mode and
// renames; if the object is destroyed first (an exception, a crash of the
// caller's logic) the temporary is removed and the target is untouched. The
// temporary is an unnamed O_TMPFILE inode where the filesystem allows, so a
// process killed mid-write leaves nothing behind; elsewhere a named
// `.NAME.libpkg-XXXXXX` file, registered with SignalCleanup while it exists
// (as is the name the unnamed inode gets for the instant before the final
// rename), so SIGINT/SIGTERM during a long write leave no temporary.
//
// Only a regular file (or nothing) at the target is ever replaced. An
// existing FIFO, character or block device or socket is written into on
// commit instead, as patchelf and cp do, so `--output /dev/null` stays a sink
// and never turns the device node into a regular file; a FIFO without a
// reader is refused rather than waited on. A directory is refused.
#pragma once

#include <filesystem>
#include <span>
#include <string>
#include <string_view>

#include "libpkg/base/integers.hpp"
#include "libpkg/base/signal_cleanup.hpp"

namespace libpkg {

/// Creates the directory outputs go to, with its parents, if missing; a
/// failure is Errc::io naming `dir` (not a std::filesystem_error).
void create_output_directory(const std::filesystem::path& dir);

/// Copies the file `from` (symlinks followed) to `to` through an AtomicFile,
/// in the kernel where possible (AtomicFile::copy_from). The copy gets the
/// source's permission bits plus `add_mode` (e.g. 0644 so a read-only
/// system library becomes editable). Returns the bytes copied. Throws
/// Errc::io naming the file that cannot be read or written.
u64 copy_file_atomically(const std::filesystem::path& from,
                         const std::filesystem::path& to,
                         unsigned add_mode = 0);

/// Writes `text` to `to` through an AtomicFile with permission bits `mode`.
/// Throws Errc::io naming `to` when it cannot be written.
void write_file_atomically(const std::filesystem::path& to,
                           std::string_view text, unsigned mode = 0644);

/// A file written under a temporary name and made visible at its target only by
/// commit(); destroyed uncommitted, it leaves the target untouched.
class AtomicFile {
 public:
  /// What happens to an existing regular file with several hard links.
  enum class Links {
    // Rename over it: this name gets a new inode, the others keep the old
    // bytes (the default for fresh outputs).
    replace,
    // Write the finished bytes into the existing inode on commit, so every
    // name sees the result (in-place edits, as patchelf does). Not atomic.
    keep,
  };

  /// Creates the temporary next to `target` (or, when the result is written
  /// into an existing non-regular file, in the temporary directory). `mode` is
  /// applied on commit to a file we create or replace, never to a device.
  static AtomicFile create(const std::filesystem::path& target,
                           unsigned mode = 0644, Links links = Links::replace);

  /// Takes over `other`'s temporary and target; `other` is left empty. Does not
  /// throw.
  AtomicFile(AtomicFile&& other) noexcept;
  AtomicFile& operator=(AtomicFile&&) = delete;
  AtomicFile(const AtomicFile&) = delete;
  ~AtomicFile();

  /// The descriptor of the temporary being written.
  int fd() const { return fd_; }
  /// True when commit writes into the existing target instead of renaming.
  bool writes_through() const { return sink_fd_ >= 0; }
  /// The path commit() makes the file visible at.
  const std::filesystem::path& target() const { return target_; }
  /// The temporary's name; empty while it is an unnamed O_TMPFILE inode.
  const std::filesystem::path& temp_path() const { return temp_; }

  /// Appends at the current write position.
  void write(std::span<const u8> bytes);
  void write(std::string_view s) {
    write({reinterpret_cast<const u8*>(s.data()), s.size()});
  }
  /// Writes at an absolute offset (does not move the write position).
  void pwrite(u64 offset, std::span<const u8> bytes);
  /// Copies `len` bytes from `src_fd` at `src_offset` to `dst_offset`, inside
  /// the kernel where possible (copy_file_range: no user-space buffer, and a
  /// reflink on filesystems that support it).
  void copy_from(int src_fd, u64 src_offset, u64 len, u64 dst_offset);
  /// Resizes the temporary to `size` bytes; throws Errc::io naming the target
  /// when ftruncate fails.
  void truncate(u64 size);

  /// Sets the permission bits applied on commit to a file we create or replace;
  /// does not throw.
  void set_mode(unsigned mode) { mode_ = mode; }
  /// Makes the file visible at the target path. Optionally fsyncs first.
  void commit(bool durable = false);

 private:
  AtomicFile() = default;
  static std::string temp_template(const std::filesystem::path& target);
  void discard() noexcept;
  void open_sink(bool regular);
  void open_scratch();
  void commit_through(bool durable);

  std::filesystem::path target_;
  std::filesystem::path temp_;
  SignalCleanup temp_cleanup_;  // covers temp_ while it names a file
  int fd_ = -1;
  int sink_fd_ = -1;  // the existing target, when written through
  bool sink_regular_ = false;
  unsigned mode_ = 0644;
  bool committed_ = false;
};

}  // namespace libpkg
