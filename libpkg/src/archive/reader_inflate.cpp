// SPDX-License-Identifier: BSD-3-Clause
#include "archive/reader_inflate.hpp"

#include <fmt/format.h>
#include <zlib.h>

#include <algorithm>
#include <limits>
#include <vector>

#include "archive/reader_central.hpp"
#include "libpkg/base/error.hpp"

namespace libpkg::archive::reader {
namespace {

[[noreturn]] void fail(const std::string& archive, const ZipEntry& entry,
                       const std::string& what,
                       std::optional<u64> offset = std::nullopt) {
  throw Error(Errc::format, archive,
              fmt::format("{}: {}", printable_name(entry.name), what), offset);
}

u32 crc_update(u32 crc, std::span<const u8> piece) {
  return static_cast<u32>(crc32_z(crc, piece.data(), piece.size()));
}

void check_crc(const std::string& archive, const ZipEntry& entry, u32 crc) {
  if (crc != entry.crc32)
    fail(archive, entry,
         fmt::format("CRC-32 mismatch: computed {:08x}, archive says {:08x}",
                     crc, entry.crc32),
         entry.data_offset);
}

void stream_stored(const std::string& archive, const ZipEntry& entry,
                   std::span<const u8> raw,
                   const std::function<void(std::span<const u8>)>& sink) {
  u32 crc = 0;
  for (u64 pos = 0; pos < raw.size(); pos += kPieceSize) {
    auto piece = raw.subspan(pos, std::min<u64>(kPieceSize, raw.size() - pos));
    crc = crc_update(crc, piece);
    sink(piece);
  }
  check_crc(archive, entry, crc);
}

// Owns a raw-inflate z_stream for the duration of one member.
class Inflater {
 public:
  Inflater() {
    if (inflateInit2(&z_, -15) != Z_OK)
      throw Error(Errc::io, "zlib", "inflateInit2 failed (out of memory?)");
  }
  ~Inflater() { inflateEnd(&z_); }
  Inflater(const Inflater&) = delete;
  Inflater& operator=(const Inflater&) = delete;
  z_stream& z() { return z_; }

 private:
  z_stream z_{};
};

void stream_deflated(const std::string& archive, const ZipEntry& entry,
                     std::span<const u8> raw,
                     const std::function<void(std::span<const u8>)>& sink) {
  Inflater inflater;
  z_stream& z = inflater.z();
  // One byte more than the declared size (when that is small), so a member
  // that inflates to more than it declared is caught without inflating it.
  std::vector<u8> out(entry.uncompressed_size >= kPieceSize
                          ? kPieceSize
                          : static_cast<std::size_t>(entry.uncompressed_size) +
                                1);
  constexpr u64 kMaxIn = std::numeric_limits<uInt>::max();
  u64 in_pos = 0;  // input handed to zlib so far
  u64 produced = 0;
  u32 crc = 0;
  for (;;) {
    if (z.avail_in == 0 && in_pos < raw.size()) {
      u64 n = std::min<u64>(kMaxIn, raw.size() - in_pos);
      z.next_in = const_cast<Bytef*>(raw.data() + in_pos);
      z.avail_in = static_cast<uInt>(n);
      in_pos += n;
    }
    // At most one byte beyond the declared size.
    const u64 remaining = entry.uncompressed_size - produced;
    z.next_out = out.data();
    z.avail_out =
        static_cast<uInt>(remaining >= out.size() ? out.size() : remaining + 1);
    const uInt before_in = z.avail_in;
    const uInt before_out = z.avail_out;
    int rc = inflate(&z, Z_NO_FLUSH);
    const u64 got = before_out - z.avail_out;
    if (rc == Z_DATA_ERROR || rc == Z_NEED_DICT || rc == Z_MEM_ERROR ||
        rc == Z_STREAM_ERROR) {
      const u64 at = entry.data_offset + in_pos - z.avail_in;
      fail(archive, entry,
           fmt::format("corrupt deflate data: {}", z.msg ? z.msg : "error"),
           at);
    }
    if (got > 0) {
      produced += got;
      if (produced > entry.uncompressed_size)
        fail(archive, entry,
             fmt::format("inflates to more than the declared {} bytes",
                         entry.uncompressed_size),
             entry.data_offset);
      std::span<const u8> piece(out.data(), got);
      crc = crc_update(crc, piece);
      sink(piece);
    }
    if (rc == Z_STREAM_END) break;
    const bool progress = got > 0 || z.avail_in != before_in;
    if (!progress && z.avail_in == 0 && in_pos == raw.size())
      fail(archive, entry,
           fmt::format("compressed data ({} bytes) ends before the deflate "
                       "stream does (truncated member)",
                       raw.size()),
           entry.data_offset);
    if (!progress && rc == Z_BUF_ERROR && z.avail_in != 0)
      fail(archive, entry, "deflate stream makes no progress",
           entry.data_offset);
  }
  const u64 unused = (raw.size() - in_pos) + z.avail_in;
  if (unused != 0)
    fail(archive, entry,
         fmt::format("{} bytes of compressed data follow the end of the "
                     "deflate stream",
                     unused),
         entry.data_offset + raw.size() - unused);
  if (produced != entry.uncompressed_size)
    fail(archive, entry,
         fmt::format("inflates to {} bytes but declares {}", produced,
                     entry.uncompressed_size),
         entry.data_offset);
  check_crc(archive, entry, crc);
}

}  // namespace

void stream_member(const std::string& archive, const ZipEntry& entry,
                   std::span<const u8> raw,
                   const std::function<void(std::span<const u8>)>& sink) {
  if (entry.method == 0)
    stream_stored(archive, entry, raw, sink);
  else
    stream_deflated(archive, entry, raw, sink);
}

std::vector<u8> inflate_prefix(const std::string& archive,
                               const ZipEntry& entry, std::span<const u8> raw,
                               std::size_t n) {
  const std::size_t want =
      static_cast<std::size_t>(std::min<u64>(n, entry.uncompressed_size));
  std::vector<u8> out(want);
  if (want == 0) return out;
  Inflater inflater;
  z_stream& z = inflater.z();
  z.next_out = out.data();
  z.avail_out = static_cast<uInt>(want);
  // Feed the input in small pieces: the prefix needs only the first blocks.
  constexpr u64 kStep = 16 * 1024;
  u64 in_pos = 0;
  while (z.avail_out > 0) {
    if (z.avail_in == 0) {
      if (in_pos == raw.size()) break;
      u64 step = std::min<u64>(kStep, raw.size() - in_pos);
      z.next_in = const_cast<Bytef*>(raw.data() + in_pos);
      z.avail_in = static_cast<uInt>(step);
      in_pos += step;
    }
    int rc = inflate(&z, Z_NO_FLUSH);
    if (rc == Z_STREAM_END) break;
    if (rc != Z_OK && rc != Z_BUF_ERROR)
      fail(archive, entry,
           fmt::format("corrupt deflate data: {}", z.msg ? z.msg : "error"),
           entry.data_offset + in_pos - z.avail_in);
  }
  out.resize(want - z.avail_out);
  return out;
}

}  // namespace libpkg::archive::reader
