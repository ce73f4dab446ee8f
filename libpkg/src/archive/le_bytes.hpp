// SPDX-License-Identifier: BSD-3-Clause
// Little-endian integers in byte buffers, for the small records the chunk
// cache keeps: an entry's header (chunk_cache.cpp), the message a hit tag
// MACs (hit_tag.cpp) and a member memo (member_memo.cpp). Private to the
// archive layer.
#pragma once

#include "libpkg/base/integers.hpp"

namespace libpkg::archive {

/// Writes the low `bytes` bytes of `v` at `p`, least significant first.
inline void put_le(u8* p, u64 v, int bytes) {
  for (int i = 0; i < bytes; ++i) p[i] = static_cast<u8>(v >> (8 * i));
}

/// Reads `bytes` bytes at `p`, least significant first.
inline u64 get_le(const u8* p, int bytes) {
  u64 v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

/// Appends the low `bytes` bytes of `v` to `out` (a byte string or vector).
template <class Bytes>
void append_le(Bytes& out, u64 v, int bytes) {
  for (int i = 0; i < bytes; ++i)
    out.push_back(
        static_cast<typename Bytes::value_type>((v >> (8 * i)) & 0xff));
}

}  // namespace libpkg::archive
