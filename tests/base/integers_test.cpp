// SPDX-License-Identifier: BSD-3-Clause
// Integer<T, LE>: byte order on disk, constexpr use, and the alignof-1
// property that lets on-disk structs be viewed at any address.
#include "libpkg/base/integers.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cstring>
#include <limits>

namespace libpkg {
namespace {

template <typename I>
std::array<u8, sizeof(I)> raw(const I& v) {
  std::array<u8, sizeof(I)> out;
  std::memcpy(out.data(), &v, sizeof(I));
  return out;
}

TEST(Integers, LittleEndianLayout) {
  ul16 a = 0x0102;
  ul32 b = 0x01020304;
  ul64 c = 0x0102030405060708;
  EXPECT_EQ(raw(a), (std::array<u8, 2>{0x02, 0x01}));
  EXPECT_EQ(raw(b), (std::array<u8, 4>{0x04, 0x03, 0x02, 0x01}));
  EXPECT_EQ(raw(c), (std::array<u8, 8>{0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02,
                                       0x01}));
}

TEST(Integers, BigEndianLayout) {
  ub16 a = 0x0102;
  ub32 b = 0x01020304;
  ub64 c = 0x0102030405060708;
  EXPECT_EQ(raw(a), (std::array<u8, 2>{0x01, 0x02}));
  EXPECT_EQ(raw(b), (std::array<u8, 4>{0x01, 0x02, 0x03, 0x04}));
  EXPECT_EQ(raw(c), (std::array<u8, 8>{0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07,
                                       0x08}));
}

template <typename I, typename T>
void expect_round_trips(std::initializer_list<T> values) {
  for (T v : values) {
    I i = v;
    EXPECT_EQ(static_cast<T>(i), v);
    EXPECT_EQ(i.value(), v);
    I j;
    j = v;
    EXPECT_EQ(j.value(), v);
  }
}

TEST(Integers, RoundTrips) {
  expect_round_trips<ul16, u16>({0, 1, 0x8000, 0xffff});
  expect_round_trips<ub16, u16>({0, 1, 0x8000, 0xffff});
  expect_round_trips<ul32, u32>({0, 1, 0xdeadbeef, 0xffffffff});
  expect_round_trips<ub32, u32>({0, 1, 0xdeadbeef, 0xffffffff});
  expect_round_trips<ul64, u64>({0, 1, 0x8000000000000000, ~u64{0}});
  expect_round_trips<ub64, u64>({0, 1, 0x8000000000000000, ~u64{0}});
  expect_round_trips<il32, i32>({0, -1, std::numeric_limits<i32>::min(),
                                 std::numeric_limits<i32>::max()});
  expect_round_trips<ib32, i32>({0, -1, std::numeric_limits<i32>::min(),
                                 std::numeric_limits<i32>::max()});
  expect_round_trips<il64, i64>({0, -1, std::numeric_limits<i64>::min(),
                                 std::numeric_limits<i64>::max()});
  expect_round_trips<ib64, i64>({0, -1, std::numeric_limits<i64>::min(),
                                 std::numeric_limits<i64>::max()});
}

TEST(Integers, NegativeValuesAreSignExtendedBytes) {
  ib32 v = -2;
  EXPECT_EQ(raw(v), (std::array<u8, 4>{0xff, 0xff, 0xff, 0xfe}));
  il64 w = -2;
  EXPECT_EQ(raw(w)[0], 0xfe);
  EXPECT_EQ(raw(w)[7], 0xff);
}

// The constexpr paths (byte loops) must agree with the runtime paths
// (memcpy + bswap).
constexpr u32 constexpr_read() {
  ub32 v = 0xa1b2c3d4;
  ul32 w = v.value();
  w = w.value() + 1;
  return w;
}
static_assert(constexpr_read() == 0xa1b2c3d5);
static_assert(ul64(0x1122334455667788).value() == 0x1122334455667788);
static_assert(ib64(-5).value() == -5);
static_assert(byteswap<u16>(0x1234) == 0x3412);
static_assert(byteswap<u32>(0x12345678) == 0x78563412);
static_assert(byteswap<u64>(0x0102030405060708) == 0x0807060504030201);

TEST(Integers, ConstexprAgreesWithRuntime) {
  constexpr ub32 c = 0x01020304;
  ub32 r = 0x01020304;
  EXPECT_EQ(raw(c), raw(r));
  EXPECT_EQ(constexpr_read(), 0xa1b2c3d5u);
}

static_assert(alignof(ul16) == 1 && alignof(ub32) == 1 && alignof(ul64) == 1 &&
              alignof(ib64) == 1);
static_assert(sizeof(ul16) == 2 && sizeof(ub32) == 4 && sizeof(il64) == 8);

// A struct of Integer<> fields has no padding and can be read at an odd
// address (as a member inside an archive may be).
struct Packed {
  ul16 a;
  ub32 b;
  ul64 c;
};
static_assert(sizeof(Packed) == 14 && alignof(Packed) == 1);

TEST(Integers, ReadAtUnalignedAddress) {
  alignas(8) u8 buf[32] = {};
  Packed p;
  p.a = 0xbeef;
  p.b = 0x01020304;
  p.c = 0x1122334455667788;
  for (int shift = 1; shift < 8; ++shift) {
    std::memcpy(buf + shift, &p, sizeof(p));
    const auto* q = reinterpret_cast<const Packed*>(buf + shift);
    EXPECT_EQ(q->a, 0xbeef);
    EXPECT_EQ(q->b, 0x01020304u);
    EXPECT_EQ(q->c, 0x1122334455667788u);
  }
}

TEST(Integers, AssignmentWritesInPlace) {
  u8 buf[5] = {0xaa, 0, 0, 0, 0};
  auto* v = reinterpret_cast<ub32*>(buf + 1);
  *v = 0x0a0b0c0d;
  EXPECT_EQ(buf[0], 0xaa);
  EXPECT_EQ(buf[1], 0x0a);
  EXPECT_EQ(buf[4], 0x0d);
}

}  // namespace
}  // namespace libpkg
