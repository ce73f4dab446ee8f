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

namespace libpkg {

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
  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&& other) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile();

  const std::string& name() const { return name_; }
  const u8* data() const { return data_; }
  u64 size() const { return size_; }
  /// The permission bits of the file when it was opened.
  unsigned mode() const { return mode_; }
  ByteView view() const { return ByteView({data_, size_}, name_); }
  ByteView slice(u64 offset, u64 size, std::string_view what) const {
    return view().slice(offset, size, what);
  }

 private:
  void reset();

  std::string name_;
  u8* data_ = nullptr;
  u64 size_ = 0;
  unsigned mode_ = 0644;
};

}  // namespace libpkg
