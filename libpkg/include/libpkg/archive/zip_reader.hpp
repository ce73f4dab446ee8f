// SPDX-License-Identifier: BSD-3-Clause
// Zip archive reader (APPNOTE 6.3.x subset used by wheels and .conda files).
//
// The archive is mmap'd; the central directory is parsed and validated up
// front (ZIP64 end records and extra fields, bounds, overlapping members,
// duplicate names, limits), so every later access works on checked entries.
// Members are read through a streaming decompressor that checks the size and
// CRC-32, or as raw compressed bytes that the writer can copy verbatim.
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "libpkg/base/callbacks.hpp"
#include "libpkg/base/integers.hpp"
#include "libpkg/base/mapped_file.hpp"

namespace libpkg::archive {

/// The compression methods the reader inflates; others are refused as
/// Errc::unsupported.
enum class ZipMethod : u16 { stored = 0, deflated = 8 };

/// One central-directory entry as the reader validated it.
struct ZipEntry {
  std::string name;
  u16 method = 0;
  u16 flags = 0;  // general purpose bit flag
  u16 version_made_by = 0;
  u16 dos_time = 0;
  u16 dos_date = 0;
  u32 crc32 = 0;
  u32 external_attr = 0;
  u64 compressed_size = 0;
  u64 uncompressed_size = 0;
  u64 local_header_offset = 0;
  u64 data_offset = 0;  // first byte of the compressed data

  /// st_mode from the external attributes when the entry was made on unix
  /// (made-by host 3), otherwise 0.
  /// Never throws.
  unsigned unix_mode() const;
  /// True when the name ends in '/' or the unix mode is S_IFDIR; never throws.
  bool is_directory() const;  // name ends in '/' or S_IFDIR
  /// True when the unix mode is S_IFLNK; never throws.
  bool is_symlink() const;  // S_IFLNK in the unix mode
  /// Seconds since the epoch from the DOS date/time (local time = UTC).
  /// Never throws.
  i64 mtime() const;
};

/// Bounds applied while reading untrusted archives (zip bombs, resource use).
struct ZipLimits {
  u64 max_entries = 1u << 20;
  u64 max_total_uncompressed = u64{64} << 30;  // sum of declared sizes
  u64 max_entry_uncompressed = u64{16} << 30;
  // Declared uncompressed / compressed, checked for members above 1 MiB.
  u64 max_ratio = 1100;
  u64 max_name_length = 4096;
  // Largest member read_all()/read_text() hold in memory (metadata files,
  // symlink targets): anything an input can size must be bounded, and a
  // member bigger than this is streamed by the callers that need it.
  u64 max_in_memory = u64{256} << 20;
};

/// A validated, read-only view of a zip archive (mapped file or bytes); const
/// members are safe to call from many threads.
class ZipReader {
 public:
  /// Opens and validates `path`; throws Errc::format naming the file, the
  /// structure and the offset on anything malformed or beyond `limits`.
  /// Failing to open or map the file (absent, not a regular file) is Errc::io.
  static ZipReader open(const std::filesystem::path& path,
                        const ZipLimits& limits = {});
  /// Same, over bytes held in memory (fuzzers, tests, nested archives);
  /// `name` stands for the file in error messages.
  static ZipReader from_bytes(std::vector<u8> bytes, std::string name,
                              const ZipLimits& limits = {});

  /// The archive's name in error messages (its path, or from_bytes' `name`).
  const std::string& name() const { return name_; }
  /// The path open() was given; empty for from_bytes() readers.
  const std::filesystem::path& path() const { return path_; }
  /// The descriptor the archive was mapped from (closed when the last holder
  /// lets go): raw copies (ZipWriter::add_raw) read from it with
  /// copy_file_range, so they copy this archive's bytes even if another file
  /// is renamed over path() meanwhile. Null for from_bytes() readers.
  const std::shared_ptr<const int>& descriptor() const { return fd_; }
  /// Entries in central-directory order.
  const std::vector<ZipEntry>& entries() const { return entries_; }
  /// nullptr when absent.
  /// Never throws.
  const ZipEntry* find(std::string_view name) const;
  /// The limits the archive was validated against.
  const ZipLimits& limits() const { return limits_; }
  /// The archive's size in bytes.
  u64 file_size() const { return data_.size(); }

  /// The compressed bytes of `entry`, zero-copy.
  /// Throws Errc::format when a caller-built `entry` lies outside the archive.
  std::span<const u8> raw(const ZipEntry& entry) const;

  /// Decompresses `entry`, calling `sink` with consecutive pieces (each at
  /// most a few hundred KiB). Throws Errc::format "ARCHIVE: MEMBER: ..." when
  /// the data is corrupt, longer or shorter than declared, or fails its CRC.
  /// Throws Errc::unsupported for a method other than stored and deflated.
  void read(const ZipEntry& entry, const ByteSinkFn& sink) const;
  /// The whole decompressed content; refused (Errc::format naming the archive
  /// and member) when the declared size exceeds limits().max_in_memory.
  /// Also throws as read() does.
  std::vector<u8> read_all(const ZipEntry& entry) const;
  /// As read_all(), as a string; throws as read_all() does.
  std::string read_text(const ZipEntry& entry) const;
  /// The first min(n, size) bytes of a member, decompressing only as much as
  /// needed (to sniff file types, e.g. ELF magic, without inflating a GB
  /// library). No CRC check: the member is not read to its end.
  /// Throws Errc::unsupported for a method other than stored and deflated,
  /// Errc::format for corrupt deflate data.
  std::vector<u8> read_prefix(const ZipEntry& entry, std::size_t n) const;

 private:
  void check_fits_in_memory(const ZipEntry& entry) const;
  // Parses and validates the central directory of data_.
  void load();

  std::filesystem::path path_;
  MappedFile file_;
  std::shared_ptr<const int> fd_;  // open(): the mapping's file
  std::string name_;
  std::vector<u8> owned_;     // from_bytes only
  std::span<const u8> data_;  // the mapping or owned_
  ZipLimits limits_;
  std::vector<ZipEntry> entries_;
  std::unordered_map<std::string_view, std::size_t> by_name_;
};

}  // namespace libpkg::archive
