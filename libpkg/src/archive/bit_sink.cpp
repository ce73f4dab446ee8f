// SPDX-License-Identifier: BSD-3-Clause
#include "archive/bit_sink.hpp"

#include <algorithm>
#include <cstring>

namespace libpkg::archive {
namespace {

// Up to 8 bytes of `src` from byte `at`, little-endian (missing bytes 0).
u64 load_le(std::span<const u8> src, u64 at) {
  u8 b[8] = {};
  const u64 n = std::min<u64>(8, src.size() - at);
  std::memcpy(b, src.data() + at, n);
  u64 v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | b[i];
  return v;
}

}  // namespace

void BitSink::spill() {
  const unsigned n = nacc_ / 8;
  if (n == 0) return;
  u8 bytes[8];
  for (unsigned i = 0; i < 8; ++i) bytes[i] = static_cast<u8>(acc_ >> (8 * i));
  buf_.insert(buf_.end(), bytes, bytes + n);
  acc_ = n == 8 ? 0 : acc_ >> (8 * n);
  nacc_ -= 8 * n;
}

void BitSink::put_bits(u64 v, unsigned n) {
  if (n == 0) return;
  v &= (u64{1} << n) - 1;
  acc_ |= v << nacc_;
  nacc_ += n;
  total_bits_ += n;
  spill();
}

void BitSink::put_bytes(std::span<const u8> bytes) {
  spill();
  buf_.insert(buf_.end(), bytes.begin(), bytes.end());
  total_bits_ += u64{bytes.size()} * 8;
}

void BitSink::copy_bits(std::span<const u8> src, u64 from, u64 to,
                        bool clear_first) {
  if (from >= to) return;
  if (clear_first) {
    put_bits(0, 1);
    ++from;
  }
  // Both sides on a byte boundary (the copy of an input's independent
  // chunk after a fresh one): whole bytes, then the tail.
  if (aligned() && from % 8 == 0) {
    const u64 bytes = (to - from) / 8;
    put_bytes(src.subspan(from / 8, bytes));
    from += bytes * 8;
  }
  while (from < to) {
    const unsigned n = static_cast<unsigned>(std::min<u64>(56, to - from));
    put_bits(load_le(src, from / 8) >> (from % 8), n);
    from += n;
  }
}

void BitSink::put_stored_block(std::span<const u8> src, u64 from, u64 to,
                               bool final) {
  put_bits(final ? 1 : 0, 3);  // BFINAL, BTYPE 00
  put_bits(0, (8 - nacc_ % 8) % 8);
  // LEN, NLEN and the data follow the input's header on its next byte.
  const u64 body = (from + 3 + 7) / 8;
  put_bytes(src.subspan(body, to / 8 - body));
}

void BitSink::align_with_empty_stored_block() {
  if (aligned()) return;
  put_bits(0, 3);
  put_bits(0, (8 - nacc_ % 8) % 8);
  const u8 empty[4] = {0x00, 0x00, 0xff, 0xff};
  put_bytes(empty);
}

std::vector<u8> BitSink::take_all() {
  put_bits(0, (8 - nacc_ % 8) % 8);
  return take();
}

std::vector<u8> BitSink::take() {
  spill();
  std::vector<u8> out;
  out.swap(buf_);
  return out;
}

}  // namespace libpkg::archive
