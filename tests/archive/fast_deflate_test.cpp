// SPDX-License-Identifier: BSD-3-Clause
// The igzip deflater for nearly random runs (archive/fast_deflate.hpp): its
// streams are checked by zlib, final and non-final (joined to a following
// stream without any rewriting), and its refusals leave the output as it
// was.
#include "archive/fast_deflate.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "writer_fixtures.hpp"

namespace {

using namespace libpkg;
using namespace libpkg::archive;
using namespace writer_test;

constexpr u64 kMiB = u64{1} << 20;

// Random bytes with an 8 KiB zero run every 256 KiB: compressible, but only
// a little, like the packed device code plan_chunk() sends here.
std::vector<u8> nearly_random(u64 size, u32 seed) {
  std::vector<u8> bytes = random_bytes(size, seed);
  for (u64 at = 0; at + 8192 <= size; at += 256 * 1024)
    std::fill(bytes.begin() + static_cast<std::ptrdiff_t>(at),
              bytes.begin() + static_cast<std::ptrdiff_t>(at + 8192), 0);
  return bytes;
}

TEST(FastDeflate, FinalStreamInflatesToItsInput) {
  const std::vector<u8> input = nearly_random(3 * kMiB / 2, 1);
  FastDeflater deflater;
  std::vector<u8> out;
  ASSERT_TRUE(deflater.append(input, true, input.size(), out));
  EXPECT_LT(out.size(), input.size() - 5 * 8192);  // the zero runs shrank
  EXPECT_TRUE(zlib_inflate_raw(out) == input);
}

TEST(FastDeflate, NonFinalStreamJoinsTheNextWithoutRewriting) {
  // A sync flush ends on a byte boundary with no BFINAL block: the next
  // stream's bytes simply follow, which make_non_final() would otherwise
  // have to scan for.
  const std::vector<u8> first = nearly_random(kMiB, 2);
  const std::vector<u8> second = text_bytes(100000);
  FastDeflater deflater;
  std::vector<u8> joined = {};
  ASSERT_TRUE(deflater.append(first, false, first.size(), joined));
  ASSERT_GE(joined.size(), 4u);
  // The empty stored block of a sync flush: LEN 0, NLEN 0xffff.
  EXPECT_TRUE(std::equal(joined.end() - 4, joined.end(),
                         std::vector<u8>{0, 0, 0xff, 0xff}.begin()));
  ASSERT_TRUE(deflater.append(second, true, second.size(), joined));
  std::vector<u8> expected = first;
  expected.insert(expected.end(), second.begin(), second.end());
  EXPECT_TRUE(zlib_inflate_raw(joined) == expected);
}

TEST(FastDeflate, RunsLargerThanOneFeedAreFedInPieces) {
  // Runs over kMaxFeed (1 GiB) go in pieces: the same loop with 64 KiB
  // pieces, which do not divide the run, final and non-final (then joined
  // to a final stream of another run).
  const std::vector<u8> input = nearly_random(kMiB + 12345, 7);
  const std::vector<u8> next = nearly_random(kMiB, 8);
  for (bool final : {false, true}) {
    SCOPED_TRACE(final);
    FastDeflater deflater(64 * 1024);
    std::vector<u8> out;
    ASSERT_TRUE(deflater.append(input, final, input.size(), out));
    EXPECT_LT(out.size(), input.size());
    std::vector<u8> expected = input;
    if (!final) {
      ASSERT_TRUE(FastDeflater().append(next, true, next.size(), out));
      expected.insert(expected.end(), next.begin(), next.end());
    }
    EXPECT_TRUE(zlib_inflate_raw(out) == expected);
  }
}

TEST(FastDeflate, AppendsAfterWhatTheOutputHolds) {
  const std::vector<u8> input = nearly_random(kMiB, 3);
  FastDeflater deflater;
  std::vector<u8> alone, after = {1, 2, 3};
  ASSERT_TRUE(deflater.append(input, true, input.size(), alone));
  ASSERT_TRUE(deflater.append(input, true, input.size(), after));
  ASSERT_EQ(after.size(), alone.size() + 3);
  EXPECT_TRUE(std::equal(after.begin(), after.begin() + 3,
                         std::vector<u8>{1, 2, 3}.begin()));
  EXPECT_TRUE(std::equal(alone.begin(), alone.end(), after.begin() + 3));
}

TEST(FastDeflate, RefusesAtTheLimitAndLeavesTheOutput) {
  FastDeflater deflater;
  // Random bytes do not shrink: no output under their own size.
  const std::vector<u8> noise = random_bytes(kMiB, 4);
  std::vector<u8> out = {9};
  EXPECT_FALSE(deflater.append(noise, true, noise.size(), out));
  EXPECT_EQ(out, std::vector<u8>{9});
  // A stream that would fit, but not in the limit given; the deflater is
  // reusable afterwards and emits what a fresh one does.
  const std::vector<u8> input = nearly_random(kMiB, 5);
  std::vector<u8> fresh;
  ASSERT_TRUE(FastDeflater().append(input, false, input.size(), fresh));
  EXPECT_FALSE(deflater.append(input, false, fresh.size(), out));
  EXPECT_EQ(out, std::vector<u8>{9});
  std::vector<u8> again;
  ASSERT_TRUE(deflater.append(input, false, fresh.size() + 1, again));
  EXPECT_EQ(again, fresh);
}

TEST(FastDeflate, SameInputSameBytesOnEveryDeflater) {
  const std::vector<u8> input = nearly_random(2 * kMiB, 6);
  FastDeflaterPool pool;
  std::vector<u8> a, b;
  {
    FastDeflaterPool::Lease lease(pool);
    ASSERT_TRUE(lease.get().append(input, false, input.size(), a));
  }
  {
    FastDeflaterPool::Lease first(pool);   // the idle one
    FastDeflaterPool::Lease second(pool);  // a new one
    ASSERT_TRUE(second.get().append(input, false, input.size(), b));
    std::vector<u8> c;
    ASSERT_TRUE(first.get().append(input, false, input.size(), c));
    EXPECT_EQ(c, a);
  }
  EXPECT_EQ(a, b);
}

TEST(FastDeflate, FingerprintNamesIsalAndIsStable) {
  const std::string& print = fast_deflate_fingerprint();
  EXPECT_EQ(print.rfind("isa-l ", 0), 0u) << print;
  EXPECT_EQ(print.size(), print.find(' ', 6) + 1 + 64) << print;  // + SHA-256
  EXPECT_EQ(fast_deflate_fingerprint(), print);
}

}  // namespace
