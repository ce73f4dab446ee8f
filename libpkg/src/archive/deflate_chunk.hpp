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
#include <span>
#include <string>
#include <vector>

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

 private:
  struct Idle {
    int level;
    libdeflate_compressor* compressor;
  };
  std::mutex mutex_;
  std::vector<Idle> idle_;
};

// Deflates `input` at `level` (1..12) into `out` (replacing its content,
// reusing its capacity) as a complete raw deflate stream. When `final` is
// false the stream is rewritten to end on a byte boundary without a BFINAL
// block (see above), ready to be followed by another chunk. `name` is used
// in error messages.
void deflate_chunk(CompressorPool& pool, int level, std::span<const u8> input,
                   bool final, const std::string& name, std::vector<u8>& out);

// Large chunk buffers recycled between jobs: the writer's memory then stays
// at its window of live buffers, instead of growing with whatever freed
// blocks the allocator keeps in each worker thread's arena.
class BufferPool {
 public:
  std::vector<u8> take();
  void give(std::vector<u8>&& buffer);

 private:
  std::mutex mutex_;
  std::vector<std::vector<u8>> idle_;
};

// Rewrites a complete raw deflate stream (as libdeflate produces it: ends
// with its BFINAL block, zero padding bits) into a non-final one: locates
// the last block's header by inflating the stream block by block, clears
// its BFINAL bit and appends an empty stored block. Throws Errc::format if
// `stream` is not a single complete deflate stream.
void make_non_final(std::vector<u8>& stream, const std::string& name);

}  // namespace libpkg::archive
