// SPDX-License-Identifier: BSD-3-Clause
// The writer stores chunks deflate cannot meaningfully shrink without
// running the compressor (archive/incompressible.hpp). These tests pin what
// counts as incompressible, and that such chunks still round-trip.
#include "archive/incompressible.hpp"

#include <gtest/gtest.h>
#include <zlib.h>

#include <random>
#include <vector>

namespace la = libpkg::archive;
using libpkg::u8;

namespace {

std::vector<u8> random_bytes(std::size_t n, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::vector<u8> v(n);
  for (auto& b : v) b = static_cast<u8>(rng());
  return v;
}

// What deflate (zlib, level 6) actually achieves, for the bound the
// heuristic promises.
double zlib_ratio(const std::vector<u8>& data) {
  uLongf out_len = compressBound(data.size());
  std::vector<u8> out(out_len);
  EXPECT_EQ(compress2(out.data(), &out_len, data.data(), data.size(), 6), Z_OK);
  return static_cast<double>(out_len) / static_cast<double>(data.size());
}

TEST(Incompressible, RandomDataIsIncompressible) {
  auto data = random_bytes(8 << 20, 1);
  EXPECT_TRUE(la::looks_incompressible(data));
  EXPECT_GT(zlib_ratio(data), 0.999);
}

TEST(Incompressible, SmallChunksAreAlwaysCompressed) {
  auto data = random_bytes(la::kMinSizeForIncompressibleCheck - 1, 2);
  EXPECT_FALSE(la::looks_incompressible(data));
}

TEST(Incompressible, RepeatedRandomBlocksAreCompressible) {
  // Every byte value equally frequent (entropy 8 bits) but the data is one
  // 4 KiB block over and over: back references halve it and more.
  auto block = random_bytes(4096, 3);
  std::vector<u8> data;
  while (data.size() < (4u << 20))
    data.insert(data.end(), block.begin(), block.end());
  EXPECT_FALSE(la::looks_incompressible(data));
  EXPECT_LT(zlib_ratio(data), 0.1);
}

TEST(Incompressible, SkewedByteFrequenciesAreCompressible) {
  // No repeats to speak of, but a skewed distribution Huffman codes exploit.
  std::mt19937_64 rng(4);
  std::vector<u8> data(4 << 20);
  for (auto& b : data) b = static_cast<u8>(rng() % 200);
  EXPECT_FALSE(la::looks_incompressible(data));
  EXPECT_LT(zlib_ratio(data), 0.985);
}

TEST(Incompressible, ARunOfZerosInRandomDataIsEnough) {
  // 2 % zeros in one place: the entropy stays high, the repeats don't.
  auto data = random_bytes(8 << 20, 5);
  std::fill(data.begin() + (3 << 20), data.begin() + (3 << 20) + (160 << 10),
            0);
  EXPECT_FALSE(la::looks_incompressible(data));
}

TEST(Incompressible, NearlyRandomDataLosesLittle) {
  // Sparse short repeats: stored, and deflate would have gained < 0.5 %.
  auto data = random_bytes(8 << 20, 6);
  std::mt19937_64 rng(7);
  for (int i = 0; i < 500; ++i) {
    std::size_t from = rng() % (data.size() - 64),
                to = from + 1000 + rng() % 20000;
    if (to + 16 < data.size())
      std::copy_n(data.begin() + from, 16, data.begin() + to);
  }
  EXPECT_TRUE(la::looks_incompressible(data));
  EXPECT_GT(zlib_ratio(data), 0.995);
}

// The plan judges 1 MiB pieces, a remainder under 1 MiB joining the last
// one, and merges neighbours with the same verdict.
TEST(Incompressible, PlanJudgesPiecesAndMergesNeighbours) {
  constexpr libpkg::u64 kMiB = la::kIncompressiblePiece;
  std::mt19937_64 rng(8);
  std::vector<u8> skewed(kMiB);
  for (auto& b : skewed) b = static_cast<u8>(rng() % 200);
  std::vector<u8> chunk = skewed;
  const auto noise = random_bytes(3 * kMiB, 9);
  chunk.insert(chunk.end(), noise.begin(), noise.end());
  // 1.5 MiB left after 4 MiB: one last piece, compressible as a whole.
  chunk.insert(chunk.end(), skewed.begin(), skewed.end());
  chunk.insert(chunk.end(), noise.begin(), noise.begin() + kMiB / 2);
  const auto plan = la::plan_chunk(chunk);
  ASSERT_EQ(plan.size(), 3u);
  EXPECT_EQ(plan[0].begin, 0u);
  EXPECT_EQ(plan[0].end, kMiB);
  EXPECT_FALSE(plan[0].stored);
  EXPECT_EQ(plan[1].begin, kMiB);
  EXPECT_EQ(plan[1].end, 4 * kMiB);
  EXPECT_TRUE(plan[1].stored);
  EXPECT_EQ(plan[2].begin, 4 * kMiB);
  EXPECT_EQ(plan[2].end, chunk.size());
  EXPECT_FALSE(plan[2].stored);
  for (const auto& run : plan) EXPECT_FALSE(run.fast);  // 7.64 bits/byte
  EXPECT_FALSE(la::stores_whole_chunk(plan));

  // Nearly random, but a run of zeros repeats within the window: not
  // stored, deflated at the fast level; merged with its like neighbour.
  auto near = random_bytes(3 * kMiB, 12);
  std::fill(near.begin() + kMiB / 2, near.begin() + kMiB / 2 + (16 << 10), 0);
  std::fill(near.begin() + 2 * kMiB, near.begin() + 2 * kMiB + (16 << 10), 0);
  const auto fast = la::plan_chunk(near);
  ASSERT_EQ(fast.size(), 3u);
  EXPECT_TRUE(fast[0].fast);
  EXPECT_FALSE(fast[0].stored);
  EXPECT_EQ(fast[0].end, kMiB);
  EXPECT_TRUE(fast[1].stored);
  EXPECT_TRUE(fast[2].fast);
  EXPECT_EQ(fast[2].begin, 2 * kMiB);

  // Random throughout, with a 1.5 MiB last piece: stored whole.
  const auto random = random_bytes(5 * kMiB + kMiB / 2, 10);
  const auto all = la::plan_chunk(random);
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0].end, random.size());
  EXPECT_TRUE(la::stores_whole_chunk(all));

  // Under one piece: compressed, whatever it holds; empty too.
  const auto small = la::plan_chunk(random_bytes(kMiB - 1, 11));
  ASSERT_EQ(small.size(), 1u);
  EXPECT_FALSE(small[0].stored);
  const auto empty = la::plan_chunk({});
  ASSERT_EQ(empty.size(), 1u);
  EXPECT_EQ(empty[0].end, 0u);
  EXPECT_FALSE(empty[0].stored);
}

}  // namespace
