// SPDX-License-Identifier: BSD-3-Clause
// ByteView bounds checks and the checked arithmetic helpers: every failure is
// a format error that names the file and the (absolute) offset.
#include "libpkg/base/bytes.hpp"

#include <gtest/gtest.h>

#include <limits>
#include <vector>

namespace libpkg {
namespace {

constexpr u64 kMax = std::numeric_limits<u64>::max();

// Runs `f`, expects a format error and returns it.
template <typename F>
Error expect_format_error(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::format) << e.what();
    return e;
  }
  ADD_FAILURE() << "no libpkg::Error thrown";
  return Error(Errc::io, "", "");
}

class ByteViewTest : public ::testing::Test {
 protected:
  std::vector<u8> data_{'a', 'b', 0, 'c', 'd', 0, 'e', 'f'};
  ByteView view_{data_, "file.bin"};
};

TEST_F(ByteViewTest, Basics) {
  EXPECT_EQ(view_.size(), 8u);
  EXPECT_EQ(view_.data(), data_.data());
  EXPECT_EQ(view_.name(), "file.bin");
  EXPECT_EQ(view_.base(), 0u);
}

TEST_F(ByteViewTest, Contains) {
  EXPECT_TRUE(view_.contains(0, 8));
  EXPECT_TRUE(view_.contains(8, 0));
  EXPECT_TRUE(view_.contains(3, 5));
  EXPECT_FALSE(view_.contains(3, 6));
  EXPECT_FALSE(view_.contains(9, 0));
  EXPECT_FALSE(view_.contains(1, kMax));
  EXPECT_FALSE(view_.contains(kMax, 2));
}

TEST_F(ByteViewTest, RangeInBounds) {
  auto r = view_.range(3, 2, "thing");
  EXPECT_EQ(r.data(), data_.data() + 3);
  EXPECT_EQ(r.size(), 2u);
  EXPECT_EQ(view_.range(8, 0, "empty at end").size(), 0u);
}

TEST_F(ByteViewTest, RangePastEndNamesFileWhatAndOffset) {
  Error e = expect_format_error([&] { view_.range(6, 4, "widget table"); });
  EXPECT_EQ(e.file(), "file.bin");
  EXPECT_EQ(e.offset(), 6u);
  EXPECT_NE(e.message().find("widget table"), std::string::npos) << e.what();
  EXPECT_NE(std::string(e.what()).find("file.bin: "), std::string::npos);
  EXPECT_NE(std::string(e.what()).find("(at offset 0x6)"), std::string::npos);
}

TEST_F(ByteViewTest, RangeOverflowDoesNotWrap) {
  // offset + size wraps to 1; a naive `offset + size <= size()` would accept.
  Error e = expect_format_error([&] { view_.range(2, kMax, "wrapping"); });
  EXPECT_EQ(e.offset(), 2u);
  expect_format_error([&] { view_.range(kMax, 2, "wrapping"); });
}

TEST_F(ByteViewTest, SliceKeepsNameAndAddsBase) {
  ByteView s = view_.slice(3, 5, "member");
  EXPECT_EQ(s.name(), "file.bin");
  EXPECT_EQ(s.base(), 3u);
  EXPECT_EQ(s.size(), 5u);
  ByteView t = s.slice(3, 2, "inner");
  EXPECT_EQ(t.base(), 6u);
  EXPECT_EQ(t.data()[0], 'e');
  // Errors in a nested slice report the offset in the whole file.
  Error e = expect_format_error([&] { t.range(1, 2, "deep"); });
  EXPECT_EQ(e.offset(), 7u);
  expect_format_error([&] { view_.slice(4, 5, "too big"); });
}

TEST_F(ByteViewTest, CString) {
  EXPECT_EQ(view_.cstring(0, "s"), "ab");
  EXPECT_EQ(view_.cstring(1, "s"), "b");
  EXPECT_EQ(view_.cstring(2, "s"), "");
  EXPECT_EQ(view_.cstring(3, "s"), "cd");
}

TEST_F(ByteViewTest, CStringUnterminated) {
  Error e = expect_format_error([&] { view_.cstring(6, "symbol name"); });
  EXPECT_EQ(e.offset(), 6u);
  EXPECT_NE(e.message().find("symbol name"), std::string::npos);
  EXPECT_NE(e.message().find("NUL"), std::string::npos);
}

TEST_F(ByteViewTest, CStringPastEnd) {
  Error e = expect_format_error([&] { view_.cstring(8, "name"); });
  EXPECT_EQ(e.offset(), 8u);
  expect_format_error([&] { view_.cstring(kMax, "name"); });
}

TEST_F(ByteViewTest, CStringInSliceStopsAtSliceEnd) {
  // The NUL at index 5 is outside a slice [3, 5).
  ByteView s = view_.slice(3, 2, "cd");
  Error e = expect_format_error([&] { s.cstring(0, "string"); });
  EXPECT_EQ(e.offset(), 3u);
}

struct Rec {
  ul16 a;
  ub16 b;
};

TEST_F(ByteViewTest, At) {
  const Rec& r = view_.at<Rec>(1, "record");
  EXPECT_EQ(r.a, u16{0x0062});  // 'b', 0
  EXPECT_EQ(r.b, u16{0x6364});  // 'c', 'd'
  Error e = expect_format_error([&] { view_.at<Rec>(5, "record"); });
  EXPECT_EQ(e.offset(), 5u);
}

TEST(ByteViewEmpty, DefaultIsEmpty) {
  ByteView v;
  EXPECT_EQ(v.size(), 0u);
  EXPECT_TRUE(v.contains(0, 0));
  EXPECT_FALSE(v.contains(0, 1));
  expect_format_error([&] { v.cstring(0, "s"); });
}

TEST(CheckedArithmetic, Add) {
  EXPECT_EQ(checked_add(1, 2, "f", "x"), 3u);
  EXPECT_EQ(checked_add(kMax, 0, "f", "x"), kMax);
  Error e =
      expect_format_error([] { checked_add(kMax, 1, "lib.so", "vn_next"); });
  EXPECT_EQ(e.file(), "lib.so");
  EXPECT_NE(e.message().find("vn_next"), std::string::npos);
  EXPECT_NE(e.message().find("overflows"), std::string::npos);
}

TEST(CheckedArithmetic, Mul) {
  EXPECT_EQ(checked_mul(0, kMax, "f", "x"), 0u);
  EXPECT_EQ(checked_mul(u64{1} << 32, (u64{1} << 32) - 1, "f", "x"),
            u64{0xffffffff00000000});
  Error e = expect_format_error(
      [] { checked_mul(u64{1} << 32, u64{1} << 32, "lib.so", "table size"); });
  EXPECT_EQ(e.file(), "lib.so");
  EXPECT_NE(e.message().find("table size"), std::string::npos);
}

TEST(AlignUp, Values) {
  EXPECT_EQ(align_up(0, 8), 0u);
  EXPECT_EQ(align_up(1, 8), 8u);
  EXPECT_EQ(align_up(8, 8), 8u);
  EXPECT_EQ(align_up(9, 4), 12u);
  EXPECT_EQ(align_up(7, 0), 7u);
  EXPECT_EQ(align_up(7, 1), 7u);
  EXPECT_EQ(align_up(13, 6), 18u);  // not only powers of two
}

}  // namespace
}  // namespace libpkg
