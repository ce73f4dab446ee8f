// SPDX-License-Identifier: BSD-3-Clause
// Encoding of the zip records the writer emits (APPNOTE 6.3.x 4.3.7, 4.3.12,
// 4.3.14-16, 4.5.3). Private to the archive layer.
//
// ZIP64 policy, chosen so that the local and the central header of a member
// always agree (the bug behind wheel#692 / pytorch#189903 was a local ZIP64
// extra that readers could not reconcile with the rest of the archive):
// - A member either uses ZIP64 sizes or not, decided before its data is
//   written (from its uncompressed size with a margin for deflate expansion,
//   or forced). Such a member has 0xFFFFFFFF in both 32-bit size fields of
//   BOTH headers and a ZIP64 extra carrying both sizes (4.5.3: in the local
//   header both sizes must be present).
// - The central ZIP64 extra additionally carries the local header offset
//   when that offset does not fit in 32 bits (field set to 0xFFFFFFFF).
// - "version needed" is 4.5 exactly in headers that carry a ZIP64 extra.
#pragma once

#include <string>
#include <vector>

#include "archive/zip_format.hpp"
#include "libpkg/archive/zip_reader.hpp"
#include "libpkg/base/integers.hpp"

namespace libpkg::archive {

struct MemberRecord {
  std::string name;
  u16 flags = 0;
  u16 method = 0;
  zipfmt::DosTime time;
  u32 crc32 = 0;
  u64 compressed_size = 0;
  u64 uncompressed_size = 0;
  bool zip64_sizes = false;
  u32 external_attr = 0;
  u64 local_header_offset = 0;
  // Written to the central header only (restart_index.hpp): readers that
  // do not know the field skip it, and the local header's length stays a
  // function of the name and zip64_sizes.
  std::vector<RestartPoint> restart_points;
};

// The local header (with name and, for zip64_sizes, the ZIP64 extra). Its
// length depends only on the name and zip64_sizes, so a placeholder can be
// written first and overwritten in place once CRC and sizes are known.
std::vector<u8> encode_local_header(const MemberRecord& m);
// Appends the member's central directory header to `out` (ZIP64 extra
// first when needed, then the restart-point index when there are points).
void append_central_header(const MemberRecord& m, std::vector<u8>& out);
// ZIP64 end record + locator (when needed or forced) and the end record.
std::vector<u8> encode_end_records(u64 entries, u64 cd_offset, u64 cd_size,
                                   bool force_zip64);

}  // namespace libpkg::archive
