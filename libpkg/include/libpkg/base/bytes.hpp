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

/// Fills a view's bytes on demand: a deflated archive member is inflated only
/// as far as its readers reach (archive/member_view.hpp), so reading the
/// dynamic section of a GB library inflates its first pages, not the library.
/// The view spans the whole (declared) size from the start, so bounds checks
/// are exactly those of a fully read file and pointers stay valid; ensure()
/// makes [begin, end) readable first, or throws naming the file.
class ByteFiller {
 public:
  virtual ~ByteFiller() = default;
  /// [begin, end) lies inside the view's bytes.
  virtual void ensure(const u8* begin, const u8* end) const = 0;
};

/// A bounds-checked, non-owning view of bytes that carries the file name (and
/// its offset in that file) for error messages; optionally filled on demand.
class ByteView {
 public:
  ByteView() = default;
  /// Views `data` of the file `name`, found at offset `base` in that file;
  /// `filler`, when given, produces the bytes on demand.
  ByteView(std::span<const u8> data, std::string name, u64 base = 0,
           const ByteFiller* filler = nullptr)
      : data_(data), name_(std::move(name)), base_(base), filler_(filler) {}

  // data() and span() give the bytes as they are: a view with a filler must
  // be read through range()/at()/cstring() or after ensure().

  /// The first byte of the view.
  const u8* data() const { return data_.data(); }
  /// The number of bytes in the view.
  u64 size() const { return data_.size(); }
  /// The bytes of the view as a span.
  std::span<const u8> span() const { return data_; }
  /// True when bytes are produced on demand (see ByteFiller).
  bool is_lazy() const { return filler_ != nullptr; }
  /// Makes [offset, offset + size) readable (no-op without a filler); the
  /// range must be inside the view.
  void ensure(u64 offset, u64 size) const {
    if (filler_ != nullptr && size != 0)
      filler_->ensure(data_.data() + offset, data_.data() + offset + size);
  }
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

  /// The same bytes (and filler) under another file name.
  ByteView renamed(std::string name) const {
    ByteView out = *this;
    out.name_ = std::move(name);
    return out;
  }

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
  const ByteFiller* filler_ = nullptr;  // owned by whoever owns the bytes
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
