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
//
// The test runs on 1 MiB pieces of a chunk, not on the whole chunk: a
// third of the CUDA libraries' chunks mix code with packed device code
// (libcublasLt's chunks 27-64: 18-31 of their 32 quarter-MiB pieces
// incompressible), and judged whole they were compressed, packed code
// included. Storing the incompressible pieces of such chunks cut level 6's
// CPU on libcublas, libcublasLt, libcudnn_engines_precompiled and libnccl
// from 7.2 to 5.3 s (one core), for 0.05 % more output (bench/RESULTS.md).
//
// Nearly random pieces that are still not stored (entropy >= 7.9 bits/byte:
// packed code with some structure, short repeats) are deflated at level 1
// whatever the writer's level: on those pieces of the same libraries level 1
// was smaller than levels 6 and 9 (-0.15 MB against level 6 on 183 MiB),
// within 3 KB of level 12 (which takes 4x as long) and 23 % faster than
// level 6, whose lazy matching spends bits on short, distant matches that
// literals code as cheaply. (Below 7.9 the higher levels win again, by
// 23 KB on 10 MiB at 7.8-7.9; bench/RESULTS.md, session 18.) Since session
// 23 they go to igzip at level 3 instead, as large as libdeflate's level 1
// within 0.05 % at a quarter of its CPU (fast_deflate.hpp).
// Private to the archive layer.
#pragma once

#include <span>
#include <vector>

#include "libpkg/base/integers.hpp"

namespace libpkg::archive {

// Chunks smaller than this are always compressed: the estimate needs data.
inline constexpr u64 kMinSizeForIncompressibleCheck = u64{1} << 20;

// Whether plan_chunk() stores `chunk` judged as one piece. A pure function
// of the bytes (so output stays identical for any thread count).
bool looks_incompressible(std::span<const u8> chunk);

// The unit the chunk plan judges: pieces of this size from the chunk's
// start, the remainder joining the last piece (so a piece is 1-2 MiB, and a
// chunk under 1 MiB is one piece, always compressed).
inline constexpr u64 kIncompressiblePiece = kMinSizeForIncompressibleCheck;

// A stretch of a chunk: bytes [begin, end), stored, deflated by the fast
// deflater for nearly random data (`fast`, fast_deflate.hpp), or at the
// writer's level.
struct ChunkRun {
  u64 begin = 0;
  u64 end = 0;
  bool stored = false;
  bool fast = false;
};

// How deflate_chunk() emits a chunk: its pieces judged (stored when
// looks_incompressible(), fast when nearly random otherwise), neighbours
// with the same verdict merged into one run, in order. Never empty; a pure
// function of the bytes.
std::vector<ChunkRun> plan_chunk(std::span<const u8> chunk);

// Whether the plan stores the whole chunk (then no compressor is needed).
bool stores_whole_chunk(const std::vector<ChunkRun>& plan);

}  // namespace libpkg::archive
