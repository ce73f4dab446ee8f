// SPDX-License-Identifier: BSD-3-Clause
#include "archive/cached_deflate.hpp"

#include "archive/incompressible.hpp"

namespace libpkg::archive {
namespace {

// The cache's half of cached_deflate_chunk(): `key` is the chunk's.
CacheUse deflate_chunk_with_key(ChunkCache& cache, CompressorPool& pool,
                                int level, std::span<const u8> input,
                                u32 input_crc32, bool final,
                                const std::string& name,
                                const ChunkCache::Key& key,
                                std::vector<u8>& out) {
  // An entry longer than compress_chunk() can produce is corrupt, and
  // refusing it keeps `out` within the writer slot's reserved capacity.
  if (cache.load(key, input, input_crc32, final,
                 deflate_chunk_capacity(input.size()), out)) {
    cache.count_saved(input.size());
    return CacheUse::hit;
  }
  compress_chunk(pool, level, input, final, name, out);
  cache.store(key, input_crc32, out);
  return CacheUse::miss;
}

}  // namespace

CacheUse cached_deflate_chunk(ChunkCache& cache, CompressorPool& pool,
                              int level, std::span<const u8> input,
                              u32 input_crc32, bool final,
                              const std::string& name, std::vector<u8>& out) {
  if (looks_incompressible(input)) {
    store_chunk(input, final, out);
    return CacheUse::bypassed;
  }
  return deflate_chunk_with_key(cache, pool, level, input, input_crc32, final,
                                name, ChunkCache::key(input, level, final),
                                out);
}

CacheUse cached_deflate_chunk_keyed(ChunkCache& cache, CompressorPool& pool,
                                    int level, std::span<const u8> input,
                                    u32 input_crc32, bool final,
                                    const std::string& name,
                                    const ChunkCache::Key& key,
                                    std::vector<u8>& out) {
  if (cache.load(key, input, input_crc32, final,
                 deflate_chunk_capacity(input.size()), out, false)) {
    cache.count_saved(input.size());
    return CacheUse::hit;
  }
  if (looks_incompressible(input)) {
    store_chunk(input, final, out);
    return CacheUse::bypassed;
  }
  cache.count_miss();
  compress_chunk(pool, level, input, final, name, out);
  cache.store(key, input_crc32, out);
  return CacheUse::miss;
}

}  // namespace libpkg::archive
