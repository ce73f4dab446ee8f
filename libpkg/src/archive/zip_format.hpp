// SPDX-License-Identifier: BSD-3-Clause
// On-disk zip structures (PKWARE APPNOTE 6.3.x, little-endian, unaligned).
// Shared by the reader and the writer; private to the archive layer.
#pragma once

#include "libpkg/base/integers.hpp"

namespace libpkg::archive::zipfmt {

inline constexpr u32 kLocalHeaderSig = 0x04034b50;
inline constexpr u32 kCentralHeaderSig = 0x02014b50;
inline constexpr u32 kEndSig = 0x06054b50;
inline constexpr u32 kZip64EndSig = 0x06064b50;
inline constexpr u32 kZip64LocatorSig = 0x07064b50;
inline constexpr u32 kDataDescriptorSig = 0x08074b50;

inline constexpr u16 kZip64ExtraId = 0x0001;
inline constexpr u16 kFlagEncrypted = 1u << 0;
inline constexpr u16 kFlagDataDescriptor = 1u << 3;
inline constexpr u16 kFlagUtf8 = 1u << 11;

// "version made by" high byte: host system. 3 = unix (external attributes
// carry st_mode << 16).
inline constexpr u16 kHostUnix = 3;
// "version needed to extract": 2.0 (deflate, directories), 4.5 (ZIP64).
inline constexpr u16 kVersionDeflate = 20;
inline constexpr u16 kVersionZip64 = 45;

inline constexpr u32 kMax32 = 0xffffffffu;
inline constexpr u16 kMax16 = 0xffffu;

struct LocalHeader {
  ul32 signature;
  ul16 version_needed;
  ul16 flags;
  ul16 method;
  ul16 mod_time;
  ul16 mod_date;
  ul32 crc32;
  ul32 compressed_size;
  ul32 uncompressed_size;
  ul16 name_length;
  ul16 extra_length;
};
static_assert(sizeof(LocalHeader) == 30);

struct CentralHeader {
  ul32 signature;
  ul16 version_made_by;
  ul16 version_needed;
  ul16 flags;
  ul16 method;
  ul16 mod_time;
  ul16 mod_date;
  ul32 crc32;
  ul32 compressed_size;
  ul32 uncompressed_size;
  ul16 name_length;
  ul16 extra_length;
  ul16 comment_length;
  ul16 disk_start;
  ul16 internal_attr;
  ul32 external_attr;
  ul32 local_header_offset;
};
static_assert(sizeof(CentralHeader) == 46);

struct EndRecord {
  ul32 signature;
  ul16 disk;
  ul16 cd_disk;
  ul16 disk_entries;
  ul16 total_entries;
  ul32 cd_size;
  ul32 cd_offset;
  ul16 comment_length;
};
static_assert(sizeof(EndRecord) == 22);

struct Zip64EndRecord {
  ul32 signature;
  ul64 record_size;  // size of the rest of this record (after this field)
  ul16 version_made_by;
  ul16 version_needed;
  ul32 disk;
  ul32 cd_disk;
  ul64 disk_entries;
  ul64 total_entries;
  ul64 cd_size;
  ul64 cd_offset;
};
static_assert(sizeof(Zip64EndRecord) == 56);

struct Zip64Locator {
  ul32 signature;
  ul32 end_disk;
  ul64 end_offset;
  ul32 total_disks;
};
static_assert(sizeof(Zip64Locator) == 20);

struct ExtraHeader {
  ul16 id;
  ul16 size;
};

// MS-DOS date/time (local time; we always treat it as UTC). Unix seconds are
// clipped to the representable range 1980-01-01 .. 2107-12-31.
struct DosTime {
  u16 time = 0;
  u16 date = 0;
};
DosTime to_dos_time(i64 unix_seconds);
i64 from_dos_time(u16 time, u16 date);

}  // namespace libpkg::archive::zipfmt
