// SPDX-License-Identifier: BSD-3-Clause
#include "archive/writer_records.hpp"

#include <cstring>

#include "archive/restart_index.hpp"

namespace libpkg::archive {
namespace {

using namespace zipfmt;

template <typename T>
void append_struct(std::vector<u8>& out, const T& value) {
  const auto* p = reinterpret_cast<const u8*>(&value);
  out.insert(out.end(), p, p + sizeof(T));
}

void append_u64(std::vector<u8>& out, u64 v) { append_struct(out, ul64(v)); }

void append_name(std::vector<u8>& out, const std::string& name) {
  out.insert(out.end(), name.begin(), name.end());
}

// The fields the local and the central header share; sizes go to the ZIP64
// extra field when they don't fit (0xffffffff here).
template <typename Header>
void fill_shared_fields(Header& h, const MemberRecord& m) {
  h.flags = m.flags;
  h.method = m.method;
  h.mod_time = m.time.time;
  h.mod_date = m.time.date;
  h.crc32 = m.crc32;
  h.compressed_size =
      m.zip64_sizes ? kMax32 : static_cast<u32>(m.compressed_size);
  h.uncompressed_size =
      m.zip64_sizes ? kMax32 : static_cast<u32>(m.uncompressed_size);
  h.name_length = static_cast<u16>(m.name.size());
}

}  // namespace

std::vector<u8> encode_local_header(const MemberRecord& m) {
  LocalHeader h{};
  h.signature = kLocalHeaderSig;
  h.version_needed = m.zip64_sizes ? kVersionZip64 : kVersionDeflate;
  fill_shared_fields(h, m);
  h.extra_length = m.zip64_sizes ? sizeof(ExtraHeader) + 16 : 0;
  std::vector<u8> out;
  out.reserve(sizeof h + m.name.size() + h.extra_length);
  append_struct(out, h);
  append_name(out, m.name);
  if (m.zip64_sizes) {
    append_struct(out, ExtraHeader{kZip64ExtraId, 16});
    append_u64(out, m.uncompressed_size);
    append_u64(out, m.compressed_size);
  }
  return out;
}

void append_central_header(const MemberRecord& m, std::vector<u8>& out) {
  const bool zip64_offset = m.local_header_offset >= kMax32;
  const u16 extra_data =
      static_cast<u16>((m.zip64_sizes ? 16 : 0) + (zip64_offset ? 8 : 0));
  const bool zip64 = extra_data != 0;
  const std::vector<u8> restart = encode_restart_extra(m.restart_points);
  CentralHeader h{};
  h.signature = kCentralHeaderSig;
  h.version_made_by = static_cast<u16>(
      (kHostUnix << 8) | (zip64 ? kVersionZip64 : kVersionDeflate));
  h.version_needed = zip64 ? kVersionZip64 : kVersionDeflate;
  fill_shared_fields(h, m);
  h.extra_length = static_cast<u16>(
      (zip64 ? sizeof(ExtraHeader) + extra_data : 0) + restart.size());
  h.external_attr = m.external_attr;
  h.local_header_offset =
      zip64_offset ? kMax32 : static_cast<u32>(m.local_header_offset);
  append_struct(out, h);
  append_name(out, m.name);
  if (zip64) {
    // Fields appear in APPNOTE order, each only if its header field is
    // 0xFFFFFFFF: uncompressed size, compressed size, local header offset.
    append_struct(out, ExtraHeader{kZip64ExtraId, extra_data});
    if (m.zip64_sizes) {
      append_u64(out, m.uncompressed_size);
      append_u64(out, m.compressed_size);
    }
    if (zip64_offset) append_u64(out, m.local_header_offset);
  }
  out.insert(out.end(), restart.begin(), restart.end());
}

std::vector<u8> encode_end_records(u64 entries, u64 cd_offset, u64 cd_size,
                                   bool force_zip64) {
  const bool zip64 = force_zip64 || entries >= kMax16 || cd_offset >= kMax32 ||
                     cd_size >= kMax32;
  std::vector<u8> out;
  if (zip64) {
    const u64 zip64_end_offset = cd_offset + cd_size;
    Zip64EndRecord e{};
    e.signature = kZip64EndSig;
    e.record_size = sizeof(Zip64EndRecord) - 12;
    e.version_made_by = (kHostUnix << 8) | kVersionZip64;
    e.version_needed = kVersionZip64;
    e.disk = 0;
    e.cd_disk = 0;
    e.disk_entries = entries;
    e.total_entries = entries;
    e.cd_size = cd_size;
    e.cd_offset = cd_offset;
    append_struct(out, e);
    Zip64Locator l{};
    l.signature = kZip64LocatorSig;
    l.end_disk = 0;
    l.end_offset = zip64_end_offset;
    l.total_disks = 1;
    append_struct(out, l);
  }
  EndRecord r{};
  r.signature = kEndSig;
  r.disk_entries = static_cast<u16>(entries >= kMax16 ? kMax16 : entries);
  r.total_entries = r.disk_entries;
  r.cd_size = static_cast<u32>(cd_size >= kMax32 ? kMax32 : cd_size);
  r.cd_offset = static_cast<u32>(cd_offset >= kMax32 ? kMax32 : cd_offset);
  r.comment_length = 0;
  append_struct(out, r);
  return out;
}

}  // namespace libpkg::archive
