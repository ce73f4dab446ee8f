// SPDX-License-Identifier: BSD-3-Clause
#include "archive/cached_deflate.hpp"

#include "archive/incompressible.hpp"

namespace libpkg::archive {
namespace {

// A hit (its bytes in `out`, counted as saved); else nothing. Without
// `count_absent` a lookup that finds nothing counts no miss (ChunkCache::load).
bool load_hit(ChunkCache& cache, const ChunkCache::Key& key,
              std::span<const u8> input, u32 input_crc32, bool final,
              std::vector<u8>& out, bool count_absent) {
  // An entry longer than compress_chunk() can produce is corrupt, and
  // refusing it keeps `out` within the writer slot's reserved capacity.
  if (!cache.load(key, input, input_crc32, final,
                  deflate_chunk_capacity(input.size()), out, count_absent))
    return false;
  cache.count_saved(input.size());
  return true;
}

// A miss: compressed here and stored under `key`.
CacheUse compress_and_store(ChunkCache& cache, CompressorPool& pool, int level,
                            std::span<const u8> input,
                            const std::vector<ChunkRun>& plan, u32 input_crc32,
                            bool final, const std::string& name,
                            const ChunkCache::Key& key, std::vector<u8>& out,
                            StoreMiss store) {
  compress_chunk(pool, level, input, plan, final, name, out);
  if (store == StoreMiss::now) cache.store(key, input_crc32, out);
  return CacheUse::miss;
}

}  // namespace

ChunkCache::Key incompressible_marker(const ChunkCache::Key& key) {
  return ChunkCache::key_for("libpkg incompressible verdict", key);
}

CacheUse cached_deflate_chunk(ChunkCache& cache, CompressorPool& pool,
                              int level, std::span<const u8> input,
                              u32 input_crc32, bool final,
                              const std::string& name, std::vector<u8>& out,
                              ChunkCache::Key* key_used, StoreMiss store) {
  const std::vector<ChunkRun> plan = plan_chunk(input);
  if (stores_whole_chunk(plan)) {
    store_chunk(input, final, out);
    return CacheUse::bypassed;
  }
  const ChunkCache::Key key = ChunkCache::key(input, level, final);
  if (key_used != nullptr) *key_used = key;
  if (load_hit(cache, key, input, input_crc32, final, out, true))
    return CacheUse::hit;
  return compress_and_store(cache, pool, level, input, plan, input_crc32, final,
                            name, key, out, store);
}

CacheUse cached_deflate_chunk_keyed(ChunkCache& cache, CompressorPool& pool,
                                    int level, std::span<const u8> input,
                                    u32 input_crc32, bool final,
                                    const std::string& name,
                                    const ChunkCache::Key& key,
                                    std::vector<u8>& out, StoreMiss store) {
  if (load_hit(cache, key, input, input_crc32, final, out, false))
    return CacheUse::hit;
  const ChunkCache::Key marker = incompressible_marker(key);
  if (cache.load_own(marker, 0)) {
    store_chunk(input, final, out);
    return CacheUse::bypassed;
  }
  const std::vector<ChunkRun> plan = plan_chunk(input);
  if (stores_whole_chunk(plan)) {
    cache.store(marker, input_crc32, {});
    store_chunk(input, final, out);
    return CacheUse::bypassed;
  }
  cache.count_miss();
  return compress_and_store(cache, pool, level, input, plan, input_crc32, final,
                            name, key, out, store);
}

}  // namespace libpkg::archive
