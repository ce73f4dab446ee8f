// SPDX-License-Identifier: BSD-3-Clause
#include "libpkg/base/bytes.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

namespace libpkg {

std::span<const u8> ByteView::range(u64 offset, u64 size,
                                    std::string_view what) const {
  if (!contains(offset, size)) {
    throw_format(name_, base_ + offset,
                 fmt::format("{} (0x{:x} bytes) extends past the end of the "
                             "data (0x{:x} bytes)",
                             what, size, data_.size()));
  }
  ensure(offset, size);
  return data_.subspan(offset, size);
}

ByteView ByteView::slice(u64 offset, u64 size, std::string_view what) const {
  // The slice is filled now: its bytes are read through it.
  return ByteView(range(offset, size, what), name_, base_ + offset);
}

std::string_view ByteView::cstring(u64 offset, std::string_view what) const {
  if (offset >= data_.size()) {
    throw_format(
        name_, base_ + offset,
        fmt::format("{} starts past the end of the data (0x{:x} bytes)", what,
                    data_.size()));
  }
  const u8* begin = data_.data() + offset;
  const void* nul = nullptr;
  if (filler_ == nullptr) {
    nul = std::memchr(begin, 0, data_.size() - offset);
  } else {
    // Filled in growing steps: the NUL is usually near, the view's end far.
    u64 from = offset, step = 4096;
    while (nul == nullptr && from < data_.size()) {
      const u64 to = std::min<u64>(data_.size(), from + step);
      ensure(from, to - from);
      nul = std::memchr(data_.data() + from, 0, to - from);
      from = to;
      step *= 2;
    }
  }
  if (nul == nullptr) {
    throw_format(name_, base_ + offset,
                 fmt::format("{} is not NUL-terminated", what));
  }
  return {reinterpret_cast<const char*>(begin),
          static_cast<size_t>(static_cast<const u8*>(nul) - begin)};
}

u64 checked_add(u64 a, u64 b, const std::string& file, std::string_view what,
                std::optional<u64> offset) {
  u64 r;
  if (__builtin_add_overflow(a, b, &r))
    throw Error(Errc::format, file,
                fmt::format("{}: 0x{:x} + 0x{:x} overflows", what, a, b),
                offset);
  return r;
}

u64 checked_mul(u64 a, u64 b, const std::string& file, std::string_view what,
                std::optional<u64> offset) {
  u64 r;
  if (__builtin_mul_overflow(a, b, &r))
    throw Error(Errc::format, file,
                fmt::format("{}: 0x{:x} * 0x{:x} overflows", what, a, b),
                offset);
  return r;
}

}  // namespace libpkg
