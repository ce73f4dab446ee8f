// SPDX-License-Identifier: BSD-3-Clause
// Splice: writing an edited member by re-using the input's deflate data for
// the parts the edit leaves valid, and deflating only the rest.
//
// Repair edits a few pages of a library (ELF .dynamic strings, Mach-O load
// commands and the code signature at the end of __LINKEDIT) and deflating
// the whole library again was most of its time. A deflate block decodes to
// the same bytes wherever it is placed as long as the 32 KiB before it
// (what its back references may reach) and its own bytes are unchanged,
// so such blocks are copied, bit-shifted into place; the rest is deflated
// afresh, each span starting on a byte boundary after an empty stored
// block, with no reference into what precedes it.
//
// Two ways, chosen per member:
// - By chunks, when the member has a restart-point index (restart_index.hpp)
//   whose chunks fit the writer's chunk size: chunks are inflated in
//   parallel on the pool, each from its point with an empty window, and
//   must end exactly at the next point on a block boundary (checked; any
//   mismatch is an error naming archive, member and point). Chained from
//   the member's start, that proves every point is a block boundary of the
//   sequential decoding, so each chunk decodes to what a sequential reader
//   gets there; the CRC-32 of the whole is checked too. Unchanged chunks
//   are copied as they are (byte-aligned); changed ones, and the end of a
//   member that grows or shrinks, are deflated again with the writer's
//   chunk rules (deflate_chunk.hpp, the chunk cache).
// - By blocks otherwise: one zlib pass (Z_BLOCK) finds every block's bit
//   range; a block is copied when neither its bytes nor the 32 KiB before
//   them change, else its bytes join a fresh span deflated on the pool in
//   pieces of at most the chunk size. To keep the output indexable, a
//   change is also assumed every half chunk size (a fresh span starts
//   there), and the starts of fresh pieces followed by at least 32 KiB of
//   fresh content become the output's restart points.
//
// In both, the content is read once, sequentially decoded or proven
// equivalent, and CRC-32 and SHA-256 of the new content are computed in
// the same pass. Output bytes depend only on the input member, the edit,
// the level and the chunk size: the same for any thread count. Memory: at
// most window + 1 full-size slots (ChunkSlots) and a few hundred KiB, as
// the zip writer's bound (docs/archives.md). Private to the archive layer.
#pragma once

#include <array>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "archive/deflate_chunk.hpp"
#include "archive/edit_map.hpp"
#include "libpkg/archive/chunk_cache.hpp"
#include "libpkg/archive/zip_reader.hpp"
#include "libpkg/base/thread_pool_fwd.hpp"

namespace libpkg::archive {

struct SpliceInput {
  std::string archive;              // the input archive's name (errors)
  const ZipEntry* entry = nullptr;  // the member (deflated for splice)
  std::span<const u8> raw;          // its compressed data
  bool release_input = false;       // raw lies in a read-only file mapping
  const EditMap* edits = nullptr;
};

struct SpliceEnv {
  ThreadPool* pool = nullptr;
  CompressorPool* compressors = nullptr;
  ChunkSlots* slots = nullptr;
  std::size_t window = 2;  // full-size jobs in flight at most
  ChunkCache* cache = nullptr;
  int level = 6;
  u64 chunk_size = u64{8} << 20;
  std::function<void(u64)> progress;  // bytes of new content done
};

struct SpliceResult {
  u32 crc32 = 0;
  std::array<u8, 32> sha256{};
  u64 compressed_size = 0;
  std::vector<RestartPoint> restart_points;  // of the new member
  u64 reused = 0;          // compressed bytes of the input copied
  bool by_chunks = false;  // through the input's restart points
};

using ByteSink = std::function<void(std::span<const u8>)>;

// Writes the new member's deflate stream through `write`, in order.
// Throws Errc::format naming archive and member (and the restart point)
// for corrupt or inconsistent input; nothing it wrote is then usable.
SpliceResult splice_member(const SpliceInput& in, const SpliceEnv& env,
                           const ByteSink& write);

// The new content, stored (level 0, or a splice that did not shrink it):
// the member inflated from its start, edited, written through `write`.
struct StoredEdit {
  u32 crc32 = 0;
  std::array<u8, 32> sha256{};
};
StoredEdit store_edited_member(const SpliceInput& in, const ByteSink& write);

}  // namespace libpkg::archive
