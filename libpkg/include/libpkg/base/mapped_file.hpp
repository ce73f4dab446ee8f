// SPDX-License-Identifier: BSD-3-Clause
// A read-only memory map of a whole file.
//
// Parsing GB-sized libraries must only touch the pages it reads, so inputs
// are mmap'd, never read into memory. The map is private and read-only: the
// input file is never modified through it.
#pragma once

#include <filesystem>
#include <string>

#include "libpkg/base/bytes.hpp"
#include "libpkg/base/fd.hpp"

namespace libpkg {

/// A read-only memory mapping of a whole regular file (private, never written
/// through).
class MappedFile {
 public:
  /// Maps `path`; throws Errc::io if it cannot be opened or is not a regular
  /// file. An empty file maps to an empty view. With `keep_fd`, the
  /// descriptor the mapping was made from is handed to the caller (who closes
  /// it) instead of closed: the same inode as the mapping, whatever is
  /// renamed over `path` later.
  static MappedFile open(const std::filesystem::path& path,
                         int* keep_fd = nullptr);

  MappedFile() = default;
  /// Takes over `other`'s mapping; `other` becomes empty.
  MappedFile(MappedFile&& other) noexcept;
  /// Unmaps the held mapping and takes over `other`'s.
  MappedFile& operator=(MappedFile&& other) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile();

  /// The path the file was opened as, for error messages.
  const std::string& name() const { return name_; }
  /// The first mapped byte; null for an empty file.
  const u8* data() const { return data_; }
  /// The file's size in bytes.
  u64 size() const { return size_; }
  /// The permission bits of the file when it was opened.
  unsigned mode() const { return mode_; }
  /// Opens the mapped file again by its name for reading (a descriptor for
  /// copy_file_range and holes, which the mapping cannot give), only if the
  /// name still leads to the same file (device and inode) with the same
  /// size. Throws Errc::io naming it when it cannot be opened or another
  /// file sits at the name now: its bytes are not the ones that were read.
  Fd reopen() const;
  /// A ByteView of the whole mapping, named after the file.
  ByteView view() const { return ByteView({data_, size_}, name_); }
  /// ByteView::slice of the whole mapping; throws Errc::format naming `what`
  /// when the range is out of bounds.
  ByteView slice(u64 offset, u64 size, std::string_view what) const {
    return view().slice(offset, size, what);
  }

 private:
  void reset();

  std::string name_;
  u8* data_ = nullptr;
  u64 size_ = 0;
  unsigned mode_ = 0644;
  u64 dev_ = 0, ino_ = 0;  // the file mapped, for reopen()
};

}  // namespace libpkg
