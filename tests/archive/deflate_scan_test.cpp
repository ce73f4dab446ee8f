// SPDX-License-Identifier: BSD-3-Clause
// scan_deflate() against zlib's block-by-block inflate
// (scan_deflate_with_zlib()): on every stream the two must agree, both on
// whether it is one valid deflate stream ending in its last byte and on
// where its final block starts and ends. Fixtures are made here with
// libdeflate, zlib and a small bit writer for hand-made blocks.
#include "archive/deflate_scan.hpp"

#include <gtest/gtest.h>
#include <libdeflate.h>
#include <zlib.h>

#include <cstdlib>
#include <exception>
#include <filesystem>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "archive/deflate_chunk.hpp"
#include "writer_fixtures.hpp"

namespace {

using libpkg::archive::DeflateScan;
using libpkg::archive::make_non_final;
using libpkg::archive::scan_deflate;
using libpkg::archive::scan_deflate_with_zlib;
using writer_test::elf_bytes;
using writer_test::random_bytes;
using writer_test::text_bytes;
using writer_test::u32;
using writer_test::u64;
using writer_test::u8;
using Bytes = std::vector<u8>;

// `n` trials, or a quarter of them in the sanitized build (LIBPKG_SANITIZED,
// tests/CMakeLists.txt), which runs them several times slower.
int trials(int n) {
  const char* sanitized = std::getenv("LIBPKG_SANITIZED");
  return sanitized != nullptr && std::string(sanitized) == "1" ? n / 4 : n;
}

// zlib's verdict on `stream`: the final block's positions, or nullopt.
std::optional<DeflateScan> zlib_verdict(std::span<const u8> stream) {
  try {
    return scan_deflate_with_zlib(stream, "fixture");
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

// True when the scanner agrees with zlib on `stream`; the test's failure
// message says how they differ.
::testing::AssertionResult agrees_with_zlib(std::span<const u8> stream) {
  const std::optional<DeflateScan> want = zlib_verdict(stream);
  const std::optional<DeflateScan> got = scan_deflate(stream);
  if (want.has_value() != got.has_value())
    return ::testing::AssertionFailure()
           << "zlib " << (want ? "accepts" : "rejects") << ", scanner "
           << (got ? "accepts" : "rejects") << " (" << stream.size()
           << " bytes)";
  if (want &&
      (want->last_header_bit != got->last_header_bit ||
       want->end_bit != got->end_bit || want->output_size != got->output_size))
    return ::testing::AssertionFailure()
           << "zlib: header " << want->last_header_bit << " end "
           << want->end_bit << " size " << want->output_size
           << "; scanner: header " << got->last_header_bit << " end "
           << got->end_bit << " size " << got->output_size;
  return ::testing::AssertionSuccess();
}

Bytes libdeflate_raw(std::span<const u8> input, int level) {
  libdeflate_compressor* c = libdeflate_alloc_compressor(level);
  EXPECT_NE(c, nullptr);
  Bytes out(libdeflate_deflate_compress_bound(c, input.size()));
  const size_t n = libdeflate_deflate_compress(c, input.data(), input.size(),
                                               out.data(), out.size());
  libdeflate_free_compressor(c);
  EXPECT_GT(n, 0u);
  out.resize(n);
  return out;
}

// zlib's raw deflate of `input` at `level` with `strategy`, flushed with
// `flush` at a third and two thirds of it (Z_FULL_FLUSH and Z_SYNC_FLUSH
// end a block with an empty stored one, Z_PARTIAL_FLUSH with an empty
// fixed one), so the stream has several blocks of more than one type.
Bytes zlib_raw(std::span<const u8> input, int level, int strategy, int flush) {
  z_stream strm{};
  EXPECT_EQ(deflateInit2(&strm, level, Z_DEFLATED, -MAX_WBITS, 8, strategy),
            Z_OK);
  Bytes out(deflateBound(&strm, input.size()) + 1024);
  strm.next_out = out.data();
  strm.avail_out = static_cast<uInt>(out.size());
  const u64 cuts[] = {0, input.size() / 3, 2 * input.size() / 3, input.size()};
  for (int i = 0; i < 3; ++i) {
    strm.next_in = const_cast<u8*>(input.data() + cuts[i]);
    strm.avail_in = static_cast<uInt>(cuts[i + 1] - cuts[i]);
    if (i == 2) {
      EXPECT_EQ(deflate(&strm, Z_FINISH), Z_STREAM_END);
    } else if (!input.empty()) {  // no progress on nothing: Z_BUF_ERROR
      EXPECT_EQ(deflate(&strm, flush), Z_OK);
    }
  }
  out.resize(strm.total_out);
  deflateEnd(&strm);
  return out;
}

// Inputs of the kinds the writer sees, from empty to about a MiB.
std::vector<std::pair<std::string, Bytes>> varied_inputs() {
  constexpr u64 kMiB = u64{1} << 20;
  std::vector<std::pair<std::string, Bytes>> inputs = {
      {"empty", {}},
      {"one byte", {'x'}},
      {"random 1000", random_bytes(1000, 1)},
      {"text 5000", text_bytes(5000)},
      {"zeros 70000", Bytes(70000, 0)},
      {"text 1MiB", text_bytes(kMiB)},
      {"random 300KiB", random_bytes(300 << 10, 2)},
      {"elf 1MiB", elf_bytes(kMiB)},
  };
  Bytes repetitive;
  for (u32 i = 0; repetitive.size() < 200000; ++i)
    for (char ch : std::string("abcabd") + std::to_string(i % 7))
      repetitive.push_back(static_cast<u8>(ch));
  inputs.emplace_back("repetitive", repetitive);
  Bytes mixed = text_bytes(100000);
  for (const Bytes& part : {random_bytes(50000, 3), elf_bytes(200000),
                            Bytes(30000, 0xff), text_bytes(20000)})
    mixed.insert(mixed.end(), part.begin(), part.end());
  inputs.emplace_back("mixed", mixed);
  // The test binary itself, read now (no checked-in fixture).
  Bytes self = writer_test::read_file("/proc/self/exe");
  self.resize(std::min<u64>(self.size(), kMiB));
  inputs.emplace_back("this test binary", self);
  return inputs;
}

TEST(DeflateScan, MatchesZlibOnLibdeflateOutputAtEveryLevel) {
  for (const auto& [name, input] : varied_inputs()) {
    for (int level = 1; level <= 12; ++level) {
      // The slowest levels only on the smaller inputs: they exercise no
      // other block types, just better-chosen codes.
      if (level >= 10 && input.size() > 300000 && name != "elf 1MiB") continue;
      SCOPED_TRACE(name + " level " + std::to_string(level));
      const Bytes stream = libdeflate_raw(input, level);
      EXPECT_TRUE(agrees_with_zlib(stream));
      const std::optional<DeflateScan> scan = scan_deflate(stream);
      ASSERT_TRUE(scan.has_value());
      EXPECT_EQ(scan->output_size, input.size());
      EXPECT_TRUE(scan_deflate(stream, input.size()).has_value());
      EXPECT_FALSE(scan_deflate(stream, input.size() + 1).has_value());
    }
  }
}

TEST(DeflateScan, MatchesZlibOnZlibOutputWithFlushes) {
  Bytes input = text_bytes(60000);
  for (const Bytes& part : {random_bytes(20000, 4), elf_bytes(60000)})
    input.insert(input.end(), part.begin(), part.end());
  for (int level = 0; level <= 9; ++level) {
    for (int strategy :
         {Z_DEFAULT_STRATEGY, Z_FILTERED, Z_HUFFMAN_ONLY, Z_RLE, Z_FIXED}) {
      for (int flush : {Z_FULL_FLUSH, Z_SYNC_FLUSH, Z_PARTIAL_FLUSH}) {
        SCOPED_TRACE("level " + std::to_string(level) + " strategy " +
                     std::to_string(strategy) + " flush " +
                     std::to_string(flush));
        const Bytes stream = zlib_raw(input, level, strategy, flush);
        EXPECT_TRUE(agrees_with_zlib(stream));
        EXPECT_TRUE(scan_deflate(stream, input.size()).has_value());
      }
    }
  }
  // Empty input: a lone final block of each kind zlib makes.
  for (int level : {0, 6})
    for (int strategy : {Z_DEFAULT_STRATEGY, Z_FIXED})
      EXPECT_TRUE(agrees_with_zlib(zlib_raw({}, level, strategy, Z_NO_FLUSH)));
}

// Deflate bits, least significant first; a Huffman code is given as its
// canonical value and sent most significant bit first (RFC 1951 3.1.1).
class BitWriter {
 public:
  void bits(u32 value, u32 count) {
    for (u32 i = 0; i < count; ++i) push((value >> i) & 1);
  }
  void code(u32 value, u32 len) {
    for (u32 i = len; i-- > 0;) push((value >> i) & 1);
  }
  Bytes finish() const { return bytes_; }

 private:
  void push(u32 bit) {
    if (used_ % 8 == 0) bytes_.push_back(0);
    bytes_.back() = static_cast<u8>(bytes_.back() | bit << (used_ % 8));
    ++used_;
  }
  Bytes bytes_;
  u64 used_ = 0;
};

// The header of a dynamic block with the given code lengths, sent with a
// code length code of sixteen 4-bit codes (complete) for lengths 0..15, so
// that every length is sent as its own value in 4 bits.
void dynamic_header(BitWriter& w, bool final, const std::vector<u8>& litlen,
                    const std::vector<u8>& distance) {
  w.bits(final ? 1 : 0, 1);
  w.bits(2, 2);
  w.bits(static_cast<u32>(litlen.size() - 257), 5);
  w.bits(static_cast<u32>(distance.size() - 1), 5);
  w.bits(19 - 4, 4);  // all 19 code length code lengths
  // Order: 16 17 18 0 8 7 9 6 10 5 11 4 12 3 13 2 14 1 15.
  const u32 order[19] = {16, 17, 18, 0, 8,  7, 9,  6, 10, 5,
                         11, 4,  12, 3, 13, 2, 14, 1, 15};
  for (u32 symbol : order) w.bits(symbol < 16 ? 4 : 0, 3);
  // Canonical 4-bit codes of symbols 0..15 are the symbols themselves.
  for (u8 len : litlen) w.code(len, 4);
  for (u8 len : distance) w.code(len, 4);
}

TEST(DeflateScan, HandMadeBlocksZlibAcceptsOrRejects) {
  // A literal/length code with only the end-of-block code (one 1-bit code:
  // zlib accepts this incomplete code) and no distance code at all.
  {
    std::vector<u8> litlen(257, 0);
    litlen[256] = 1;
    BitWriter w;
    dynamic_header(w, true, litlen, {0});
    w.code(0, 1);  // end of block
    const Bytes stream = w.finish();
    EXPECT_TRUE(zlib_verdict(stream).has_value());
    EXPECT_TRUE(agrees_with_zlib(stream));
  }
  // The same code, but the other (unassigned) 1-bit pattern: invalid.
  {
    std::vector<u8> litlen(257, 0);
    litlen[256] = 1;
    BitWriter w;
    dynamic_header(w, true, litlen, {0});
    w.code(1, 1);
    const Bytes stream = w.finish();
    EXPECT_FALSE(zlib_verdict(stream).has_value());
    EXPECT_TRUE(agrees_with_zlib(stream));
  }
  // 'a' (1 bit), end of block and length 3 (2 bits each); a distance code
  // with a single 1-bit code for distance 1. Then: 'a', a match of 3 at
  // distance 1 (valid); the same with the unassigned distance bit, without
  // the literal (nothing to copy), or with the single distance code for a
  // longer distance than the output so far.
  for (u32 dist_symbol : {0u, 1u, 4u}) {
    std::vector<u8> litlen(258, 0);
    litlen['a'] = 1;
    litlen[256] = 2;
    litlen[257] = 2;
    std::vector<u8> distance(dist_symbol + 1, 0);
    distance[dist_symbol] = 1;
    for (u32 dist_bit : {0u, 1u}) {
      for (bool literal_first : {true, false}) {
        BitWriter w;
        dynamic_header(w, true, litlen, distance);
        if (literal_first) w.code(0, 1);  // 'a'
        w.code(3, 2);                     // length 3 (code 11)
        w.code(dist_bit, 1);
        if (dist_symbol == 4) w.bits(1, 1);  // distance 6: 5 + extra bit
        w.code(2, 2);                        // end of block (code 10)
        const Bytes stream = w.finish();
        SCOPED_TRACE("distance symbol " + std::to_string(dist_symbol) +
                     " bit " + std::to_string(dist_bit) + " literal " +
                     std::to_string(literal_first));
        EXPECT_TRUE(agrees_with_zlib(stream));
        // Valid only with the assigned code and a literal to copy from.
        EXPECT_EQ(zlib_verdict(stream).has_value(),
                  dist_bit == 0 && literal_first && dist_symbol == 0);
      }
    }
  }
  // Incomplete literal/length code of two codes (lengths 1 and 2): zlib
  // rejects it, and an over-subscribed one.
  for (u8 third : {0, 1}) {
    std::vector<u8> litlen(257, 0);
    litlen['a'] = 1;
    litlen[256] = 2;
    litlen['b'] = third;
    BitWriter w;
    dynamic_header(w, true, litlen, {1});
    w.code(0, 1);
    w.code(2, 2);
    const Bytes stream = w.finish();
    EXPECT_FALSE(zlib_verdict(stream).has_value());
    EXPECT_TRUE(agrees_with_zlib(stream));
  }
  // Stored blocks: an empty one, then "hi" final; with NLEN wrong; with a
  // byte after the end; and a reserved block type.
  const Bytes stored = {0x00, 0x00, 0x00, 0xff, 0xff, 0x01,
                        0x02, 0x00, 0xfd, 0xff, 'h',  'i'};
  EXPECT_TRUE(agrees_with_zlib(stored));
  const std::optional<DeflateScan> scan = scan_deflate(stored);
  ASSERT_TRUE(scan.has_value());
  EXPECT_EQ(scan->last_header_bit, 40u);
  EXPECT_EQ(scan->end_bit, 96u);
  EXPECT_EQ(scan->output_size, 2u);
  Bytes bad_nlen = stored;
  bad_nlen[8] ^= 1;
  EXPECT_FALSE(scan_deflate(bad_nlen).has_value());
  EXPECT_TRUE(agrees_with_zlib(bad_nlen));
  Bytes trailing = stored;
  trailing.push_back(0);
  EXPECT_FALSE(scan_deflate(trailing).has_value());
  EXPECT_TRUE(agrees_with_zlib(trailing));
  EXPECT_FALSE(scan_deflate(Bytes{0x07}).has_value());  // BTYPE 11
  EXPECT_TRUE(agrees_with_zlib(Bytes{0x07}));
  EXPECT_FALSE(scan_deflate(Bytes{}).has_value());
  EXPECT_TRUE(agrees_with_zlib(Bytes{}));
}

// Small valid streams of every block type, for the damage tests below.
std::vector<Bytes> damage_fixtures() {
  const Bytes text = text_bytes(3000);
  Bytes mixed = text_bytes(1500);
  for (const Bytes& part : {random_bytes(300, 5), elf_bytes(1500)})
    mixed.insert(mixed.end(), part.begin(), part.end());
  return {
      libdeflate_raw(text, 6),
      libdeflate_raw(mixed, 12),
      libdeflate_raw(random_bytes(200, 6), 1),
      libdeflate_raw(elf_bytes(2000), 9),
      zlib_raw(mixed, 6, Z_FIXED, Z_FULL_FLUSH),
      zlib_raw(mixed, 0, Z_DEFAULT_STRATEGY, Z_SYNC_FLUSH),
      zlib_raw(text, 9, Z_HUFFMAN_ONLY, Z_PARTIAL_FLUSH),
      zlib_raw(mixed, 1, Z_RLE, Z_FULL_FLUSH),
  };
}

TEST(DeflateScan, EveryTruncationIsRejectedLikeZlib) {
  for (const Bytes& stream : damage_fixtures()) {
    const u64 stride = static_cast<u64>(4 / trials(4));
    for (u64 n = 0; n < stream.size(); n += stride) {
      const std::span<const u8> prefix(stream.data(), n);
      ASSERT_TRUE(agrees_with_zlib(prefix)) << "prefix of " << n;
    }
  }
}

TEST(DeflateScan, RandomBitFlipsJudgedLikeZlib) {
  const std::vector<Bytes> fixtures = damage_fixtures();
  std::mt19937 rng(20261130);
  int accepted = 0;
  int rejected = 0;
  for (int trial = 0; trial < trials(6000); ++trial) {
    Bytes stream = fixtures[rng() % fixtures.size()];
    const int flips = 1 + static_cast<int>(rng() % 3);
    // Mostly near the start, where the block headers and code lengths are.
    const u64 span =
        rng() % 2 == 0 ? std::min<u64>(stream.size(), 64) : stream.size();
    for (int f = 0; f < flips; ++f) {
      const u64 bit = rng() % (span * 8);
      stream[bit / 8] = static_cast<u8>(stream[bit / 8] ^ (1u << (bit % 8)));
    }
    ASSERT_TRUE(agrees_with_zlib(stream)) << "trial " << trial;
    (zlib_verdict(stream) ? accepted : rejected)++;
  }
  // Both outcomes must have been exercised.
  EXPECT_GT(accepted, trials(100));
  EXPECT_GT(rejected, trials(100));
}

// Streams long enough for the scanner's two-lane walk (past the first
// 32 KiB of output, in blocks many times as long as the scout's leap):
// damage anywhere in them, which that walk may meet first in either lane.
TEST(DeflateScan, DamageInLongStreamsJudgedLikeZlib) {
  Bytes mixed = elf_bytes(200000);
  for (const Bytes& part : {text_bytes(100000), random_bytes(20000, 8)})
    mixed.insert(mixed.end(), part.begin(), part.end());
  const std::vector<Bytes> streams = {libdeflate_raw(elf_bytes(300000), 6),
                                      libdeflate_raw(mixed, 9)};
  std::mt19937 rng(31);
  int rejected = 0;
  for (const Bytes& stream : streams) {
    ASSERT_GT(stream.size(), 50000u);
    ASSERT_TRUE(agrees_with_zlib(stream));
    for (int trial = 0; trial < trials(120); ++trial) {
      Bytes damaged = stream;
      const u64 bit = rng() % (damaged.size() * 8);
      damaged[bit / 8] = static_cast<u8>(damaged[bit / 8] ^ (1u << (bit % 8)));
      ASSERT_TRUE(agrees_with_zlib(damaged)) << "flipped bit " << bit;
      if (!zlib_verdict(damaged)) ++rejected;
      const u64 cut = rng() % damaged.size();
      ASSERT_TRUE(agrees_with_zlib(std::span<const u8>(stream.data(), cut)))
          << "cut at " << cut;
    }
  }
  EXPECT_GT(rejected, 0);
}

TEST(DeflateScan, RandomBytesJudgedLikeZlib) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < trials(3000); ++trial) {
    Bytes junk(1 + rng() % 200);
    for (u8& b : junk) b = static_cast<u8>(rng());
    // A valid block type in the first byte more often than chance.
    if (trial % 2 == 0) junk[0] = static_cast<u8>((junk[0] & ~6u) | 4u);
    ASSERT_TRUE(agrees_with_zlib(junk)) << "trial " << trial;
  }
}

// make_non_final() with a wrong inflated size: the scanner declines and
// zlib's pass finds the same positions, so the output is unchanged.
TEST(DeflateScan, MakeNonFinalFallsBackToZlib) {
  const Bytes input = text_bytes(50000);
  const Bytes stream = libdeflate_raw(input, 6);
  Bytes scanned = stream;
  make_non_final(scanned, 0, "scanned", input.size());
  Bytes fallback = stream;
  make_non_final(fallback, 0, "fallback", input.size() + 1);
  EXPECT_EQ(scanned, fallback);
  // Joined with a final stream it inflates to both inputs.
  const Bytes tail = libdeflate_raw(input, 1);
  scanned.insert(scanned.end(), tail.begin(), tail.end());
  Bytes expected = input;
  expected.insert(expected.end(), input.begin(), input.end());
  EXPECT_EQ(writer_test::zlib_inflate_raw(scanned), expected);
}

}  // namespace
