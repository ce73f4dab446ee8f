// SPDX-License-Identifier: BSD-3-Clause
// Fixed-width integers stored as raw bytes in a chosen byte order.
//
// Binary formats are read straight out of mmap'd files. Casting a pointer to
// `uint32_t*` over those bytes is undefined behaviour when the address is not
// aligned (archive members, fat Mach-O slices, a corrupt e_phoff) and silently
// wrong when the file's byte order differs from the host's. `Integer<T, LE>`
// holds `sizeof(T)` bytes with alignof 1, converts on every read and writes
// back in the file's order on assignment, so on-disk structs can be declared
// once and viewed (or patched) in place for any byte order.
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace libpkg {

/// Unsigned 8-bit integer (a byte).
using u8 = std::uint8_t;
/// Unsigned 16-bit integer, host byte order.
using u16 = std::uint16_t;
/// Unsigned 32-bit integer, host byte order.
using u32 = std::uint32_t;
/// Unsigned 64-bit integer, host byte order.
using u64 = std::uint64_t;
/// Signed 32-bit integer, host byte order.
using i32 = std::int32_t;
/// Signed 64-bit integer, host byte order.
using i64 = std::int64_t;

/// `v` with its bytes in reverse order.
template <typename T>
constexpr T byteswap(T v) {
  static_assert(std::is_integral_v<T>);
  if constexpr (sizeof(T) == 1) {
    return v;
  } else if constexpr (sizeof(T) == 2) {
    return static_cast<T>(__builtin_bswap16(static_cast<u16>(v)));
  } else if constexpr (sizeof(T) == 4) {
    return static_cast<T>(__builtin_bswap32(static_cast<u32>(v)));
  } else {
    return static_cast<T>(__builtin_bswap64(static_cast<u64>(v)));
  }
}

/// A `T` stored as sizeof(T) bytes in little-endian (`is_le`) or big-endian
/// order, alignof 1, for on-disk structs viewed in place.
template <typename T, bool is_le>
class Integer {
 public:
  static constexpr bool kNative =
      (std::endian::native == std::endian::little) == is_le;

  constexpr Integer() = default;
  /// Stores `v` in the file's byte order.
  constexpr Integer(T v) { store(v); }  // NOLINT: implicit by design

  /// The value, converted to host byte order.
  constexpr operator T() const {  // NOLINT: implicit by design
    T v = 0;
    if (std::is_constant_evaluated()) {
      for (int i = 0; i < static_cast<int>(sizeof(T)); ++i) {
        int shift = is_le ? 8 * i : 8 * (static_cast<int>(sizeof(T)) - 1 - i);
        v |= static_cast<T>(static_cast<T>(buf_[i]) << shift);
      }
      return v;
    }
    std::memcpy(&v, buf_, sizeof(T));
    return kNative ? v : byteswap(v);
  }

  /// Stores `v` in the file's byte order (patching the struct in place).
  constexpr Integer& operator=(T v) {
    store(v);
    return *this;
  }

  /// The value in host byte order (the same as the conversion operator).
  constexpr T value() const { return static_cast<T>(*this); }

 private:
  constexpr void store(T v) {
    if (std::is_constant_evaluated()) {
      for (int i = 0; i < static_cast<int>(sizeof(T)); ++i) {
        int shift = is_le ? 8 * i : 8 * (static_cast<int>(sizeof(T)) - 1 - i);
        buf_[i] =
            static_cast<u8>(static_cast<std::make_unsigned_t<T>>(v) >> shift);
      }
      return;
    }
    T w = kNative ? v : byteswap(v);
    std::memcpy(buf_, &w, sizeof(T));
  }

  u8 buf_[sizeof(T)] = {};
};

/// Unsigned 16-bit, little-endian on-disk integer.
using ul16 = Integer<u16, true>;
/// Unsigned 32-bit, little-endian on-disk integer.
using ul32 = Integer<u32, true>;
/// Unsigned 64-bit, little-endian on-disk integer.
using ul64 = Integer<u64, true>;
/// Signed 32-bit, little-endian on-disk integer.
using il32 = Integer<i32, true>;
/// Signed 64-bit, little-endian on-disk integer.
using il64 = Integer<i64, true>;
/// Unsigned 16-bit, big-endian on-disk integer.
using ub16 = Integer<u16, false>;
/// Unsigned 32-bit, big-endian on-disk integer.
using ub32 = Integer<u32, false>;
/// Unsigned 64-bit, big-endian on-disk integer.
using ub64 = Integer<u64, false>;
/// Signed 32-bit, big-endian on-disk integer.
using ib32 = Integer<i32, false>;
/// Signed 64-bit, big-endian on-disk integer.
using ib64 = Integer<i64, false>;

static_assert(alignof(ul64) == 1 && sizeof(ul64) == 8);
static_assert(ub32(0x01020304).value() == 0x01020304);

}  // namespace libpkg
