// SPDX-License-Identifier: BSD-3-Clause
#include "archive/bzip2_block.hpp"

#include <bzlib.h>
#include <fmt/format.h>

#include <array>
#include <cstring>
#include <mutex>

#include "libpkg/base/error.hpp"
#include "libpkg/base/sha256.hpp"

namespace libpkg::archive {
namespace {

// bzip2's magic numbers: BCD pi opens a block, BCD sqrt(pi) ends the stream.
constexpr u64 kBlockMagic = 0x314159265359;
constexpr u64 kEndMagic = 0x177245385090;
constexpr int kWorkFactor = 30;  // the bzip2 tool's and libarchive's

// Size of a run of `n` (1..255) equal bytes after libbz2's first pass.
constexpr u64 encoded_run(u32 n) { return n < 4 ? n : 5; }

// `n` (<= 57) bits of `bytes` from bit `pos`, most significant bit first
// (bzip2's bit order). The caller keeps pos + n within the span.
u64 bits_at(std::span<const u8> bytes, u64 pos, int n) {
  u64 v = 0;
  const u64 first = pos / 8;
  const u64 last = (pos + n - 1) / 8;
  for (u64 i = first; i <= last; ++i) v = (v << 8) | bytes[i];
  const int drop = static_cast<int>((last + 1) * 8 - (pos + n));
  return (v >> drop) & ((u64{1} << n) - 1);
}

}  // namespace

u64 bzip2_block_limit(int level) { return u64{100000} * level - 19; }

size_t Bzip2BlockCutter::fit(std::span<const u8> bytes) {
  size_t i = 0;
  for (; i < bytes.size(); ++i) {
    const u8 b = bytes[i];
    if (run_len_ != 0 && b == run_byte_ && run_len_ < 255) {
      // Only the step from a run of 3 to one of 4 grows the encoding
      // (3 -> 5 bytes); longer runs stay at 5 until 255.
      if (flushed_ + encoded_run(run_len_ + 1) > limit_) break;
      ++run_len_;
    } else {
      const u64 flushed = flushed_ + encoded_run(run_len_);
      if (flushed + 1 > limit_) break;
      flushed_ = flushed;
      run_byte_ = b;
      run_len_ = 1;
    }
  }
  return i;
}

void Bzip2BlockCutter::reset() {
  flushed_ = 0;
  run_byte_ = -1;
  run_len_ = 0;
}

void compress_bzip2_block(std::span<const u8> input, int level,
                          const std::string& name, std::vector<u8>& out) {
  // libbz2's documented bound: 1 % more than the input plus 600 bytes.
  unsigned capacity =
      static_cast<unsigned>(input.size() + input.size() / 100 + 600);
  out.resize(capacity);
  int rc = BZ2_bzBuffToBuffCompress(
      reinterpret_cast<char*>(out.data()), &capacity,
      const_cast<char*>(reinterpret_cast<const char*>(input.data())),
      static_cast<unsigned>(input.size()), level, 0, kWorkFactor);
  if (rc != BZ_OK)
    throw Error(Errc::io, name,
                fmt::format("bzip2 compression failed ({})", rc));
  out.resize(capacity);
}

std::optional<Bzip2BlockBits> parse_bzip2_block(std::span<const u8> stream,
                                                int level) {
  // header (4) + block magic and CRC (10) + at least one bit of block +
  // end magic and CRC (10)
  if (stream.size() < 25 || level < 1 || level > 9) return std::nullopt;
  if (stream[0] != 'B' || stream[1] != 'Z' || stream[2] != 'h' ||
      stream[3] != '0' + level)
    return std::nullopt;
  if (bits_at(stream, 32, 48) != kBlockMagic) return std::nullopt;
  Bzip2BlockBits bits;
  bits.begin_bit = 32;
  bits.crc = static_cast<u32>(bits_at(stream, 80, 32));
  // The end marker is followed by 0..7 zero bits of padding. Its combined
  // CRC equals the block's CRC only when the stream holds one block (the
  // combination rotates the running value before each block's CRC).
  const u64 total = u64{stream.size()} * 8;
  std::optional<Bzip2BlockBits> found;
  for (int pad = 0; pad < 8; ++pad) {
    const u64 end = total - pad - 80;
    if (bits_at(stream, end, 48) != kEndMagic ||
        bits_at(stream, end + 48, 32) != bits.crc ||
        (pad > 0 && bits_at(stream, total - pad, pad) != 0))
      continue;
    if (found) return std::nullopt;  // ambiguous: not what libbz2 writes
    bits.end_bit = end;
    found = bits;
  }
  if (found && found->end_bit <= found->begin_bit + 80) return std::nullopt;
  return found;
}

bool bzip2_block_decodes_to(std::span<const u8> stream, int level,
                            std::span<const u8> input) {
  if (!parse_bzip2_block(stream, level)) return false;
  // One byte more than expected, so that a longer output is seen as such.
  std::vector<char> plain(input.size() + 1);
  unsigned produced = static_cast<unsigned>(plain.size());
  int rc = BZ2_bzBuffToBuffDecompress(
      plain.data(), &produced,
      const_cast<char*>(reinterpret_cast<const char*>(stream.data())),
      static_cast<unsigned>(stream.size()), 0, 0);
  return rc == BZ_OK && produced == input.size() &&
         std::memcmp(plain.data(), input.data(), input.size()) == 0;
}

std::string bzip2_encoder_identity(int level) {
  static std::array<std::once_flag, 10> once;
  static std::array<std::string, 10> prints;
  if (level < 1 || level > 9) return "no level";
  std::call_once(once[level], [level] {
    // Text-like bytes with runs (the first pass) and repeats at many
    // distances (the sort), so that every stage shows in the output.
    std::vector<u8> probe(64 * 1024);
    u32 x = 54321;
    for (size_t i = 0; i < probe.size(); ++i) {
      x = x * 1103515245u + 12345u;
      probe[i] = (x >> 24) % 5 == 0 && i >= 512
                     ? probe[i - 1 - (x >> 8) % 256]
                     : static_cast<u8>('a' + (x >> 16) % 7);
    }
    std::vector<u8> out;
    std::string print = "no encoder";
    try {
      compress_bzip2_block(probe, level, "<probe>", out);
      Sha256 h;
      h.update(out);
      print = Sha256::hex(h.finish());
    } catch (const Error&) {
    }
    prints[level] = fmt::format(
        "libpkg bzip2 block; libbz2 {}; encoder {}; rules {}; "
        "level {}",
        BZ2_bzlibVersion(), print, kBzip2BlockRulesVersion, level);
  });
  return prints[level];
}

}  // namespace libpkg::archive
