// SPDX-License-Identifier: BSD-3-Clause
#include "archive/edit_map.hpp"

#include <algorithm>
#include <cstring>

namespace libpkg::archive {

EditMap::EditMap(std::vector<Patch> patches, u64 input_size, u64 output_size)
    : patches_(std::move(patches)),
      input_size_(input_size),
      output_size_(output_size) {}

bool EditMap::changes(u64 begin, u64 end) const {
  if (begin >= end) return false;
  if (end > end_of_original()) return true;
  // First patch that ends after `begin`.
  auto it = std::lower_bound(
      patches_.begin(), patches_.end(), begin,
      [](const Patch& p, u64 off) { return p.offset + p.bytes.size() <= off; });
  return it != patches_.end() && it->offset < end && !it->bytes.empty();
}

void EditMap::patch(u64 at, std::span<u8> out) const {
  const u64 end = at + out.size();
  auto it = std::lower_bound(
      patches_.begin(), patches_.end(), at,
      [](const Patch& p, u64 off) { return p.offset + p.bytes.size() <= off; });
  for (; it != patches_.end() && it->offset < end; ++it) {
    const u64 lo = std::max(at, it->offset);
    const u64 hi = std::min(end, it->offset + it->bytes.size());
    if (lo < hi)
      std::memcpy(out.data() + (lo - at), it->bytes.data() + (lo - it->offset),
                  hi - lo);
  }
}

void EditMap::edited(u64 at, std::span<const u8> original,
                     std::vector<u8>& out) const {
  const u64 keep = at >= output_size_
                       ? 0
                       : std::min<u64>(original.size(), output_size_ - at);
  out.assign(original.begin(),
             original.begin() + static_cast<std::ptrdiff_t>(keep));
  patch(at, out);
}

void EditMap::tail(u64 at, std::span<u8> out) const {
  std::fill(out.begin(), out.end(), u8{0});
  patch(at, out);
}

}  // namespace libpkg::archive
