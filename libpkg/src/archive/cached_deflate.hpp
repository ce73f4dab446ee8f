// SPDX-License-Identifier: BSD-3-Clause
// deflate_chunk() through the chunk cache (chunk_cache.hpp). Private to the
// archive layer.
//
// Only chunks the compressor would work on go through the cache: a chunk
// whose plan_chunk() stores it whole is stored at once (the test costs ~0.3
// s/GB, less than the key's SHA-256 and reading an entry back), so caching it
// would cost more than it saves. When the key costs nearly nothing (the zip
// writer hashes it in one pass with the member's digest), the lookup comes
// first and a hit spares the test (cached_deflate_chunk_keyed()).
#pragma once

#include <span>
#include <string>
#include <vector>

#include "archive/deflate_chunk.hpp"
#include "libpkg/archive/chunk_cache.hpp"

namespace libpkg::archive {

enum class CacheUse { bypassed, hit, miss };

// Whether a miss is stored in the cache at once (`now`) or left to the
// caller (`later`): the zip writer stores its misses after the archive is
// committed, as pointers into it (ChunkCache::store_packed()).
enum class StoreMiss { now, later };

// Same bytes in `out` as deflate_chunk(pool, level, input, final, name, out).
// `input_crc32` is the CRC-32 of `input` (the writer computes it anyway).
// Unless the chunk was stored (bypassed), its key is left in `key_used`
// when given (for the member's memo, member_memo.hpp).
CacheUse cached_deflate_chunk(ChunkCache& cache, CompressorPool& pool,
                              int level, std::span<const u8> input,
                              u32 input_crc32, bool final,
                              const std::string& name, std::vector<u8>& out,
                              ChunkCache::Key* key_used = nullptr,
                              StoreMiss store = StoreMiss::now);

// cached_deflate_chunk() for a caller whose `key` cost it nothing (hashed
// in one pass with the member's digest): the cache is looked up before the
// incompressible test, so a hit spares the test (~0.3 s/GB). Same bytes as
// cached_deflate_chunk(): a chunk that looks incompressible is never stored
// in the cache, so its lookup finds nothing (not counted as a miss) unless
// someone planted an entry, which load() checks like any other. Its
// verdict is memoized instead: an empty marker entry of this user's, under
// a key derived from `key`, spares the test on the next run.
CacheUse cached_deflate_chunk_keyed(ChunkCache& cache, CompressorPool& pool,
                                    int level, std::span<const u8> input,
                                    u32 input_crc32, bool final,
                                    const std::string& name,
                                    const ChunkCache::Key& key,
                                    std::vector<u8>& out,
                                    StoreMiss store = StoreMiss::now);

// Where the incompressible test's verdict "store this chunk" is memoized
// for the chunk of `key` (an entry with no bytes). The test is a pure
// function of the chunk, and the chunk key names its bytes and the rules
// version (which covers the test), so the verdict may be looked up by it. A
// third of the CUDA libraries' bytes are stored, and testing them again was
// 0.2 s of a warm repair's 2.3 s of CPU. Only this user's own marker is
// believed (ChunkCache::load_own): one planted by someone else is ignored
// and the chunk tested again.
ChunkCache::Key incompressible_marker(const ChunkCache::Key& key);

}  // namespace libpkg::archive
