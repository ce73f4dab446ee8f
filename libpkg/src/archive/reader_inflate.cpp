// SPDX-License-Identifier: BSD-3-Clause
#include "archive/reader_inflate.hpp"

#include <fmt/format.h>
#include <sys/mman.h>
#include <unistd.h>
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
                   const std::function<void(std::span<const u8>)>& sink,
                   bool release_input) {
  u32 crc = 0;
  for (u64 pos = 0; pos < raw.size(); pos += kPieceSize) {
    auto piece = raw.subspan(pos, std::min<u64>(kPieceSize, raw.size() - pos));
    crc = crc_update(crc, piece);
    sink(piece);
    if (release_input) release_mapped(piece.data(), piece.size());
  }
  check_crc(archive, entry, crc);
}

void stream_deflated(const std::string& archive, const ZipEntry& entry,
                     std::span<const u8> raw,
                     const std::function<void(std::span<const u8>)>& sink,
                     bool release_input) {
  MemberInflater inflater(archive, entry, raw, release_input);
  std::vector<u8> out(static_cast<std::size_t>(
      std::min<u64>(kPieceSize, std::max<u64>(entry.uncompressed_size, 1))));
  while (std::size_t got = inflater.next(out))
    sink(std::span<const u8>(out.data(), got));
}

}  // namespace

MemberInflater::MemberInflater(const std::string& archive,
                               const ZipEntry& entry, std::span<const u8> raw,
                               bool release_input)
    : archive_(archive),
      entry_(entry),
      raw_(raw),
      release_input_(release_input) {
  if (inflateInit2(&z_, -15) != Z_OK)
    throw Error(Errc::io, "zlib", "inflateInit2 failed (out of memory?)");
}

MemberInflater::~MemberInflater() { inflateEnd(&z_); }

void MemberInflater::feed() {
  // Small steps: a prefix needs only the first blocks, and zlib reads no
  // further than it is given.
  constexpr u64 kStep = 64 * 1024;
  if (z_.avail_in != 0 || in_pos_ == raw_.size()) return;
  // zlib keeps its window in its own buffer: consumed input is never read
  // again.
  if (release_input_) {
    release_mapped(raw_.data() + released_, in_pos_ - released_);
    released_ = in_pos_;
  }
  const u64 n = std::min<u64>(kStep, raw_.size() - in_pos_);
  z_.next_in = const_cast<Bytef*>(raw_.data() + in_pos_);
  z_.avail_in = static_cast<uInt>(n);
  in_pos_ += n;
}

// One inflate call into `out`; returns the bytes produced and whether the
// deflate stream ended.
std::pair<u64, bool> MemberInflater::step(u8* out, uInt n) {
  feed();
  z_.next_out = out;
  z_.avail_out = n;
  const uInt before_in = z_.avail_in;
  const int rc = inflate(&z_, Z_NO_FLUSH);
  const u64 got = n - z_.avail_out;
  if (rc == Z_DATA_ERROR || rc == Z_NEED_DICT || rc == Z_MEM_ERROR ||
      rc == Z_STREAM_ERROR)
    fail(archive_, entry_,
         fmt::format("corrupt deflate data: {}", z_.msg ? z_.msg : "error"),
         entry_.data_offset + in_pos_ - z_.avail_in);
  if (rc == Z_STREAM_END) return {got, true};
  const bool progress = got > 0 || z_.avail_in != before_in;
  if (!progress && z_.avail_in == 0 && in_pos_ == raw_.size())
    fail(archive_, entry_,
         fmt::format("compressed data ({} bytes) ends before the deflate "
                     "stream does (truncated member)",
                     raw_.size()),
         entry_.data_offset);
  if (!progress && z_.avail_in != 0)
    fail(archive_, entry_, "deflate stream makes no progress",
         entry_.data_offset);
  return {got, false};
}

std::size_t MemberInflater::next(std::span<u8> out) {
  const u64 declared = entry_.uncompressed_size;
  if (produced_ == declared) {
    if (!finished_) finish();
    return 0;
  }
  constexpr u64 kMaxOut = std::numeric_limits<uInt>::max();
  const uInt n = static_cast<uInt>(
      std::min<u64>({out.size(), declared - produced_, kMaxOut}));
  for (;;) {
    auto [got, ended] = step(out.data(), n);
    if (got > 0) {
      crc_ = crc_update(crc_, out.first(static_cast<std::size_t>(got)));
      produced_ += got;
    }
    if (ended) {
      stream_ended_ = true;
      if (produced_ != declared)
        fail(archive_, entry_,
             fmt::format("inflates to {} bytes but declares {}", produced_,
                         declared),
             entry_.data_offset);
    }
    if (got > 0 || ended) return static_cast<std::size_t>(got);
  }
}

void MemberInflater::finish() {
  // The declared size is reached: the stream must end here, with nothing
  // after it, and the content must match its CRC.
  while (!stream_ended_) {
    u8 extra = 0;
    auto [got, ended] = step(&extra, 1);
    if (got > 0)
      fail(archive_, entry_,
           fmt::format("inflates to more than the declared {} bytes",
                       entry_.uncompressed_size),
           entry_.data_offset);
    stream_ended_ = ended;
  }
  const u64 unused = (raw_.size() - in_pos_) + z_.avail_in;
  if (unused != 0)
    fail(archive_, entry_,
         fmt::format("{} bytes of compressed data follow the end of the "
                     "deflate stream",
                     unused),
         entry_.data_offset + raw_.size() - unused);
  check_crc(archive_, entry_, crc_);
  finished_ = true;
}

void stream_member(const std::string& archive, const ZipEntry& entry,
                   std::span<const u8> raw,
                   const std::function<void(std::span<const u8>)>& sink,
                   bool release_input) {
  if (entry.method == 0)
    stream_stored(archive, entry, raw, sink, release_input);
  else
    stream_deflated(archive, entry, raw, sink, release_input);
}

void release_mapped(const u8* data, u64 n) {
  static const uintptr_t page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  const uintptr_t lo =
      (reinterpret_cast<uintptr_t>(data) + page - 1) & ~(page - 1);
  const uintptr_t hi = (reinterpret_cast<uintptr_t>(data) + n) & ~(page - 1);
  // Advice only: a failure leaves the pages resident, nothing else.
  if (hi > lo) ::madvise(reinterpret_cast<void*>(lo), hi - lo, MADV_DONTNEED);
}

std::vector<u8> inflate_prefix(const std::string& archive,
                               const ZipEntry& entry, std::span<const u8> raw,
                               std::size_t n) {
  const std::size_t want =
      static_cast<std::size_t>(std::min<u64>(n, entry.uncompressed_size));
  std::vector<u8> out(want);
  MemberInflater inflater(archive, entry, raw);
  std::size_t have = 0;
  while (have < want) {
    const std::size_t got = inflater.next(std::span<u8>(out).subspan(have));
    if (got == 0) break;
    have += got;
  }
  out.resize(have);
  return out;
}

}  // namespace libpkg::archive::reader
