// SPDX-License-Identifier: BSD-3-Clause
// Chunk caches for the cache's tests (chunk_cache_test.cpp,
// chunk_packs_test.cpp): a log of its warnings and a cache over a directory.
#pragma once

#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "libpkg/archive/chunk_cache.hpp"

namespace libpkg::archive::testing {

// Warnings the cache logged, thread-safe.
struct Log {
  std::mutex mutex;
  std::vector<std::string> lines;
  LogFn fn() {
    return [this](const std::string& line) {
      std::lock_guard lock(mutex);
      lines.push_back(line);
    };
  }
};

// A cache over `dir`, logging to `log` when given.
inline std::shared_ptr<ChunkCache> make_cache(const std::filesystem::path& dir,
                                              Log* log = nullptr,
                                              u64 max_bytes = u64{1} << 30,
                                              bool link_archives = true) {
  ChunkCacheOptions o;
  o.dir = dir;
  o.max_bytes = max_bytes;
  o.link_archives = link_archives;
  if (log != nullptr) o.log = log->fn();
  return std::make_shared<ChunkCache>(o);
}

}  // namespace libpkg::archive::testing
