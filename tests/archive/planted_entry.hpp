// SPDX-License-Identifier: BSD-3-Clause
// A chunk cache entry as someone who can write the cache directory but not
// read this user's tag key would plant it (chunk_cache_test.cpp,
// tar_bz2_test.cpp, tar_zst_frames_test.cpp): stored through the API, then
// its hit tag (the header's last 8 bytes) replaced with a guess.
#pragma once

#include <filesystem>
#include <fstream>
#include <span>

#include "libpkg/archive/chunk_cache.hpp"
#include "libpkg/base/sha256.hpp"

namespace libpkg::archive::testing {

// Where `cache` keeps the entry of `key`.
inline std::filesystem::path entry_path(const ChunkCache& cache,
                                        const ChunkCache::Key& key) {
  const std::string hex = Sha256::hex(key);
  return cache.dir() / hex.substr(0, 2) / hex.substr(2);
}

// Overwrites the entry's tag with `tag`.
inline void set_hit_tag(const std::filesystem::path& entry, u64 tag) {
  std::fstream f(entry, std::ios::in | std::ios::out | std::ios::binary);
  f.seekp(24);
  for (int i = 0; i < 8; ++i) f.put(static_cast<char>(tag >> (8 * i)));
}

// Stores `bytes` under `key` with a forged tag.
inline void plant_entry(ChunkCache& cache, const ChunkCache::Key& key,
                        u32 input_crc32, std::span<const u8> bytes) {
  cache.store(key, input_crc32, bytes);
  set_hit_tag(entry_path(cache, key), 0x5a5a5a5a5a5a5a5aull);
}

}  // namespace libpkg::archive::testing
