// SPDX-License-Identifier: BSD-3-Clause
#include "archive/fast_deflate.hpp"

#include <fmt/format.h>
#include <isa-l.h>

#include <algorithm>
#include <limits>

#include "libpkg/base/error.hpp"
#include "libpkg/base/sha256.hpp"

namespace libpkg::archive {

namespace {

constexpr u32 kLevel = 3;
// The level buffer's size decides where igzip ends its blocks, so it is
// fixed: output must not depend on anything but the input.
constexpr u32 kLevelBufferSize = ISAL_DEF_LVL3_DEFAULT;

}  // namespace

struct FastDeflater::State {
  isal_zstream stream{};
  std::vector<u8> level_buffer = std::vector<u8>(kLevelBufferSize);
};

FastDeflater::FastDeflater(u64 max_feed)
    : state_(std::make_unique<State>()),
      max_feed_(std::clamp<u64>(max_feed, 1, kMaxFeed)) {}
FastDeflater::~FastDeflater() = default;

bool FastDeflater::append(std::span<const u8> input, bool final, u64 limit,
                          std::vector<u8>& out) {
  isal_zstream& s = state_->stream;
  isal_deflate_init(&s);
  s.level = kLevel;
  s.level_buf = state_->level_buffer.data();
  s.level_buf_size = kLevelBufferSize;
  s.gzip_flag = IGZIP_DEFLATE;
  const u64 start = out.size();
  // Room for `limit` bytes, but never more than igzip can count.
  const u64 room = std::min<u64>(limit, std::numeric_limits<u32>::max());
  out.resize(start + room);
  s.next_out = out.data() + start;
  s.avail_out = static_cast<u32>(room);
  u64 fed = 0;
  do {
    const u64 piece = std::min(max_feed_, input.size() - fed);
    const bool last = fed + piece == input.size();
    // igzip's next_in is not const, but deflate only reads it.
    s.next_in = const_cast<u8*>(input.data() + fed);
    s.avail_in = static_cast<u32>(piece);
    s.end_of_stream = last && final ? 1 : 0;
    s.flush = last && !final ? SYNC_FLUSH : NO_FLUSH;
    const int rc = isal_deflate(&s);
    if (rc != COMP_OK)
      throw Error(Errc::io, "", fmt::format("igzip deflate failed ({})", rc));
    if (s.avail_in != 0) {  // out of room: no smaller than `limit`
      out.resize(start);
      return false;
    }
    fed += piece;
  } while (fed < input.size());
  // All input taken; it is all written once igzip reached the state that
  // follows the sync flush or the final block (igzip_lib.h).
  const auto done = final ? ZSTATE_END : ZSTATE_NEW_HDR;
  if (s.internal_state.state != done || s.total_out >= limit) {
    out.resize(start);
    return false;
  }
  out.resize(start + s.total_out);
  return true;
}

FastDeflaterPool::Lease::Lease(FastDeflaterPool& pool) : pool_(pool) {
  {
    std::lock_guard lock(pool_.mutex_);
    if (!pool_.idle_.empty()) {
      deflater_ = std::move(pool_.idle_.back());
      pool_.idle_.pop_back();
      return;
    }
  }
  deflater_ = std::make_unique<FastDeflater>();
}

FastDeflaterPool::Lease::~Lease() {
  std::lock_guard lock(pool_.mutex_);
  try {
    pool_.idle_.push_back(std::move(deflater_));
  } catch (...) {
    // The deflater is freed with the lease; the pool just stays smaller.
  }
}

const std::string& fast_deflate_fingerprint() {
  static const std::string print = [] {
    // Nearly random bytes (a 7.9-7.98 bits/byte piece, as plan_chunk()
    // sends here) with some short repeats, so that igzip's match finding
    // and its Huffman choices both show in the output.
    std::vector<u8> probe(64 * 1024);
    u32 x = 2463534242u;
    for (std::size_t i = 0; i < probe.size(); ++i) {
      x ^= x << 13;
      x ^= x >> 17;
      x ^= x << 5;
      probe[i] = i >= 64 && x % 16 == 0 ? probe[i - 1 - x % 61]
                                        : static_cast<u8>(x >> 8);
    }
    const std::string version =
        fmt::format("isa-l {}.{}.{} ", ISAL_MAJOR_VERSION, ISAL_MINOR_VERSION,
                    ISAL_PATCH_VERSION);
    try {
      FastDeflater deflater;
      std::vector<u8> out;
      if (!deflater.append(probe, false, 2 * probe.size(), out))
        return version + "no output";
      return version + Sha256::hex(Sha256::of(out));
    } catch (...) {
      // Never throws (it is part of every chunk key); a failing igzip fails
      // the first fast run instead, with its error.
      return version + "failed";
    }
  }();
  return print;
}

}  // namespace libpkg::archive
