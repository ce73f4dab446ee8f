// SPDX-License-Identifier: BSD-3-Clause
// Independent deflate chunks joined into one stream.
//
// libdeflate (1.14) compresses whole buffers only, and each of its streams
// ends with a block marked BFINAL. To compress a large member on several
// cores we compress fixed-size chunks separately and concatenate them; a
// raw deflate stream may be cut at any block boundary, so the only edits
// needed are on every non-final chunk: clear the BFINAL bit of its last block
// and pad the stream to a byte boundary with an empty stored block, so the
// next chunk's first block header starts on a fresh byte. No chunk refers
// back into another (each was compressed without a dictionary), so the
// joined stream inflates to the concatenated input.
#pragma once

#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "archive/deflate_scan.hpp"
#include "archive/fast_deflate.hpp"
#include "archive/incompressible.hpp"
#include "libpkg/base/integers.hpp"

struct libdeflate_compressor;

namespace libpkg::archive {

// libdeflate compressors are not thread-safe and cost up to a few hundred
// KiB of tables each, so the workers borrow them from here instead of
// allocating one per job. Owned by one writer (no process-wide state).
class CompressorPool {
 public:
  CompressorPool() = default;
  ~CompressorPool();
  CompressorPool(const CompressorPool&) = delete;
  CompressorPool& operator=(const CompressorPool&) = delete;

  class Lease {
   public:
    Lease(CompressorPool& pool, int level);
    ~Lease();
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    libdeflate_compressor* get() const { return compressor_; }

   private:
    CompressorPool& pool_;
    int level_;
    libdeflate_compressor* compressor_;
  };

  // The igzip streams for nearly random runs (fast_deflate.hpp).
  FastDeflaterPool& fast() { return fast_; }

 private:
  struct Idle {
    int level;
    libdeflate_compressor* compressor;
  };
  std::mutex mutex_;
  std::vector<Idle> idle_;
  FastDeflaterPool fast_;
};

// Version of the rules below that decide the bytes deflate_chunk() emits for
// a given input and level (joining, the incompressible test, the stored
// fallback, its block layout). Part of the chunk cache's key
// (chunk_cache.hpp): bump it with any change to those rules, so cached
// chunks of the old rules stop matching instead of making output depend on
// the cache's history.
// 2: the incompressible test judges 1 MiB pieces (plan_chunk()).
// 3: pieces that are not stored but nearly random are deflated at level 1
// (kFastDeflateLevel): version 2's entries hold them at the writer's level.
// 4: those pieces are deflated by igzip at level 3 with a sync flush
// (fast_deflate.hpp), not by libdeflate at level 1.
inline constexpr int kChunkRulesVersion = 4;

// Deflates `input` at `level` (1..12) into `out` (replacing its content,
// reusing its capacity) as a complete raw deflate stream. When `final` is
// false the stream is rewritten to end on a byte boundary without a BFINAL
// block (see above), ready to be followed by another chunk. `name` is used
// in error messages. Equals store_chunk() for input whose plan_chunk()
// stores it whole, compress_chunk() with that plan otherwise.
void deflate_chunk(CompressorPool& pool, int level, std::span<const u8> input,
                   bool final, const std::string& name, std::vector<u8>& out);

// The two halves of deflate_chunk(), for the chunk cache, which caches only
// what compress_chunk() produces (storing costs no more than a cache hit).
// store_chunk: `input` as stored blocks. compress_chunk: each run of `plan`
// (plan_chunk(input)) in order, a stored run as stored blocks, the others
// by libdeflate at `level` (a fast run by igzip, fast_deflate.hpp, unless
// `level` is 0), or as stored blocks if that is not smaller; every run is made
// non-final but the last one of a `final` chunk.
void store_chunk(std::span<const u8> input, bool final, std::vector<u8>& out);
void compress_chunk(CompressorPool& pool, int level, std::span<const u8> input,
                    const std::vector<ChunkRun>& plan, bool final,
                    const std::string& name, std::vector<u8>& out);

// The buffers one chunk job needs: its input and its compressed output.
struct ChunkBuffers {
  std::vector<u8> input;
  std::vector<u8> output;
};

// Bytes deflate_chunk() may write for `input_size` bytes of input, at any
// level, stored or deflated: the buffers of a full-size slot are reserved to
// this so that they never reallocate.
u64 deflate_chunk_capacity(u64 input_size);

// The writer's full-size chunk buffers, recycled between jobs. Only jobs of
// more than small_job_limit() bytes use them; the caller (the zip writer's
// producer) admits at most `slots` such jobs at a time, holding one slot
// itself, so these buffers never exceed slots x (chunk + capacity) bytes,
// whatever the member sizes and their order. Before, one pool of buffers of
// every size was shared by all jobs: tiny members' jobs took the large
// buffers, full-size chunks then allocated new ones, and the pool grew to
// dozens of 8 MiB buffers (the cu130 driver's 192 MiB at -j2).
class ChunkSlots {
 public:
  explicit ChunkSlots(u64 chunk_size) : chunk_size_(chunk_size) {}
  // Buffers of an idle slot, or of a new one reserved to full size; empty,
  // or with `sized`, as long as their last user left them (with stale
  // bytes): resizing a vector zero-fills what it adds, 8 MiB per chunk for
  // a caller that overwrites them anyway (the zip writer's chunk jobs).
  ChunkBuffers take(bool sized = false);
  void give(ChunkBuffers&& buffers);

 private:
  u64 chunk_size_;
  std::mutex mutex_;
  std::vector<ChunkBuffers> idle_;
};

// Rewrites the complete raw deflate stream that `out` holds from `start`
// on (as libdeflate produces it: ends with its BFINAL block, zero padding
// bits) into a non-final one: locates the last block's header with
// scan_deflate() (deflate_scan.hpp), clears its BFINAL bit and appends an
// empty stored block. `inflated_size`, when known, is checked against the
// scan's output size. Whatever the scanner rejects goes through zlib
// (scan_deflate_with_zlib()), so that a stream zlib accepts is still
// joined and one it rejects fails with zlib's error. Throws Errc::format if
// that is not a single complete deflate stream.
void make_non_final(std::vector<u8>& out, u64 start, const std::string& name,
                    std::optional<u64> inflated_size = std::nullopt);

// The same positions as scan_deflate() found by zlib's inflate, block by
// block (decoding into a scratch buffer): the fallback of make_non_final()
// and the reference the scanner is tested against. Throws Errc::format if
// `stream` is not one complete deflate stream ending in its last byte.
DeflateScan scan_deflate_with_zlib(std::span<const u8> stream,
                                   const std::string& name);

}  // namespace libpkg::archive
