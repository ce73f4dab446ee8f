// SPDX-License-Identifier: BSD-3-Clause
#include "archive/bzip2_join.hpp"

#include <utility>

namespace libpkg::archive {
namespace {

constexpr u64 kEndMagic = 0x177245385090;
// Output is handed to the sink in pieces of about this size.
constexpr size_t kFlushBytes = size_t{1} << 20;

}  // namespace

Bzip2Joiner::Bzip2Joiner(int level, TarSink sink) : sink_(std::move(sink)) {
  out_ = {'B', 'Z', 'h', static_cast<u8>('0' + level)};
}

void Bzip2Joiner::put_bits(u64 value, int n) {
  // MSB first: the partial byte's free low bits take the value's top bits.
  while (n > 0) {
    const int room = 8 - partial_bits_;
    const int take = n < room ? n : room;
    const u8 top = static_cast<u8>((value >> (n - take)) & ((1u << take) - 1));
    partial_ = static_cast<u8>(partial_ | (top << (room - take)));
    partial_bits_ += take;
    n -= take;
    if (partial_bits_ == 8) {
      out_.push_back(partial_);
      partial_ = 0;
      partial_bits_ = 0;
    }
  }
}

void Bzip2Joiner::append(std::span<const u8> stream,
                         const Bzip2BlockBits& bits) {
  u64 pos = bits.begin_bit;
  const u64 end = bits.end_bit;
  // Up to the source's next byte boundary bit by bit, ...
  while (pos < end && pos % 8 != 0) {
    put_bits((stream[pos / 8] >> (7 - pos % 8)) & 1u, 1);
    ++pos;
  }
  // ... then whole source bytes, each split across the output's partial
  // byte and the next one (no carried state in the loop, so it vectorises).
  const u64 whole = (end - pos) / 8;
  const u8* src = stream.data() + pos / 8;
  if (whole > 0) {
    const size_t base = out_.size();
    out_.resize(base + whole);
    u8* dst = out_.data() + base;
    const int k = partial_bits_;
    if (k == 0) {
      std::copy(src, src + whole, dst);
    } else {
      dst[0] = static_cast<u8>(partial_ | (src[0] >> k));
      for (u64 i = 1; i < whole; ++i)
        dst[i] = static_cast<u8>((src[i - 1] << (8 - k)) | (src[i] >> k));
      partial_ = static_cast<u8>(src[whole - 1] << (8 - k));
    }
    pos += whole * 8;
  }
  // ... and the tail bits of the last source byte.
  const int tail = static_cast<int>(end - pos);
  if (tail > 0) put_bits(stream[pos / 8] >> (8 - tail), tail);
  combined_crc_ = ((combined_crc_ << 1) | (combined_crc_ >> 31)) ^ bits.crc;
  if (out_.size() >= kFlushBytes) flush();
}

void Bzip2Joiner::finish() {
  put_bits(kEndMagic, 48);
  put_bits(combined_crc_, 32);
  if (partial_bits_ > 0) {
    out_.push_back(partial_);
    partial_ = 0;
    partial_bits_ = 0;
  }
  flush();
}

void Bzip2Joiner::flush() {
  if (out_.empty()) return;
  sink_(out_);
  written_ += out_.size();
  out_.clear();
}

}  // namespace libpkg::archive
