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

#include "libpkg/base/error.hpp"
#include "reader_zip_builder.hpp"

namespace libpkg::archive {
namespace {

using namespace reader_testing;

// 16 MiB of mixed text and noise: compressible, but not trivially.
Bytes content() {
  Bytes b(16u << 20);
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

}  // namespace
}  // namespace libpkg::archive
