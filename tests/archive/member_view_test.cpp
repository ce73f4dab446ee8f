// SPDX-License-Identifier: BSD-3-Clause
// archive::open_member: a deflated member filled only as far as it is read,
// in any order (prefix, far islands, gaps that restart the inflater), with
// the same bytes as a full read; errors name the archive and the member.
#include "libpkg/archive/member_view.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <random>
#include <thread>

#include "archive/reader_inflate.hpp"
#include "libpkg/base/error.hpp"
#include "libpkg/base/sha256.hpp"
#include "reader_zip_builder.hpp"

namespace libpkg::archive {
namespace {

using namespace reader_testing;

// 16 MiB (or `size`) of mixed text and noise: compressible, but not
// trivially.
Bytes content(std::size_t size = 16u << 20) {
  Bytes b(size);
  std::mt19937 rng(7);
  for (std::size_t i = 0; i < b.size(); ++i)
    b[i] = (i / 4096) % 3 == 0 ? static_cast<std::uint8_t>(rng())
                               : static_cast<std::uint8_t>('a' + i % 23);
  return b;
}

std::shared_ptr<const ZipReader> zip_of(const std::vector<Member>& members) {
  return std::make_shared<const ZipReader>(
      ZipReader::from_bytes(build_zip(members).bytes, "test.zip"));
}

TEST(MemberView, ReadsInAnyOrderAndInflatesOnlyWhatIsRead) {
  const Bytes data = content();
  auto zip = zip_of({file("lib.so", data, 8)});
  auto view = open_member(zip, zip->entries()[0]);
  ByteView v = view->view("lib.so");
  ASSERT_EQ(v.size(), data.size());
  auto same = [&](u64 off, u64 n) {
    auto got = v.range(off, n, "range");
    ASSERT_TRUE(std::equal(got.begin(), got.end(), data.begin() + off));
  };
  same(0, 64);
  EXPECT_LE(view->inflated(), 256u << 10);
  same(12u << 20, 4096);  // a far island, the gap not kept
  EXPECT_LE(view->inflated(), (256u << 10) + 4096);
  same(5u << 20, 100);         // in the gap: the inflater restarts
  same((12u << 20) + 10, 8);   // still in its island
  same(300 << 10, 1000);       // near the prefix: the prefix grows
  same(data.size() - 16, 16);  // the end (stream end and CRC checked)
  same(0, data.size());
}

TEST(MemberView, ConcurrentReadersSeeTheSameBytes) {
  const Bytes data = content();
  auto zip = zip_of({file("lib.so", data, 8)});
  auto view = open_member(zip, zip->entries()[0]);
  std::vector<std::thread> threads;
  std::atomic<int> bad{0};
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      ByteView v = view->view("lib.so");
      for (u64 off = (t * 3u) << 20; off + 4096 <= data.size();
           off += 1u << 20) {
        auto got = v.range(off, 4096, "range");
        if (!std::equal(got.begin(), got.end(), data.begin() + off)) ++bad;
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(bad.load(), 0);
}

TEST(MemberView, StoredMembersAreViewedInPlace) {
  const Bytes data = to_bytes(
      "\x7f"
      "ELF stored bytes");
  auto zip = zip_of({file("a.so", data, 0)});
  auto view = open_member(zip, zip->entries()[0]);
  ByteView v = view->view("a.so");
  EXPECT_FALSE(v.is_lazy());
  EXPECT_EQ(v.range(0, data.size(), "all")[5], data[5]);
  EXPECT_EQ(view->inflated(), 0u);
}

TEST(MemberView, TruncatedStreamIsAnErrorNamingTheMemberWhenReached) {
  const Bytes data = content();
  Member m = file("lib/libcut.so", data, 8);
  Bytes comp = raw_deflate(data);
  comp.resize(comp.size() / 2);
  m.compressed = comp;
  auto zip = zip_of({m});
  auto view = open_member(zip, zip->entries()[0]);
  ByteView v = view->view("lib/libcut.so");
  EXPECT_NO_THROW(v.range(0, 4096, "head"));  // before the cut: fine
  try {
    v.range(data.size() - 8, 8, "tail");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::format);
    EXPECT_NE(std::string(e.what()).find("test.zip"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("lib/libcut.so: compressed data"),
              std::string::npos)
        << e.what();
  }
  // The member fails the same way for every later reader.
  EXPECT_THROW(v.range(data.size() - 8, 8, "tail"), Error);
}

TEST(MemberView, CrcIsCheckedWhenTheMemberIsReadToItsEnd) {
  const Bytes data = content();
  Member m = file("lib.so", data, 8);
  m.crc = crc_of(data) ^ 1;
  auto zip = zip_of({m});
  auto view = open_member(zip, zip->entries()[0]);
  ByteView v = view->view("lib.so");
  EXPECT_NO_THROW(v.range(0, 1u << 20, "head"));
  EXPECT_THROW(v.range(0, data.size(), "all"), Error);
}

// Whether an inflater started at `p` gives exactly the rest of `data`, the
// only member of `zip` (the stream's end checked there).
bool resumes_to_rest(const ZipReader& zip, const reader::ResumePoint& p,
                     const Bytes& data) {
  const ZipEntry& entry = zip.entries()[0];
  reader::MemberInflater resumed("test.zip", entry, zip.raw(entry), false, p);
  Bytes rest(data.size() - p.produced);
  std::size_t have = 0;
  while (std::size_t got = resumed.next(std::span<u8>(rest).subspan(have)))
    have += got;
  return have == rest.size() &&
         std::equal(rest.begin(), rest.end(),
                    data.begin() + static_cast<long>(p.produced));
}

// The inflater's own resume points (zran.c's technique) start another
// inflater exactly where it stood: between two blocks, at any bit, with the
// window back-references reach.
TEST(ResumePoints, EveryPointResumesToTheSameBytes) {
  const Bytes data = content();
  auto zip = zip_of({file("lib.so", data, 8)});
  const ZipEntry& entry = zip->entries()[0];
  const std::span<const u8> raw = zip->raw(entry);
  std::vector<reader::ResumePoint> points;
  Bytes all(data.size());
  {
    reader::MemberInflater first("test.zip", entry, raw);
    first.record_resume_points(points, 1u << 20);
    std::size_t have = 0;
    while (std::size_t got =
               first.next(std::span<u8>(all).subspan(have, 100000)))
      have += got;
    ASSERT_EQ(have, data.size());
  }
  EXPECT_EQ(all, data);
  ASSERT_GE(points.size(), 12u);
  std::size_t unaligned = 0;
  u64 last = 0;
  for (const reader::ResumePoint& p : points) {
    EXPECT_GE(p.produced, last + (1u << 20));
    last = p.produced;
    unaligned += p.bit % 8 != 0;
    ASSERT_EQ(p.window.size(), 32768u);
    EXPECT_TRUE(std::equal(p.window.begin(), p.window.end(),
                           data.begin() + (p.produced - 32768)));
    EXPECT_TRUE(resumes_to_rest(*zip, p, data)) << "at bit " << p.bit;
  }
  EXPECT_GT(unaligned, 0u);  // blocks end at any bit
  reader::ResumePoint past = points.back();
  past.bit = raw.size() * 8 + 3;
  EXPECT_THROW(reader::MemberInflater("test.zip", entry, raw, false, past),
               Error);
}

// However large the member, the points stay at most `max_points`: every
// other one is dropped and the spacing doubles, and each still resumes.
TEST(ResumePoints, ThinnedToTheirBound) {
  const Bytes data = content();
  auto zip = zip_of({file("lib.so", data, 8)});
  const ZipEntry& entry = zip->entries()[0];
  const std::span<const u8> raw = zip->raw(entry);
  std::vector<reader::ResumePoint> points;
  {
    reader::MemberInflater first("test.zip", entry, raw);
    first.record_resume_points(points, 64u << 10, 16);
    Bytes sink(1u << 20);
    while (first.next(sink) != 0) {
    }
  }
  ASSERT_GE(points.size(), 8u);
  EXPECT_LT(points.size(), 16u);
  // 16 MiB at 64 KiB would be 256 points: thinned to 1 MiB apart or more.
  for (std::size_t i = 1; i < points.size(); ++i)
    EXPECT_GE(points[i].produced - points[i - 1].produced, 1u << 20);
  EXPECT_TRUE(resumes_to_rest(*zip, points[points.size() / 2], data));
}

// A read behind the inflater (a library's string table, read after its
// dynamic section near the end) starts from the last resume point before
// it, not from the member's start; the first inflater keeps its place, and
// reaching the end it still checks the CRC and gives the digest.
TEST(MemberView, ReadsBehindTheInflaterStartAtTheLastResumePoint) {
  const Bytes data = content(40u << 20);
  auto zip = zip_of({file("lib.so", data, 8)});
  auto view = open_member(zip, zip->entries()[0]);
  ByteView v = view->view("lib.so");
  auto same = [&](u64 off, u64 n) {
    auto got = v.range(off, n, "range");
    ASSERT_TRUE(std::equal(got.begin(), got.end(), data.begin() + off));
  };
  same(0, 64);
  same(36u << 20, 4096);  // through the gap: resume points every 8 MiB
  const u64 passed = view->decoded();
  EXPECT_LE(passed, (36u << 20) + (1u << 20));
  same(21u << 20, 100);  // behind: from the point near 16 MiB
  EXPECT_LE(view->decoded() - passed, 6u << 20);
  const u64 then = view->decoded();
  same(3u << 20, 100);  // before the first point: from the start
  EXPECT_LE(view->decoded() - then, (3u << 20) + (1u << 20));
  same(data.size() - 16, 16);  // the first inflater goes on to the end
  EXPECT_LE(view->decoded(), data.size() + (9u << 20));
  ASSERT_TRUE(view->digest().has_value());
  EXPECT_EQ(*view->digest(), Sha256::of(data));
  same(30u << 20, 1000);  // after the end: from a point again
  same(0, data.size());
  // A view that may use restart points (`show`) does not hash: only a
  // repair's sequential view needs the digest.
  auto shown = open_member(zip, zip->entries()[0], RestartPoints::use);
  EXPECT_NO_THROW(shown->view("lib.so").range(0, data.size(), "all"));
  EXPECT_FALSE(shown->digest().has_value());
}

// Ranges read one after the other past the prefix, touching or overlapping,
// are one island: a table read entry by entry is counted (and looked up)
// once.
TEST(MemberView, TouchingIslandsAreOne) {
  const Bytes data = content();
  auto zip = zip_of({file("lib.so", data, 8)});
  auto view = open_member(zip, zip->entries()[0]);
  ByteView v = view->view("lib.so");
  v.range(0, 64, "head");
  const u64 prefix = view->inflated();
  const u64 at = 10u << 20;
  for (u64 off = at; off < at + 4000; off += 4) v.range(off, 4, "entry");
  EXPECT_EQ(view->inflated(), prefix + 4000);
  v.range(at + 3000, 2000, "overlapping");
  EXPECT_EQ(view->inflated(), prefix + 5000);
  v.range(at - 100, 100, "before");
  EXPECT_EQ(view->inflated(), prefix + 5100);
  auto got = v.range(at - 100, 5100, "all of it");
  EXPECT_TRUE(std::equal(got.begin(), got.end(), data.begin() + (at - 100)));
}

// A range that starts behind the inflater and reaches past it: the part
// past it is that inflater's (from the start), so the CRC is still checked
// at the end.
TEST(MemberView, ARangeFromBehindToTheEndStillChecksTheCrc) {
  const Bytes data = content(24u << 20);
  Member m = file("lib.so", data, 8);
  m.crc = crc_of(data) ^ 1;
  auto zip = zip_of({m});
  auto view = open_member(zip, zip->entries()[0]);
  ByteView v = view->view("lib.so");
  EXPECT_NO_THROW(v.range(0, 64, "head"));
  EXPECT_NO_THROW(v.range(20u << 20, 4096, "far"));
  EXPECT_THROW(v.range(10u << 20, data.size() - (10u << 20), "rest"), Error);
}

}  // namespace
}  // namespace libpkg::archive
