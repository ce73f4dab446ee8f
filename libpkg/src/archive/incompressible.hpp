// SPDX-License-Identifier: BSD-3-Clause
// Recognising data deflate cannot meaningfully shrink, before paying for it.
//
// CUDA libraries are about 40 % packed device code and already-compressed
// sections; libdeflate at level 6 spends as long on those bytes (~94 MB/s
// per core here) as on code it halves, only to save 0.1-0.5 %. Deflate
// gains from two sources: shorter codes for frequent bytes, bounded by
// 8 - H bits per byte where H is the order-0 entropy, and back references,
// which need strings repeated within the 32 KiB window. A chunk with H >=
// 7.98 bits/byte in which fewer than 0.15 % of sampled positions start an
// 8-byte repeat of a string in the window is stored instead. On the CUDA 13
// libraries (1 015 MiB in 131 chunks of 8 MiB) this stores 336 MiB whose
// level-6 ratio was at least 0.995 (0.67 MB larger output overall, 0.08 %)
// and saves about a third of the compression CPU; the test costs ~0.3 s/GB.
// Private to the archive layer.
#pragma once

#include <span>

#include "libpkg/base/integers.hpp"

namespace libpkg::archive {

// Chunks smaller than this are always compressed: the estimate needs data.
inline constexpr u64 kMinSizeForIncompressibleCheck = u64{1} << 20;

// A pure function of the bytes (so output stays identical for any thread
// count).
bool looks_incompressible(std::span<const u8> chunk);

}  // namespace libpkg::archive
