// SPDX-License-Identifier: BSD-3-Clause
// Test-only zip builder: writes archives byte by byte in memory so the reader
// tests (and the fuzz seed maker) can produce every valid layout the reader
// must accept and every malformed one it must refuse, without depending on
// the library's own writer. Deliberately independent of zip_format.hpp.
#pragma once

#include <zlib.h>

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace reader_testing {

using Bytes = std::vector<std::uint8_t>;

inline Bytes to_bytes(std::string_view s) { return Bytes(s.begin(), s.end()); }

inline Bytes raw_deflate(const Bytes& in, int level = 6) {
  z_stream z{};
  if (deflateInit2(&z, level, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) != Z_OK)
    throw std::runtime_error("deflateInit2");
  Bytes out(deflateBound(&z, static_cast<uLong>(in.size())) + 16);
  z.next_in = const_cast<Bytef*>(in.data());
  z.avail_in = static_cast<uInt>(in.size());
  z.next_out = out.data();
  z.avail_out = static_cast<uInt>(out.size());
  if (deflate(&z, Z_FINISH) != Z_STREAM_END)
    throw std::runtime_error("deflate");
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

inline std::uint32_t crc_of(const Bytes& b) {
  return static_cast<std::uint32_t>(crc32_z(0, b.data(), b.size()));
}

struct Member {
  std::string name;
  Bytes data;                // uncompressed content
  std::uint16_t method = 8;  // 0 stored, 8 deflated (compressed by us)
  std::uint16_t flags = 0;   // extra general purpose bits (e.g. 1: encrypted)
  bool data_descriptor = false;
  bool descriptor_signature = true;
  bool zip64 = false;  // markers + ZIP64 extra in both headers
  std::uint16_t made_by = (3 << 8) | 20;  // unix
  std::uint32_t external_attr = 0100644u << 16;
  Bytes local_extra;    // extra bytes in the local header only (padding)
  Bytes central_extra;  // extra fields in the central header only

  // Overrides for the malformed corpus.
  std::optional<std::string> local_name;
  std::optional<std::uint16_t> method_field;  // method written in headers
  std::optional<Bytes> compressed;            // verbatim compressed bytes
  std::optional<std::uint32_t> crc;
  std::optional<std::uint64_t> declared_size;  // uncompressed
  std::optional<std::uint64_t> declared_compressed;
  std::optional<std::uint64_t> local_offset;  // central "local header offset"
  bool zip64_marker_without_extra = false;
  bool zip64_extra_short = false;  // extra carries only the first value
};

// A well-formed member (the common case of the tests).
inline Member file(std::string name, Bytes data, std::uint16_t method = 8) {
  Member m;
  m.name = std::move(name);
  m.data = std::move(data);
  m.method = method;
  return m;
}

struct Options {
  std::string comment;
  bool zip64_end = false;  // ZIP64 end record + locator, classic markers
  std::optional<std::uint64_t> declared_entries;
  std::optional<std::uint64_t> declared_cd_size;
  std::optional<std::uint64_t> declared_cd_offset;
  Bytes prefix;  // bytes before the first local header
};

struct Built {
  Bytes bytes;
  std::vector<std::uint64_t> local_offsets;
  std::uint64_t cd_offset = 0;
  std::uint64_t cd_size = 0;
  std::uint64_t end_offset = 0;  // classic end record
};

class Writer {
 public:
  Bytes out;
  void u8(std::uint8_t v) { out.push_back(v); }
  void u16(std::uint64_t v) {
    for (int i = 0; i < 2; ++i) u8(static_cast<std::uint8_t>(v >> (8 * i)));
  }
  void u32(std::uint64_t v) {
    for (int i = 0; i < 4; ++i) u8(static_cast<std::uint8_t>(v >> (8 * i)));
  }
  void u64(std::uint64_t v) {
    for (int i = 0; i < 8; ++i) u8(static_cast<std::uint8_t>(v >> (8 * i)));
  }
  void bytes(const Bytes& b) { out.insert(out.end(), b.begin(), b.end()); }
  void str(std::string_view s) { out.insert(out.end(), s.begin(), s.end()); }
};

inline Built build_zip(const std::vector<Member>& members,
                       const Options& options = {}) {
  Built built;
  Writer w;
  w.bytes(options.prefix);
  struct Central {
    std::uint32_t crc;
    std::uint64_t csize, usize, offset;
  };
  std::vector<Central> centrals;
  for (const Member& m : members) {
    Bytes comp = m.compressed    ? *m.compressed
                 : m.method == 8 ? raw_deflate(m.data)
                                 : m.data;
    Central c;
    c.crc = m.crc ? *m.crc : crc_of(m.data);
    c.usize = m.declared_size ? *m.declared_size : m.data.size();
    c.csize = m.declared_compressed ? *m.declared_compressed : comp.size();
    c.offset = w.out.size();
    built.local_offsets.push_back(c.offset);
    if (m.local_offset) c.offset = *m.local_offset;
    centrals.push_back(c);

    const std::string& lname = m.local_name ? *m.local_name : m.name;
    const std::uint16_t flags =
        static_cast<std::uint16_t>(m.flags | (m.data_descriptor ? 8 : 0));
    const std::uint16_t method = m.method_field ? *m.method_field : m.method;
    Bytes extra;
    if (m.zip64) {
      Writer x;
      x.u16(1);
      x.u16(16);
      x.u64(c.usize);
      x.u64(c.csize);
      extra = x.out;
    }
    extra.insert(extra.end(), m.local_extra.begin(), m.local_extra.end());
    w.u32(0x04034b50);
    w.u16(m.zip64 ? 45 : 20);
    w.u16(flags);
    w.u16(method);
    w.u16(0x6000);  // 12:00:00
    w.u16(0x5a21);  // 2025-01-01
    const bool dd = m.data_descriptor;
    w.u32(dd ? 0 : c.crc);
    w.u32(dd ? 0 : (m.zip64 ? 0xffffffffu : c.csize));
    w.u32(dd ? 0 : (m.zip64 ? 0xffffffffu : c.usize));
    w.u16(lname.size());
    w.u16(extra.size());
    w.str(lname);
    w.bytes(extra);
    w.bytes(comp);
    if (dd) {
      if (m.descriptor_signature) w.u32(0x08074b50);
      w.u32(c.crc);
      if (m.zip64) {
        w.u64(c.csize);
        w.u64(c.usize);
      } else {
        w.u32(c.csize);
        w.u32(c.usize);
      }
    }
  }

  built.cd_offset = w.out.size();
  for (std::size_t i = 0; i < members.size(); ++i) {
    const Member& m = members[i];
    const Central& c = centrals[i];
    const bool marker = m.zip64 || m.zip64_marker_without_extra;
    Bytes extra;
    if (m.zip64) {
      Writer x;
      x.u16(1);
      x.u16(m.zip64_extra_short ? 8 : 24);
      x.u64(c.usize);
      if (!m.zip64_extra_short) {
        x.u64(c.csize);
        x.u64(c.offset);
      }
      extra = x.out;
    }
    extra.insert(extra.end(), m.central_extra.begin(), m.central_extra.end());
    w.u32(0x02014b50);
    w.u16(m.made_by);
    w.u16(m.zip64 ? 45 : 20);
    w.u16(static_cast<std::uint16_t>(m.flags | (m.data_descriptor ? 8 : 0)));
    w.u16(m.method_field ? *m.method_field : m.method);
    w.u16(0x6000);
    w.u16(0x5a21);
    w.u32(c.crc);
    w.u32(marker ? 0xffffffffu : c.csize);
    w.u32(marker ? 0xffffffffu : c.usize);
    w.u16(m.name.size());
    w.u16(extra.size());
    w.u16(0);  // comment
    w.u16(0);  // disk
    w.u16(0);  // internal attributes
    w.u32(m.external_attr);
    w.u32(marker ? 0xffffffffu : c.offset);
    w.str(m.name);
    w.bytes(extra);
  }
  built.cd_size = w.out.size() - built.cd_offset;
  const std::uint64_t entries =
      options.declared_entries ? *options.declared_entries : members.size();
  const std::uint64_t cd_size =
      options.declared_cd_size ? *options.declared_cd_size : built.cd_size;
  const std::uint64_t cd_offset = options.declared_cd_offset
                                      ? *options.declared_cd_offset
                                      : built.cd_offset;
  if (options.zip64_end) {
    const std::uint64_t z_pos = w.out.size();
    w.u32(0x06064b50);
    w.u64(44);
    w.u16((3 << 8) | 45);
    w.u16(45);
    w.u32(0);
    w.u32(0);
    w.u64(entries);
    w.u64(entries);
    w.u64(cd_size);
    w.u64(cd_offset);
    w.u32(0x07064b50);
    w.u32(0);
    w.u64(z_pos);
    w.u32(1);
  }
  built.end_offset = w.out.size();
  const bool z = options.zip64_end;
  w.u32(0x06054b50);
  w.u16(0);
  w.u16(0);
  w.u16(z ? 0xffff : entries);
  w.u16(z ? 0xffff : entries);
  w.u32(z ? 0xffffffffu : cd_size);
  w.u32(z ? 0xffffffffu : cd_offset);
  w.u16(options.comment.size());
  w.str(options.comment);
  built.bytes = std::move(w.out);
  return built;
}

}  // namespace reader_testing
