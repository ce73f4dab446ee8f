// SPDX-License-Identifier: BSD-3-Clause
// A deflate stream assembled from pieces at bit granularity (splice.hpp).
//
// Deflate blocks are not byte-aligned: one ends, and the next begins, at
// any bit. Re-using an input's blocks in a new stream means copying their
// bits to wherever the new stream stands, which shifts them by 0-7 bits.
// Huffman-coded blocks do not mind (nothing in them refers to byte
// boundaries); stored blocks do (their header is followed by padding to a
// byte boundary), so they are re-emitted at the new position instead.
// Bits are packed LSB first, as RFC 1951 3.1.1 orders them. Private to the
// archive layer.
#pragma once

#include <span>
#include <vector>

#include "libpkg/base/integers.hpp"

namespace libpkg::archive {

class BitSink {
 public:
  // Appends the low `n` bits of `v` (n <= 56).
  void put_bits(u64 v, unsigned n);
  // Appends bits [from, to) of `src` (bit i is bit i % 8 of byte i / 8).
  // With `clear_first`, the first bit copied is written as 0 (the BFINAL
  // bit of a block that is no longer the stream's last).
  void copy_bits(std::span<const u8> src, u64 from, u64 to,
                 bool clear_first = false);
  // Re-emits the stored block whose header is at bit `from` of `src` and
  // which ends at bit `to` (a byte boundary): a fresh 3-bit header
  // (BFINAL = `final`, BTYPE 00), padding to our byte boundary, then its
  // LEN, NLEN and data bytes as they are.
  void put_stored_block(std::span<const u8> src, u64 from, u64 to, bool final);
  // If not on a byte boundary: an empty non-final stored block (3 header
  // bits, padding, 00 00 ff ff), after which the stream is. A decoder
  // reads it as nothing; a fresh stream can then follow on the next byte.
  void align_with_empty_stored_block();
  // Appends whole bytes; the sink must be on a byte boundary.
  void put_bytes(std::span<const u8> bytes);

  bool aligned() const { return nacc_ % 8 == 0; }
  u64 bit_position() const { return total_bits_; }
  // Complete bytes not taken yet (a partial last byte stays behind).
  std::size_t ready() const { return buf_.size() + nacc_ / 8; }
  // Moves the complete bytes out.
  std::vector<u8> take();
  // Pads the last byte with zero bits (the end of a stream) and moves every
  // byte out.
  std::vector<u8> take_all();

 private:
  void spill();  // whole bytes of the accumulator into buf_

  std::vector<u8> buf_;
  u64 acc_ = 0;        // pending bits, LSB first
  unsigned nacc_ = 0;  // how many (< 64)
  u64 total_bits_ = 0;
};

}  // namespace libpkg::archive
