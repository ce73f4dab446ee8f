// SPDX-License-Identifier: BSD-3-Clause
#include "archive/reader_central.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "archive/restart_index.hpp"
#include "archive/zip_format.hpp"
#include "libpkg/base/error.hpp"

namespace libpkg::archive::reader {
namespace {

using namespace zipfmt;

constexpr u64 kMaxComment = 0xffff;
constexpr u64 kRatioFloor = u64{1} << 20;  // ratio checked above 1 MiB

[[noreturn]] void fail(const ByteView& file, u64 offset,
                       const std::string& message) {
  throw_format(file.name(), offset, message);
}

// Member refusals name the central directory entry (1-based, in directory
// order) and the member: "central directory entry 12 (lib/x.so): ...".
std::string entry_label(u64 index, std::string_view member) {
  return fmt::format("central directory entry {} ({})", index,
                     printable_name(member));
}

[[noreturn]] void fail_member(const ByteView& file, const std::string& label,
                              u64 offset, const std::string& message) {
  throw_format(file.name(), offset, fmt::format("{}: {}", label, message));
}

// The end record is the last signature whose comment exactly reaches the end
// of the file; a comment may itself contain the signature bytes, so the
// exact-length match is preferred over the last occurrence.
u64 find_end_record(const ByteView& file) {
  const u64 size = file.size();
  if (size < sizeof(EndRecord))
    fail(file, 0,
         fmt::format("not a zip archive: {} bytes is shorter than an end of "
                     "central directory record",
                     size));
  const u64 last = size - sizeof(EndRecord);
  const u64 first = last > kMaxComment ? last - kMaxComment : 0;
  std::optional<u64> fallback;
  for (u64 pos = last + 1; pos-- > first;) {
    const u8* p = file.data() + pos;
    if (p[0] != 0x50 || p[1] != 0x4b || p[2] != 0x05 || p[3] != 0x06) continue;
    const auto& end = file.at<EndRecord>(pos, "end of central directory");
    u64 comment_end = pos + sizeof(EndRecord) + end.comment_length;
    if (comment_end == size) return pos;
    if (comment_end < size && !fallback) fallback = pos;
  }
  if (fallback) return *fallback;
  fail(file, first,
       "not a zip archive: no end of central directory record in the last "
       "64 KiB");
}

}  // namespace

std::string printable_name(std::string_view name) {
  std::string out;
  for (char c : name) {
    auto b = static_cast<unsigned char>(c);
    if (b < 0x20 || b == 0x7f)
      out += fmt::format("\\x{:02x}", b);
    else
      out += c;
  }
  return out;
}

std::string method_name(u16 method) {
  switch (method) {
    case 0:
      return "stored";
    case 8:
      return "deflated";
    case 9:
      return "deflate64";
    case 12:
      return "bzip2";
    case 14:
      return "lzma";
    case 93:
      return "zstd";
    case 95:
      return "xz";
    case 98:
      return "ppmd";
    case 99:
      return "AES-encrypted";
    default:
      return fmt::format("method {}", method);
  }
}

CentralDirectoryLocation locate_central_directory(const ByteView& file) {
  const u64 end_pos = find_end_record(file);
  const auto& end = file.at<EndRecord>(end_pos, "end of central directory");
  if (end.disk != 0 || end.cd_disk != 0)
    throw Error(Errc::unsupported, file.name(),
                "multi-disk (split) zip archives are not supported", end_pos);
  if (end.disk_entries != end.total_entries)
    fail(file, end_pos,
         fmt::format("end of central directory: {} entries on this disk but "
                     "{} in total",
                     u16(end.disk_entries), u16(end.total_entries)));

  CentralDirectoryLocation where;
  where.offset = end.cd_offset;
  where.size = end.cd_size;
  where.entries = end.total_entries;
  where.end_records = end_pos;

  // ZIP64: the locator sits immediately before the classic end record.
  if (end_pos >= sizeof(Zip64Locator)) {
    const u64 loc_pos = end_pos - sizeof(Zip64Locator);
    const auto& loc = file.at<Zip64Locator>(loc_pos, "ZIP64 locator");
    if (loc.signature == kZip64LocatorSig) {
      if (loc.end_disk != 0 || loc.total_disks > 1)
        throw Error(Errc::unsupported, file.name(),
                    "multi-disk (split) ZIP64 archives are not supported",
                    loc_pos);
      const u64 z_pos = loc.end_offset;
      if (z_pos > loc_pos || loc_pos - z_pos < sizeof(Zip64EndRecord))
        fail(file, loc_pos,
             fmt::format("ZIP64 locator points to 0x{:x}, which leaves no "
                         "room for the ZIP64 end record before the locator",
                         z_pos));
      const auto& z = file.at<Zip64EndRecord>(z_pos, "ZIP64 end record");
      if (z.signature != kZip64EndSig)
        fail(file, z_pos,
             fmt::format("bad ZIP64 end record signature 0x{:08x}",
                         u32(z.signature)));
      // record_size counts the bytes after itself (44 for version 1).
      const u64 record_end = checked_add(z_pos + 12, z.record_size, file.name(),
                                         "ZIP64 end record size", z_pos);
      if (z.record_size < sizeof(Zip64EndRecord) - 12 || record_end > loc_pos)
        fail(file, z_pos,
             fmt::format("ZIP64 end record size {} does not fit before the "
                         "locator at 0x{:x}",
                         u64(z.record_size), loc_pos));
      if (z.disk != 0 || z.cd_disk != 0)
        throw Error(Errc::unsupported, file.name(),
                    "multi-disk (split) ZIP64 archives are not supported",
                    z_pos);
      if (z.disk_entries != z.total_entries)
        fail(file, z_pos,
             fmt::format("ZIP64 end record: {} entries on this disk but {} "
                         "in total",
                         u64(z.disk_entries), u64(z.total_entries)));
      // The classic fields must either agree or be the "see ZIP64" marker.
      auto agrees = [](u64 classic, u64 wide, u64 marker) {
        return classic == marker || classic == wide;
      };
      if (!agrees(end.total_entries, z.total_entries, kMax16) ||
          !agrees(end.cd_size, z.cd_size, kMax32) ||
          !agrees(end.cd_offset, z.cd_offset, kMax32))
        fail(file, end_pos,
             "end of central directory record disagrees with the ZIP64 end "
             "record");
      where.offset = z.cd_offset;
      where.size = z.cd_size;
      where.entries = z.total_entries;
      where.end_records = z_pos;
    }
  }

  const u64 cd_end = checked_add(where.offset, where.size, file.name(),
                                 "central directory end", where.end_records);
  if (cd_end != where.end_records)
    fail(file, where.end_records,
         fmt::format("central directory [0x{:x}, 0x{:x}) does not end where "
                     "the end records start (0x{:x}): offsets are wrong or "
                     "data was prepended/appended",
                     where.offset, cd_end, where.end_records));
  // Each central header is at least 46 bytes: a count that cannot fit is a
  // lie (and must not size an allocation).
  if (where.entries > where.size / sizeof(CentralHeader))
    fail(file, where.end_records,
         fmt::format("end record declares {} entries but the {}-byte central "
                     "directory can hold at most {}",
                     where.entries, where.size,
                     where.size / sizeof(CentralHeader)));
  return where;
}

namespace {

// Applies the ZIP64 extended information extra field: only the values whose
// 32-bit (or 16-bit) field holds the marker are present, in APPNOTE order.
void apply_zip64_extra(const ByteView& file, const std::string& label,
                       u64 header_pos, u64 extra_pos, u64 extra_len,
                       const CentralHeader& h, ZipEntry& entry) {
  const bool need_usize = h.uncompressed_size == kMax32;
  const bool need_csize = h.compressed_size == kMax32;
  const bool need_offset = h.local_header_offset == kMax32;
  const bool need_disk = h.disk_start == kMax16;
  bool found = false;
  u64 pos = extra_pos;
  const u64 end = extra_pos + extra_len;
  while (end - pos >= 4) {
    const auto& x = file.at<ExtraHeader>(pos, "extra field header");
    const u64 body = pos + 4;
    if (x.size > end - body)
      fail_member(file, label, pos,
                  fmt::format("extra field 0x{:04x} of {} bytes runs past the "
                              "end of the extra data",
                              u16(x.id), u16(x.size)));
    if (x.id == kZip64ExtraId && !found) {
      found = true;
      u64 p = body;
      const u64 body_end = body + x.size;
      auto take64 = [&](const char* what) -> u64 {
        if (body_end - p < 8)
          fail_member(
              file, label, pos,
              fmt::format("ZIP64 extra field is too short for the {}", what));
        u64 v = file.at<ul64>(p, "ZIP64 extra field");
        p += 8;
        return v;
      };
      if (need_usize) entry.uncompressed_size = take64("uncompressed size");
      if (need_csize) entry.compressed_size = take64("compressed size");
      if (need_offset)
        entry.local_header_offset = take64("local header offset");
      if (need_disk) {
        if (body_end - p < 4)
          fail_member(file, label, pos,
                      "ZIP64 extra field is too short for the disk number");
        if (u32(file.at<ul32>(p, "ZIP64 extra field")) != 0)
          throw Error(Errc::unsupported, file.name(),
                      fmt::format("{}: member on another disk (multi-disk "
                                  "archives are not supported)",
                                  label),
                      pos);
        p += 4;
      }
    }
    pos = body + x.size;
  }
  if ((need_usize || need_csize || need_offset || need_disk) && !found)
    fail_member(file, label, header_pos,
                "central header has a ZIP64 marker (0xffffffff) but no ZIP64 "
                "extra field");
  if (!need_disk && h.disk_start != 0)
    throw Error(Errc::unsupported, file.name(),
                fmt::format("{}: member on disk {} (multi-disk archives are "
                            "not supported)",
                            label, u16(h.disk_start)),
                header_pos);
}

void check_entry_limits(const ByteView& file, const std::string& label,
                        const ZipEntry& e, u64 pos, const ZipLimits& limits) {
  if (e.uncompressed_size > limits.max_entry_uncompressed)
    throw Error(
        Errc::format, file.name(),
        fmt::format("{}: declared size {} bytes exceeds the per-member "
                    "limit of {} bytes",
                    label, e.uncompressed_size, limits.max_entry_uncompressed),
        pos);
  if (e.uncompressed_size > kRatioFloor &&
      (e.compressed_size == 0 ||
       e.uncompressed_size / e.compressed_size >= limits.max_ratio))
    throw Error(Errc::format, file.name(),
                fmt::format("{}: compression ratio {} bytes / {} bytes exceeds "
                            "the limit of {}:1 (zip bomb?)",
                            label, e.uncompressed_size, e.compressed_size,
                            limits.max_ratio),
                pos);
}

}  // namespace

std::vector<ZipEntry> parse_central_directory(
    const ByteView& file, const CentralDirectoryLocation& where,
    const ZipLimits& limits) {
  if (where.entries > limits.max_entries)
    throw Error(Errc::format, file.name(),
                fmt::format("archive declares {} entries, more than the limit "
                            "of {}",
                            where.entries, limits.max_entries),
                where.end_records);
  // locate_central_directory checked that [offset, offset + size) lies
  // before the end records, so it is inside the file.
  const u64 cd_end = where.offset + where.size;
  std::vector<ZipEntry> entries;
  entries.reserve(where.entries);
  u64 total = 0;
  u64 pos = where.offset;
  for (u64 i = 0; i < where.entries; ++i) {
    if (cd_end - pos < sizeof(CentralHeader))
      fail(file, pos,
           fmt::format("central directory ends after {} of the {} declared "
                       "entries",
                       i, where.entries));
    const auto& h = file.at<CentralHeader>(pos, "central header");
    if (h.signature != kCentralHeaderSig)
      fail(file, pos,
           fmt::format("bad central header signature 0x{:08x} for entry {} of "
                       "{}",
                       u32(h.signature), i + 1, where.entries));
    const u64 name_pos = pos + sizeof(CentralHeader);
    const u64 var_len = u64{h.name_length} + h.extra_length + h.comment_length;
    if (var_len > cd_end - name_pos)
      fail(file, pos,
           fmt::format("central header {} (name, extra field and comment of "
                       "{} bytes) runs past the end of the central directory",
                       i + 1, var_len));
    ZipEntry e;
    auto name_bytes = file.range(name_pos, h.name_length, "member name");
    e.name.assign(reinterpret_cast<const char*>(name_bytes.data()),
                  name_bytes.size());
    if (h.name_length > limits.max_name_length)
      throw Error(Errc::format, file.name(),
                  fmt::format("{}: name of {} bytes exceeds the limit of {}",
                              entry_label(i + 1, e.name.substr(0, 64) + "..."),
                              u16(h.name_length), limits.max_name_length),
                  pos);
    e.method = h.method;
    e.flags = h.flags;
    e.version_made_by = h.version_made_by;
    e.dos_time = h.mod_time;
    e.dos_date = h.mod_date;
    e.crc32 = h.crc32;
    e.external_attr = h.external_attr;
    e.compressed_size = h.compressed_size;
    e.uncompressed_size = h.uncompressed_size;
    e.local_header_offset = h.local_header_offset;
    const std::string label = entry_label(i + 1, e.name);
    apply_zip64_extra(file, label, pos, name_pos + h.name_length,
                      h.extra_length, h, e);

    if (e.flags & (kFlagEncrypted | (1u << 6)))
      throw Error(Errc::unsupported, file.name(),
                  fmt::format("{}: encrypted members are not supported", label),
                  pos);
    if (e.method != 0 && e.method != 8)
      throw Error(Errc::unsupported, file.name(),
                  fmt::format("{}: compression {} is not supported (only "
                              "stored and deflated)",
                              label, method_name(e.method)),
                  pos);
    if (e.method == 0 && e.compressed_size != e.uncompressed_size)
      fail_member(file, label, pos,
                  fmt::format("stored member declares {} compressed but {} "
                              "uncompressed bytes",
                              e.compressed_size, e.uncompressed_size));
    check_entry_limits(file, label, e, pos, limits);
    // After apply_zip64_extra, which checked the sub-field structure and
    // set the sizes the points are checked against. A malformed index never
    // fails the archive: reading it sequentially does not need it.
    RestartIndexParse index = parse_restart_extra(
        file.range(name_pos + h.name_length, h.extra_length, "extra field"),
        e.method, e.uncompressed_size, e.compressed_size);
    e.restart_points = std::move(index.points);
    e.restart_error = std::move(index.error);
    total = checked_add(total, e.uncompressed_size, file.name(),
                        "total uncompressed size", pos);
    if (total > limits.max_total_uncompressed)
      throw Error(Errc::format, file.name(),
                  fmt::format("{}: total declared size exceeds the limit of {} "
                              "bytes (zip bomb?)",
                              label, limits.max_total_uncompressed),
                  pos);
    entries.push_back(std::move(e));
    pos = name_pos + var_len;
  }
  if (pos != cd_end)
    fail(file, pos,
         fmt::format("{} bytes left in the central directory after the {} "
                     "entries the end record declares",
                     cd_end - pos, where.entries));
  return entries;
}

void resolve_local_headers(const ByteView& file, u64 cd_offset,
                           std::vector<ZipEntry>& entries) {
  for (u64 i = 0; i < entries.size(); ++i) {
    ZipEntry& e = entries[i];
    const std::string label = entry_label(i + 1, e.name);
    const u64 lh = e.local_header_offset;
    if (lh >= file.size())
      fail_member(file, label, lh,
                  fmt::format("local header offset 0x{:x} past end of file "
                              "(size 0x{:x})",
                              lh, file.size()));
    if (lh > cd_offset || cd_offset - lh < sizeof(LocalHeader))
      fail_member(file, label, lh,
                  fmt::format("local header offset 0x{:x} is not before the "
                              "central directory at 0x{:x}",
                              lh, cd_offset));
    const auto& h = file.at<LocalHeader>(lh, "local header");
    if (h.signature != kLocalHeaderSig)
      fail_member(
          file, label, lh,
          fmt::format("bad local header signature 0x{:08x}", u32(h.signature)));
    const u64 name_pos = lh + sizeof(LocalHeader);
    if (!file.contains(name_pos, h.name_length))
      fail_member(file, label, lh,
                  fmt::format("local header name at 0x{:x} + name_length "
                              "0x{:x} past end of file (size 0x{:x})",
                              name_pos, u16(h.name_length), file.size()));
    auto name = file.range(name_pos, h.name_length, "local member name");
    if (name.size() != e.name.size() ||
        std::memcmp(name.data(), e.name.data(), name.size()) != 0)
      fail_member(file, label, lh,
                  fmt::format("local header names '{}', the central directory "
                              "'{}'",
                              printable_name(std::string_view(
                                  reinterpret_cast<const char*>(name.data()),
                                  name.size())),
                              printable_name(e.name)));
    if (h.method != e.method)
      fail_member(file, label, lh,
                  fmt::format("local header says {}, the central directory {}",
                              method_name(h.method), method_name(e.method)));
    // The data follows the LOCAL name and extra field, whose lengths may
    // differ from the central ones (alignment padding, timestamps).
    e.data_offset = name_pos + h.name_length + h.extra_length;
    const u64 data_end =
        checked_add(e.data_offset, e.compressed_size, file.name(),
                    label + ": data offset + compressed size", lh);
    if (data_end > cd_offset)
      fail_member(file, label, lh,
                  fmt::format("data [0x{:x}, 0x{:x}) runs into the central "
                              "directory at 0x{:x}",
                              e.data_offset, data_end, cd_offset));
  }

  // Overlapping members (several central entries sharing one local header,
  // or data running into the next header) are how "overlap" zip bombs and
  // parser-confusion attacks work; each member must own its byte range.
  std::vector<const ZipEntry*> by_offset;
  by_offset.reserve(entries.size());
  for (const ZipEntry& e : entries) by_offset.push_back(&e);
  std::sort(by_offset.begin(), by_offset.end(),
            [](const ZipEntry* a, const ZipEntry* b) {
              return a->local_header_offset < b->local_header_offset;
            });
  for (size_t i = 0; i + 1 < by_offset.size(); ++i) {
    const ZipEntry& a = *by_offset[i];
    const ZipEntry& b = *by_offset[i + 1];
    const u64 a_end = a.data_offset + a.compressed_size;
    if (a_end > b.local_header_offset)
      fail_member(
          file, entry_label(static_cast<u64>(&a - entries.data()) + 1, a.name),
          a.local_header_offset,
          fmt::format("overlaps member '{}': data ends at 0x{:x}, "
                      "after its local header at 0x{:x}",
                      printable_name(b.name), a_end, b.local_header_offset));
  }
}

}  // namespace libpkg::archive::reader
