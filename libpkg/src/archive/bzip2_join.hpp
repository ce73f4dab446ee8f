// SPDX-License-Identifier: BSD-3-Clause
// Joins one-block bzip2 streams into one standard bzip2 stream. Private to
// the archive layer.
//
// Each block's bits (magic to the last bit before its stream's end marker)
// are copied, shifted to wherever the joined stream's last bit ended; the
// end marker gets the combined CRC over the block CRCs (bzip2's rule:
// rotate the running value left by one bit, xor the next block's CRC). The
// result is what a single bzip2 process would write for the same blocks,
// so every reader takes it (bzip2 -t, Python's bz2, libarchive).
#pragma once

#include <span>
#include <vector>

#include "archive/bzip2_block.hpp"
#include "libpkg/archive/tar.hpp"

namespace libpkg::archive {

class Bzip2Joiner {
 public:
  // Writes the stream header for `level` (1..9) to `sink`.
  Bzip2Joiner(int level, TarSink sink);
  // Appends the block `bits` of the one-block stream `stream`.
  void append(std::span<const u8> stream, const Bzip2BlockBits& bits);
  // Writes the end marker, the combined CRC and the padding bits.
  void finish();
  // Bytes handed to the sink so far.
  u64 written() const { return written_; }

 private:
  void put_bits(u64 value, int n);  // n <= 56
  void flush();

  TarSink sink_;
  std::vector<u8> out_;  // whole bytes not yet handed to the sink
  u8 partial_ = 0;       // the next byte's first partial_bits_ bits
  int partial_bits_ = 0;
  u32 combined_crc_ = 0;
  u64 written_ = 0;
};

}  // namespace libpkg::archive
