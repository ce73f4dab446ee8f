// SPDX-License-Identifier: BSD-3-Clause
// Bounds-checked access to a region of bytes that belongs to a named file.
//
// Every parser takes a `ByteView` (never a path), so the same code reads a
// mmap'd file, a slice of an archive member or a buffer built by a test or a
// fuzzer. All range checks go through `range()`, which checks `offset + size`
// for overflow before comparing, and reports the file and offset on failure.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "libpkg/base/error.hpp"
#include "libpkg/base/integers.hpp"

namespace libpkg {

/// A bounds-checked, non-owning view of bytes that carries the file name (and
/// its offset in that file) for error messages.
class ByteView {
 public:
  ByteView() = default;
  /// Views `data` of the file `name`, found at offset `base` in that file.
  ByteView(std::span<const u8> data, std::string name, u64 base = 0)
      : data_(data), name_(std::move(name)), base_(base) {}

  /// The first byte of the view.
  const u8* data() const { return data_.data(); }
  /// The number of bytes in the view.
  u64 size() const { return data_.size(); }
  /// The bytes of the view as a span.
  std::span<const u8> span() const { return data_; }
  /// The file name used in error messages.
  const std::string& name() const { return name_; }
  /// Offset of this view inside its parent file, for error messages.
  u64 base() const { return base_; }

  /// True when [offset, offset + size) lies inside the view (overflow-safe);
  /// does not throw.
  bool contains(u64 offset, u64 size) const {
    return offset <= data_.size() && size <= data_.size() - offset;
  }

  /// The bytes [offset, offset + size); throws a format error naming `what`.
  std::span<const u8> range(u64 offset, u64 size, std::string_view what) const;

  /// A child view (an archive member, a section) that keeps the file name.
  ByteView slice(u64 offset, u64 size, std::string_view what) const;

  /// Views a packed on-disk struct (alignof 1, see integers.hpp) in place.
  template <typename T>
  const T& at(u64 offset, std::string_view what) const {
    static_assert(alignof(T) == 1, "on-disk structs must use Integer<> fields");
    return *reinterpret_cast<const T*>(range(offset, sizeof(T), what).data());
  }

  /// A NUL-terminated string starting at `offset`, bounded by the view.
  std::string_view cstring(u64 offset, std::string_view what) const;

 private:
  std::span<const u8> data_;
  std::string name_;
  u64 base_ = 0;
};

/// a + b, or throws a format error (at `offset`, the field's file offset, when
/// known) if it overflows 64 bits.
u64 checked_add(u64 a, u64 b, const std::string& file, std::string_view what,
                std::optional<u64> offset = std::nullopt);
/// a * b, or throws a format error if it overflows 64 bits.
u64 checked_mul(u64 a, u64 b, const std::string& file, std::string_view what,
                std::optional<u64> offset = std::nullopt);

/// `v` rounded up to a multiple of `align` (unchanged when `align` is 0 or 1);
/// does not check for overflow.
inline u64 align_up(u64 v, u64 align) {
  return align <= 1 ? v : (v + align - 1) / align * align;
}

}  // namespace libpkg
