// SPDX-License-Identifier: BSD-3-Clause
#include "archive/reader_inflate.hpp"

#include <fmt/format.h>
#include <libdeflate.h>
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

// libdeflate's CRC-32 (carry-less multiply): several times zlib's, and
// every full read of a member pays it over the whole member.
u32 crc_update(u32 crc, std::span<const u8> piece) {
  return libdeflate_crc32(crc, piece.data(), piece.size());
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
                               bool release_input, Mode mode, std::size_t start)
    : archive_(archive),
      entry_(entry),
      raw_(raw),
      release_input_(release_input),
      from_start_(start == 0),
      flush_(mode == Mode::sequential ? Z_NO_FLUSH : Z_BLOCK),
      next_point_(mode == Mode::checked ? start : entry.restart_points.size()) {
  if (start > 0 &&
      (mode != Mode::checked || start > entry.restart_points.size()))
    throw Error(Errc::usage, archive,
                fmt::format("{}: cannot start inflating at restart point {}",
                            printable_name(entry.name), start));
  if (start > 0) {
    // The reader checked the point lies inside the member.
    const RestartPoint& p = entry.restart_points[start - 1];
    in_pos_ = released_ = p.compressed;
    produced_ = p.uncompressed;
  }
  if (inflateInit2(&z_, -15) != Z_OK)
    throw Error(Errc::io, "zlib", "inflateInit2 failed (out of memory?)");
}

MemberInflater::MemberInflater(const std::string& archive,
                               const ZipEntry& entry, std::span<const u8> raw,
                               bool release_input, const ResumePoint& at)
    : archive_(archive),
      entry_(entry),
      raw_(raw),
      release_input_(release_input),
      from_start_(false),
      flush_(Z_BLOCK) {
  // The point's byte, less the bits of it the previous block used.
  const u64 byte = at.bit / 8;
  const int used = static_cast<int>(at.bit % 8);
  if (byte > raw_.size() || (used != 0 && byte >= raw_.size()) ||
      at.produced > entry.uncompressed_size || at.window.size() > 32768)
    throw Error(Errc::usage, archive,
                fmt::format("{}: cannot resume inflating at bit {}",
                            printable_name(entry.name), at.bit));
  next_point_ = restart_points_through(entry.restart_points, at.produced);
  in_pos_ = released_ = used != 0 ? byte + 1 : byte;
  produced_ = at.produced;
  if (inflateInit2(&z_, -15) != Z_OK)
    throw Error(Errc::io, "zlib", "inflateInit2 failed (out of memory?)");
  const bool primed =
      used == 0 || inflatePrime(&z_, 8 - used, raw_[byte] >> used) == Z_OK;
  if (!primed ||
      (!at.window.empty() &&
       inflateSetDictionary(&z_, at.window.data(),
                            static_cast<uInt>(at.window.size())) != Z_OK)) {
    inflateEnd(&z_);
    throw Error(Errc::io, "zlib", "cannot resume inflating (zlib refused)");
  }
}

std::size_t restart_points_through(const std::vector<RestartPoint>& points,
                                   u64 offset) {
  return static_cast<std::size_t>(
      std::upper_bound(
          points.begin(), points.end(), offset,
          [](u64 off, const RestartPoint& p) { return off < p.uncompressed; }) -
      points.begin());
}

MemberInflater::~MemberInflater() { inflateEnd(&z_); }

void MemberInflater::record_resume_points(std::vector<ResumePoint>& into,
                                          u64 every, std::size_t max_points) {
  resume_points_ = &into;
  resume_every_ = std::max<u64>(every, 1);
  resume_max_ = std::max<std::size_t>(max_points, 2);
  flush_ = Z_BLOCK;
}

u64 MemberInflater::bit_position() const {
  return (in_pos_ - z_.avail_in) * 8 - static_cast<u64>(z_.data_type & 7);
}

// At a boundary between two blocks, not after the last one: zlib's window
// is the output's last 32 KiB (or all of it, when shorter).
void MemberInflater::record_resume_point() {
  if ((z_.data_type & 64) != 0 || produced_ == entry_.uncompressed_size) return;
  auto& points = *resume_points_;
  if (!points.empty() && produced_ < points.back().produced + resume_every_)
    return;
  if (points.empty() && produced_ < resume_every_) return;
  ResumePoint p;
  p.bit = bit_position();
  p.produced = produced_;
  p.window.resize(32768);
  uInt len = 0;
  if (inflateGetDictionary(&z_, p.window.data(), &len) != Z_OK) return;
  p.window.resize(len);
  points.push_back(std::move(p));
  if (points.size() >= resume_max_) {
    std::size_t kept = 0;
    for (std::size_t i = 1; i < points.size(); i += 2)
      points[kept++] = std::move(points[i]);
    points.resize(kept);
    resume_every_ *= 2;
  }
}

void MemberInflater::feed() {
  // Small steps: a prefix needs only the first blocks, and zlib reads no
  // further than it is given.
  constexpr u64 kStep = 64 * 1024;
  if (z_.avail_in != 0 || in_pos_ == raw_.size()) return;
  // zlib keeps its window in its own buffer: consumed input is never read
  // again.
  if (release_input_) release_consumed(raw_.data(), released_, in_pos_);
  const u64 n = std::min<u64>(kStep, raw_.size() - in_pos_);
  z_.next_in = const_cast<Bytef*>(raw_.data() + in_pos_);
  z_.avail_in = static_cast<uInt>(n);
  in_pos_ += n;
}

// One inflate call into `out`: the bytes produced, whether the deflate
// stream ended, and (with Z_BLOCK) whether it stopped between two blocks,
// which counts as progress even when no byte moved (an end-of-block code
// already in zlib's bit buffer).
MemberInflater::Step MemberInflater::step(u8* out, uInt n) {
  feed();
  u8 none = 0;
  z_.next_out = n == 0 ? &none : out;
  z_.avail_out = n;
  const uInt before_in = z_.avail_in;
  const int rc = inflate(&z_, flush_);
  Step st;
  st.got = n - z_.avail_out;
  if (rc == Z_DATA_ERROR || rc == Z_NEED_DICT || rc == Z_MEM_ERROR ||
      rc == Z_STREAM_ERROR)
    fail(archive_, entry_,
         fmt::format("corrupt deflate data: {}", z_.msg ? z_.msg : "error"),
         entry_.data_offset + in_pos_ - z_.avail_in);
  if (rc == Z_STREAM_END) {
    st.ended = true;
    return st;
  }
  st.boundary = flush_ == Z_BLOCK && (z_.data_type & 128) != 0;
  st.progress = st.got > 0 || z_.avail_in != before_in || st.boundary;
  if (n == 0) return st;  // check_point() judges a stall itself
  const bool progress = st.progress;
  if (!progress && z_.avail_in == 0 && in_pos_ == raw_.size())
    fail(archive_, entry_,
         fmt::format("compressed data ({} bytes) ends before the deflate "
                     "stream does (truncated member)",
                     raw_.size()),
         entry_.data_offset);
  if (!progress && z_.avail_in != 0)
    fail(archive_, entry_, "deflate stream makes no progress",
         entry_.data_offset);
  return st;
}

void MemberInflater::account(std::span<const u8> out, const Step& st) {
  if (st.got > 0) {
    if (from_start_)
      crc_ = crc_update(crc_, out.first(static_cast<std::size_t>(st.got)));
    produced_ += st.got;
  }
  if (st.ended) {
    stream_ended_ = true;
    if (produced_ != entry_.uncompressed_size)
      fail(archive_, entry_,
           fmt::format("inflates to {} bytes but declares {}", produced_,
                       entry_.uncompressed_size),
           entry_.data_offset);
  }
}

std::size_t MemberInflater::next(std::span<u8> out) {
  const u64 declared = entry_.uncompressed_size;
  if (produced_ == declared) {
    if (!finished_) finish();
    return 0;
  }
  constexpr u64 kMaxOut = std::numeric_limits<uInt>::max();
  u64 limit = std::min<u64>({out.size(), declared - produced_, kMaxOut});
  // Stop at the next point to check that the stream has a block boundary
  // exactly there.
  const auto& points = entry_.restart_points;
  if (next_point_ < points.size())
    limit = std::min(limit, points[next_point_].uncompressed - produced_);
  const uInt n = static_cast<uInt>(limit);
  for (;;) {
    const Step st = step(out.data(), n);
    account(out, st);
    if (st.boundary && resume_points_ != nullptr) record_resume_point();
    if (st.got > 0 || st.ended) {
      if (next_point_ < points.size() &&
          produced_ == points[next_point_].uncompressed)
        check_point();
      return static_cast<std::size_t>(st.got);
    }
  }
}

MemberInflater::Piece MemberInflater::next_piece(std::span<u8> out) {
  Piece piece;
  if (finished_) {
    piece.done = true;
    return piece;
  }
  const u64 declared = entry_.uncompressed_size;
  constexpr u64 kMaxOut = std::numeric_limits<uInt>::max();
  // At the declared size a byte of room shows a stream that goes on.
  u8 extra = 0;
  const bool at_end = produced_ == declared;
  const std::span<u8> room =
      at_end ? std::span<u8>(&extra, 1)
             : out.first(static_cast<std::size_t>(
                   std::min<u64>({out.size(), declared - produced_, kMaxOut})));
  const Step st = step(room.data(), static_cast<uInt>(room.size()));
  if (at_end && st.got > 0)
    fail(archive_, entry_,
         fmt::format("inflates to more than the declared {} bytes", declared),
         entry_.data_offset);
  account(room, st);
  piece.got = static_cast<std::size_t>(st.got);
  if (st.boundary) {
    piece.boundary = true;
    piece.bit = bit_position();
    piece.final_block = (z_.data_type & 64) != 0;
  }
  if (st.ended) {
    finish();
    piece.done = true;
  }
  return piece;
}

void MemberInflater::point_mismatch(const std::string& what) const {
  const RestartPoint& p = entry_.restart_points[next_point_];
  fail(archive_, entry_,
       fmt::format("restart point {} (uncompressed {}, compressed {}) is "
                   "inconsistent with the deflate stream: {}",
                   next_point_ + 1, p.uncompressed, p.compressed, what),
       entry_.data_offset + p.compressed);
}

// The output has reached the next point's uncompressed offset: the stream
// must be between two blocks there, at exactly the point's compressed
// offset (bit 0 of that byte). zlib reports its bit position only when
// Z_BLOCK stops it at a block end, so the end-of-block code and any empty
// blocks (the stored block that pads a chunk to a byte) are decoded
// without output until it does.
void MemberInflater::check_point() {
  const u64 target = entry_.restart_points[next_point_].compressed * 8;
  for (;;) {
    const u64 consumed = in_pos_ - z_.avail_in;
    if ((z_.data_type & 128) != 0) {
      const u64 bit = consumed * 8 - static_cast<u64>(z_.data_type & 7);
      if (bit == target) break;
      if (bit > target)
        point_mismatch(fmt::format("its chunk ends at bit {} of byte {}",
                                   bit % 8, bit / 8));
    }
    if (consumed * 8 > target + 8)
      point_mismatch("the stream has no block boundary there");
    const Step st = step(nullptr, 0);
    if (st.ended) point_mismatch("the deflate stream ends there");
    // Stalled: zlib needs room for output (the block goes on) or input
    // that is not there.
    if (!st.progress)
      point_mismatch(in_pos_ == raw_.size() && z_.avail_in == 0
                         ? "the compressed data ends before it"
                         : "the stream has no block boundary there");
  }
  ++next_point_;
}

void MemberInflater::finish() {
  // The declared size is reached: the stream must end here, with nothing
  // after it, and the content must match its CRC.
  while (!stream_ended_) {
    u8 extra = 0;
    const Step st = step(&extra, 1);
    if (st.got > 0)
      fail(archive_, entry_,
           fmt::format("inflates to more than the declared {} bytes",
                       entry_.uncompressed_size),
           entry_.data_offset);
    stream_ended_ = st.ended;
  }
  const u64 unused = (raw_.size() - in_pos_) + z_.avail_in;
  if (unused != 0)
    fail(archive_, entry_,
         fmt::format("{} bytes of compressed data follow the end of the "
                     "deflate stream",
                     unused),
         entry_.data_offset + raw_.size() - unused);
  if (from_start_) check_crc(archive_, entry_, crc_);
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

void release_consumed(const u8* base, u64& released, u64 end) {
  constexpr u64 kFaultAround = 128 * 1024;
  if (end <= released) return;
  const u64 from = released > kFaultAround ? released - kFaultAround : 0;
  release_mapped(base + from, end - from);
  static const uintptr_t page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  const auto at = reinterpret_cast<uintptr_t>(base);
  const uintptr_t stop = (at + end) & ~(page - 1);
  if (stop > at + released) released = stop - at;
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
