// SPDX-License-Identifier: BSD-3-Clause
// One bzip2 block at a time: where a block must end, compressing it with
// libbz2, and finding its bits in libbz2's output. Private to the archive
// layer (tar_bz2_write.cpp joins the blocks, bzip2_join.hpp).
//
// A bzip2 stream is "BZh" + the level digit, then blocks, then an
// end-of-stream marker with a CRC combined over the blocks' CRCs; blocks are
// bit-packed (not byte-aligned) and each is decoded on its own (its
// run-length, BWT and Huffman state starts fresh), so a stream may be cut
// into blocks anywhere. We compress each block as a whole libbz2 stream of
// exactly one block and move its bits into the joined stream.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "libpkg/base/integers.hpp"

namespace libpkg::archive {

// Version of the rules that decide the bytes of a block for its input and
// level (where blocks are cut, libbz2's parameters): part of the chunk cache
// key, bumped with any change to them.
inline constexpr int kBzip2BlockRulesVersion = 1;

// The most bytes libbz2 puts into one block at `level` (1..9), counted after
// its first run-length pass (runs of 4..255 equal bytes become 4 bytes and
// a count): 100000 * level - 19, libbz2's own limit (nblockMAX).
u64 bzip2_block_limit(int level);

// Cuts a byte stream into blocks that libbz2 compresses as exactly one
// block each: tracks the run-length-encoded size of the current block and
// says how many of the next bytes still fit. Fills every block to the limit
// (as libbz2 does), so block boundaries depend only on where the block
// started and the bytes.
class Bzip2BlockCutter {
 public:
  explicit Bzip2BlockCutter(int level) : limit_(bzip2_block_limit(level)) {}
  // How many leading bytes of `bytes` fit into the current block (all of
  // them, or fewer when the block is full: then cut, reset() and go on).
  size_t fit(std::span<const u8> bytes);
  // Starts a new, empty block.
  void reset();
  // Whether the current block holds any byte.
  bool empty() const { return run_len_ == 0; }

 private:
  u64 limit_;
  u64 flushed_ = 0;  // encoded size of the completed runs
  int run_byte_ = -1;
  u32 run_len_ = 0;  // 0 only when the block is empty
};

// Compresses `input` (which a Bzip2BlockCutter let into one block) into a
// whole bzip2 stream of one block in `out`, workFactor 30 as the bzip2
// tool and libarchive. Throws Errc::io naming `name` when libbz2 fails.
void compress_bzip2_block(std::span<const u8> input, int level,
                          const std::string& name, std::vector<u8>& out);

// Where the block of a one-block stream lies and its CRC.
struct Bzip2BlockBits {
  u64 begin_bit = 0;  // first bit of the block's 48-bit magic
  u64 end_bit = 0;    // first bit of the end-of-stream marker
  u32 crc = 0;        // the block's CRC (that of its input)
};

// The block of `stream` when it is a bzip2 stream at `level` holding exactly
// one block with nothing after its end marker but zero padding bits (the
// end marker's combined CRC equals the block's CRC only then); nullopt
// otherwise. Never throws.
std::optional<Bzip2BlockBits> parse_bzip2_block(std::span<const u8> stream,
                                                int level);

// Whether `stream` is a one-block stream at `level` that decompresses to
// exactly `input` (the check a chunk cache hit gets). Never throws.
bool bzip2_block_decodes_to(std::span<const u8> stream, int level,
                            std::span<const u8> input);

// What identifies the encoder in a cache key: libbz2's version string, the
// SHA-256 of what the loaded libbz2 emits for a fixed probe at `level`
// (computed once per level and process: a rebuilt library under the same
// version string gets new keys), kBzip2BlockRulesVersion and the level.
// Never throws.
std::string bzip2_encoder_identity(int level);

}  // namespace libpkg::archive
