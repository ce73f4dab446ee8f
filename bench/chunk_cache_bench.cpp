// SPDX-License-Identifier: BSD-3-Clause
// chunk_cache_bench: what one chunk costs through the chunk cache, by size,
// against compressing it (the measurement behind "only members of at least
// one chunk go through the cache", docs/archives.md).
//
//   cmake --build build --target chunk_cache_bench
//   build/bench/chunk_cache_bench FILE CACHE_DIR
//
// FILE's first bytes are cut into chunks of 4 KiB .. 8 MiB (about 64 MiB of
// input per size, fewer for the largest); for each size: level-6
// compress_chunk() per chunk (a cold writer without the cache), the key's
// SHA-256, a miss (key + failed lookup + compress + store) and a hit (key +
// load), in microseconds per chunk and MB/s of input. One thread; the cache
// directory is emptied first and its entries stay in the page cache (a
// nightly's shared cache on a local disk).
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <vector>

#include "archive/deflate_chunk.hpp"
#include "libpkg/archive/chunk_cache.hpp"
#include "libpkg/base/fd.hpp"
#include "libpkg/base/integers.hpp"

using namespace libpkg;
using namespace libpkg::archive;
using Clock = std::chrono::steady_clock;

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: chunk_cache_bench FILE CACHE_DIR\n");
    return 2;
  }
  const std::vector<u8> data = read_prefix(argv[1], 64u << 20);
  ChunkCacheOptions o;
  o.dir = argv[2];
  ChunkCache cache(o);
  cache.clear();
  CompressorPool pool;
  std::printf("%10s %7s %12s %12s %12s %12s   MB/s: compress miss hit\n",
              "chunk", "chunks", "compress us", "key us", "miss us", "hit us");
  for (u64 size : {u64{4} << 10, u64{16} << 10, u64{64} << 10, u64{256} << 10,
                   u64{1} << 20, u64{8} << 20}) {
    const u64 n = data.size() / size;
    std::vector<u8> out;
    auto per_chunk = [&](auto&& body) {
      const auto t0 = Clock::now();
      for (u64 i = 0; i < n; ++i)
        body(std::span<const u8>(data.data() + i * size, size));
      return std::chrono::duration<double, std::micro>(Clock::now() - t0)
                 .count() /
             static_cast<double>(n);
    };
    const double compress = per_chunk([&](std::span<const u8> in) {
      compress_chunk(pool, 6, in, plan_chunk(in), false, "bench", out);
    });
    const double key = per_chunk(
        [&](std::span<const u8> in) { (void)ChunkCache::key(in, 6, false); });
    const double miss = per_chunk([&](std::span<const u8> in) {
      const auto k = ChunkCache::key(in, 6, false);
      if (!cache.load(k, in, 0, false, deflate_chunk_capacity(size), out)) {
        compress_chunk(pool, 6, in, plan_chunk(in), false, "bench", out);
        cache.store(k, 0, out);
      }
    });
    const double hit = per_chunk([&](std::span<const u8> in) {
      const auto k = ChunkCache::key(in, 6, false);
      if (!cache.load(k, in, 0, false, deflate_chunk_capacity(size), out))
        std::abort();
    });
    auto mbs = [&](double us) { return static_cast<double>(size) / us; };
    std::printf("%10llu %7llu %12.1f %12.1f %12.1f %12.1f   %.0f %.0f %.0f\n",
                static_cast<unsigned long long>(size),
                static_cast<unsigned long long>(n), compress, key, miss, hit,
                mbs(compress), mbs(miss), mbs(hit));
  }
  cache.clear();
  return 0;
}
