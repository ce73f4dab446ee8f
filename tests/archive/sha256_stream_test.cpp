// SPDX-License-Identifier: BSD-3-Clause
// Sha256Stream (archive/sha256_stream.hpp): plain SHA-256 whatever the
// engine and however the bytes are split, also when two streams take the
// same bytes at once from different block offsets; and the chunk cache's
// key computed through it equals ChunkCache::key().
#include "archive/sha256_stream.hpp"

#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "libpkg/archive/chunk_cache.hpp"
#include "libpkg/base/sha256.hpp"

namespace {

using namespace libpkg;
using namespace libpkg::archive;
using Engine = Sha256Stream::Engine;

std::vector<u8> noise(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::vector<u8> v(n);
  for (auto& b : v) b = static_cast<u8>(rng());
  return v;
}

// Two streams under test and their OpenSSL references, each stream given
// its own prefix of `all` (pa bytes from 0, pb bytes from 500: partial
// blocks of different lengths).
struct TwoStreams {
  Sha256Stream a, b;
  Sha256 ra, rb;
  TwoStreams(Engine engine, std::span<const u8> all, std::size_t pa,
             std::size_t pb)
      : a(engine), b(engine) {
    a.update(all.first(pa));
    ra.update(all.first(pa));
    b.update(all.subspan(500, pb));
    rb.update(all.subspan(500, pb));
  }
};

std::vector<Engine> engines() {
  std::vector<Engine> e = {Engine::openssl};
  if (Sha256Stream::cpu_has_sha_extensions()) e.push_back(Engine::automatic);
  return e;
}

TEST(Sha256Stream, EnginesAgreeWithOpenSslAtEveryPaddingEdge) {
  const std::vector<u8> data = noise(300, 1);
  for (Engine engine : engines()) {
    for (std::size_t n = 0; n <= 200; ++n) {
      Sha256Stream s(engine);
      s.update(std::span<const u8>(data).first(n));
      EXPECT_EQ(s.finish(), Sha256::of(std::span<const u8>(data).first(n)))
          << n;
    }
  }
  Sha256Stream automatic;
  EXPECT_EQ(automatic.accelerated(), Sha256Stream::cpu_has_sha_extensions());
  EXPECT_FALSE(Sha256Stream(Engine::openssl).accelerated());
}

// Empty updates (an empty member's span, whose data() is null) before,
// inside and after a partial block change nothing, in both engines and
// through update_both: the sanitizer build checks no null pointer reaches
// memcpy.
TEST(Sha256Stream, EmptyNullSpansChangeNothing) {
  const std::vector<u8> data = noise(100, 4);
  const std::span<const u8> none;
  ASSERT_EQ(none.data(), nullptr);
  for (Engine engine : engines()) {
    Sha256Stream empty(engine);
    empty.update(none);
    EXPECT_EQ(empty.finish(), Sha256::of(none));
    Sha256Stream a(engine), b(engine);
    a.update(none);
    a.update(std::span<const u8>(data).first(30));
    a.update(none);
    b.update(std::span<const u8>(data).first(64));
    Sha256Stream::update_both(a, b, none);
    a.update(std::span<const u8>(data).subspan(30));
    b.update(none);
    EXPECT_EQ(a.finish(), Sha256::of(data));
    EXPECT_EQ(b.finish(), Sha256::of(std::span<const u8>(data).first(64)));
  }
}

TEST(Sha256Stream, UpdateBothFromAnyOffsetsAndSplits) {
  const std::vector<u8> data = noise(1 << 20, 2);
  std::mt19937 rng(3);
  for (Engine engine : engines()) {
    for (int round = 0; round < 400; ++round) {
      SCOPED_TRACE(round);
      // Each stream starts with its own prefix (partial blocks of different
      // lengths), then both take the same bytes in up to three updates.
      const std::size_t pa = rng() % 150, pb = rng() % 150;
      const std::size_t n =
          round % 20 == 0 ? rng() % data.size() : rng() % 9000;
      const std::size_t cut1 = n == 0 ? 0 : rng() % (n + 1);
      const std::size_t cut2 = cut1 + (n == cut1 ? 0 : rng() % (n - cut1 + 1));
      const std::span<const u8> all(data);
      const auto body = all.subspan(1000, n);
      TwoStreams t(engine, all, pa, pb);
      auto& [a, b, ra, rb] = t;
      for (auto piece : {body.first(cut1), body.subspan(cut1, cut2 - cut1),
                         body.subspan(cut2)}) {
        Sha256Stream::update_both(a, b, piece);
        ra.update(piece);
        rb.update(piece);
      }
      a.update(all.first(17));  // streams stay usable after update_both
      ra.update(all.first(17));
      EXPECT_EQ(a.finish(), ra.finish());
      EXPECT_EQ(b.finish(), rb.finish());
    }
  }
}

TEST(Sha256Stream, UpdatePairHashesEachStreamItsOwnBytes) {
  // Different bytes of different lengths (whole blocks for both, for one,
  // partial blocks, nothing) after prefixes that leave partial blocks.
  const std::vector<u8> data = noise(40000, 6);
  const std::span<const u8> all(data);
  std::mt19937 rng(7);
  for (Engine engine : engines()) {
    for (int round = 0; round < 200; ++round) {
      SCOPED_TRACE(round);
      const std::size_t pa = rng() % 100, pb = rng() % 100;
      const std::size_t nx = round % 10 == 0 ? 0 : rng() % 9000;
      const std::size_t ny = round % 10 == 1 ? 0 : rng() % 9000;
      const auto x = all.subspan(1000, nx), y = all.subspan(20000, ny);
      TwoStreams t(engine, all, pa, pb);
      auto& [a, b, ra, rb] = t;
      Sha256Stream::update_pair(a, x, b, y);
      ra.update(x);
      rb.update(y);
      b.update(all.first(33));  // streams stay usable after update_pair
      rb.update(all.first(33));
      EXPECT_EQ(a.finish(), ra.finish());
      EXPECT_EQ(b.finish(), rb.finish());
    }
  }
}

TEST(Sha256Stream, MixedEnginesStillHashBoth) {
  const std::vector<u8> data = noise(100000, 4);
  Sha256Stream a(Engine::automatic), b(Engine::openssl);
  Sha256Stream::update_both(a, b, data);
  EXPECT_EQ(a.finish(), Sha256::of(data));
  EXPECT_EQ(b.finish(), Sha256::of(data));
}

TEST(Sha256Stream, ChunkKeyThroughThePrefixEqualsChunkCacheKey) {
  const std::vector<u8> data = noise(70000, 5);
  for (Engine engine : engines()) {
    for (bool final : {false, true}) {
      for (int level : {1, 6, 9}) {
        Sha256Stream key(engine), record(engine);
        key.update(ChunkCache::key_prefix(data.size(), level, final));
        Sha256Stream::update_both(key, record, data);
        EXPECT_EQ(key.finish(), ChunkCache::key(data, level, final));
        EXPECT_EQ(record.finish(), Sha256::of(data));
      }
    }
  }
  EXPECT_EQ(ChunkCache::key_prefix(5, 6, true, "fp"),
            ChunkCache::key_prefix(5, 6, true, "fp"));
  EXPECT_NE(ChunkCache::key_prefix(5, 6, true, "fp"),
            ChunkCache::key_prefix(6, 6, true, "fp"));
}

}  // namespace
