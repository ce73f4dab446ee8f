// SPDX-License-Identifier: BSD-3-Clause
// Block scanner for raw deflate streams (RFC 1951): finds where the final
// block starts and where the stream's data ends without producing output.
//
// make_non_final() (deflate_chunk.hpp) needs exactly two bit positions of a
// libdeflate stream: the final block's header (to clear its BFINAL bit) and
// the end of that block (to know how many padding bits follow). Deflate has
// no block index, so finding them means walking every Huffman code of every
// block. A full decoder also writes and copies the output bytes; this
// scanner only needs to know how many bits each code takes, so its tables
// map the next bits straight to "this many bits hold this many literals,
// perhaps ended by a length code and its extra bits" (where such runs are
// likely: the 7 to 9-bit literals of machine code rarely pair up), and it
// walks each long block in two lanes at once, a scout ahead whose path the
// main walk joins (Huffman codes resynchronize), since one walk is bound by
// the chain from each code's length to the next lookup. About twice as
// fast as zlib's inflate on CUDA libraries (bench/inflate_pass_bench.cpp).
//
// It accepts exactly the streams zlib's inflate accepts (same code
// completeness rules, same "distance too far back" check against the output
// produced so far), and it requires the stream to end in the byte holding
// the final block's last bit, like make_non_final() does. The padding bits
// of that byte are not checked, as zlib does not check them either (the
// caller clears them).
#pragma once

#include <optional>
#include <span>

#include "libpkg/base/integers.hpp"

namespace libpkg::archive {

// Where a complete raw deflate stream's final block lies, in bits from the
// stream's first byte (bit 0 = least significant bit of byte 0).
struct DeflateScan {
  u64 last_header_bit = 0;  // the final block's 3-bit header starts here
  u64 end_bit = 0;          // first bit after the final block's data
  u64 output_size = 0;      // bytes the stream inflates to
};

// Scans `stream` as one raw deflate stream. Returns nullopt if it is not a
// valid stream whose final block ends in its last byte (truncated, invalid
// or incomplete codes, a distance beyond the output so far, bad stored
// lengths, bytes after the final block), or if `expected_output_size` is
// given and the stream inflates to another size. Never reads outside
// `stream`.
std::optional<DeflateScan> scan_deflate(
    std::span<const u8> stream,
    std::optional<u64> expected_output_size = std::nullopt);

}  // namespace libpkg::archive
