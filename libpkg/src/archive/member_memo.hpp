// SPDX-License-Identifier: BSD-3-Clause
// Member memos: what the zip writer learnt writing a large member from a
// file, kept in the chunk cache so that the next archive made from the same
// file neither reads nor hashes what the cache already holds.
//
// With every chunk of a grafted CUDA library in the cache, a warm repair
// still read each library and hashed it twice in one pass (the chunks' cache
// keys and the member's RECORD hash): 38 % of the CPU of the warm
// other-extension repair in a `perf` profile, and a page-cache copy of the
// 0.8 GB besides (bench/RESULTS.md). Both are facts about the file's content
// and the writer's rules, so they are memoized under the content's identity
// (ContentSource::content_identity(): the file's state and the edit,
// file_state.hpp) and the rules (level, chunk size, encoder identity):
// - per chunk: its input CRC-32, whether it is stored (looked incompressible)
//   and, if not, its cache key;
// - the member's SHA-256.
// A member with a memo is written from it: a deflated chunk whose entry is
// this user's own, tagged, with the memo's CRC-32 (ChunkCache::load_tagged)
// is copied without reading the file; any other chunk is read, its CRC-32
// checked against the memo's, and written as without a memo (a stored chunk
// stored, a deflated one through the cache's checked lookup under the key
// hashed from the bytes read). The file is stat'ed before the memo is used
// and after the member is written: a change means an error, never an
// archive whose RECORD hash is not its content's.
// Only this user's own memos with a valid tag are believed
// (ChunkCache::load_own); anything else is ignored and written again.
// Private to the archive layer.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "libpkg/archive/chunk_cache.hpp"
#include "libpkg/base/sha256.hpp"

namespace libpkg::archive {

/// What the writer knows of one chunk of a member.
struct ChunkFacts {
  u32 crc32 = 0;          // of the chunk's input
  bool stored = false;    // written as stored blocks, not via the cache
  ChunkCache::Key key{};  // its cache key, when not stored
};

/// A member's memo: its SHA-256 and the facts of each of its chunks.
struct MemberMemo {
  Sha256::Digest sha256{};
  std::vector<ChunkFacts> chunks;
};

/// Where the memo of a member with content `identity` (non-empty), `size`
/// bytes, written at `level` in chunks of `chunk_size`, is kept. Never throws.
ChunkCache::Key member_memo_key(std::string_view identity, u64 size, int level,
                                u64 chunk_size);

/// The memo under `key` when it is this user's own and describes `chunks`
/// chunks of a `size`-byte member; else nullopt. Never throws.
std::optional<MemberMemo> load_member_memo(ChunkCache& cache,
                                           const ChunkCache::Key& key, u64 size,
                                           u64 chunks);

/// Stores `memo` of a `size`-byte member under `key`; failures are the
/// cache's warnings. Never throws.
void store_member_memo(ChunkCache& cache, const ChunkCache::Key& key, u64 size,
                       const MemberMemo& memo);

}  // namespace libpkg::archive
