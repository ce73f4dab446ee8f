// SPDX-License-Identifier: BSD-3-Clause
// Inputs and independent checks for the zip writer tests.
#pragma once

#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "libpkg/base/integers.hpp"

namespace writer_test {

using libpkg::u32;
using libpkg::u64;
using libpkg::u8;

// A fresh directory under $TMPDIR, removed with its contents.
class TempDir {
 public:
  TempDir();
  // Under `parent` instead of $TMPDIR.
  explicit TempDir(const std::filesystem::path& parent);
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& name) const {
    return path_ / name;
  }

 private:
  std::filesystem::path path_;
};

std::vector<u8> random_bytes(u64 size, u32 seed);
std::vector<u8> zero_bytes(u64 size);
// Compressible but not trivial: lines of words and numbers.
std::vector<u8> text_bytes(u64 size);
// `size` bytes of real machine code: system ELF files (libc, /usr/bin/*)
// concatenated and cut to size.
std::vector<u8> elf_bytes(u64 size);

std::vector<u8> read_file(const std::filesystem::path& path);
void write_file(const std::filesystem::path& path, std::span<const u8> bytes);
// write_file(), then waits until the file's times are more than two seconds
// old (ctime cannot be set by hand), so that facts about its content may be
// memoized (archive/file_state.hpp). Returns `path`.
std::filesystem::path settled_file(const std::filesystem::path& path,
                                   std::span<const u8> bytes);

// Independent of the writer: zlib raw inflate of a whole deflate stream;
// fails the test (ADD_FAILURE) and returns what it got on a bad stream.
std::vector<u8> zlib_inflate_raw(std::span<const u8> deflated);
u32 zlib_crc32(std::span<const u8> bytes);

}  // namespace writer_test
