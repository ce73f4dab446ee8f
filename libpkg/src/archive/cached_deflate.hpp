// SPDX-License-Identifier: BSD-3-Clause
// deflate_chunk() through the chunk cache (chunk_cache.hpp). Private to the
// archive layer.
//
// Only chunks the compressor would work on go through the cache: a chunk
// that looks_incompressible() is stored at once (the test costs ~0.3 s/GB,
// less than the key's SHA-256 and reading an entry back), so caching it
// would cost more than it saves.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "archive/deflate_chunk.hpp"
#include "libpkg/archive/chunk_cache.hpp"

namespace libpkg::archive {

enum class CacheUse { bypassed, hit, miss };

// Same bytes in `out` as deflate_chunk(pool, level, input, final, name, out).
// `input_crc32` is the CRC-32 of `input` (the writer computes it anyway).
CacheUse cached_deflate_chunk(ChunkCache& cache, CompressorPool& pool,
                              int level, std::span<const u8> input,
                              u32 input_crc32, bool final,
                              const std::string& name, std::vector<u8>& out);

// The cache's half of cached_deflate_chunk(), for a caller that ran the
// incompressible test itself (and found the chunk compressible) and
// computed `key` (ChunkCache::key(input, level, final)) in a pass of its
// own: the zip writer hashes the key and the member's RECORD digest
// together.
CacheUse deflate_chunk_with_key(ChunkCache& cache, CompressorPool& pool,
                                int level, std::span<const u8> input,
                                u32 input_crc32, bool final,
                                const std::string& name,
                                const ChunkCache::Key& key,
                                std::vector<u8>& out);

}  // namespace libpkg::archive
