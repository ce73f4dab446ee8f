// SPDX-License-Identifier: BSD-3-Clause
#include "archive/sha256_stream.hpp"

#include <algorithm>
#include <cstring>

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#define LIBPKG_SHA_EXTENSIONS 1
#define LIBPKG_SHA_TARGET __attribute__((target("sha,sse4.1,ssse3")))
#endif

namespace libpkg::archive {
namespace {

constexpr std::array<u32, 8> kInitial = {0x6a09e667, 0xbb67ae85, 0x3c6ef372,
                                         0xa54ff53a, 0x510e527f, 0x9b05688c,
                                         0x1f83d9ab, 0x5be0cd19};

#if defined(LIBPKG_SHA_EXTENSIONS)

alignas(16) constexpr u32 kRound[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1,
    0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3,
    0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
    0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147,
    0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
    0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
    0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
    0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208,
    0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

// The state as sha256rnds2 wants it: ABEF and CDGH (A in the top lane).
struct Lanes {
  __m128i abef, cdgh;
};

LIBPKG_SHA_TARGET inline Lanes load_lanes(const std::array<u32, 8>& h) {
  __m128i abcd = _mm_loadu_si128(reinterpret_cast<const __m128i*>(h.data()));
  __m128i efgh =
      _mm_loadu_si128(reinterpret_cast<const __m128i*>(h.data() + 4));
  abcd = _mm_shuffle_epi32(abcd, 0xB1);  // b a d c
  efgh = _mm_shuffle_epi32(efgh, 0x1B);  // h g f e
  return {_mm_alignr_epi8(abcd, efgh, 8), _mm_blend_epi16(efgh, abcd, 0xF0)};
}

LIBPKG_SHA_TARGET inline void store_lanes(const Lanes& s,
                                          std::array<u32, 8>& h) {
  const __m128i feba = _mm_shuffle_epi32(s.abef, 0x1B);
  const __m128i dchg = _mm_shuffle_epi32(s.cdgh, 0xB1);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(h.data()),
                   _mm_blend_epi16(feba, dchg, 0xF0));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(h.data() + 4),
                   _mm_alignr_epi8(dchg, feba, 8));
}

// One 64-byte block into `s`: four rounds per step, the message schedule
// of the next four words computed while they run.
__attribute__((always_inline)) LIBPKG_SHA_TARGET inline void compress(
    Lanes& s, const u8* p) {
  const __m128i swap =
      _mm_set_epi64x(0x0c0d0e0f08090a0bULL, 0x0405060700010203ULL);
  const Lanes saved = s;
  __m128i w[4];
  for (int i = 0; i < 4; ++i)
    w[i] = _mm_shuffle_epi8(
        _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16 * i)), swap);
#pragma GCC unroll 16
  for (int r = 0; r < 16; ++r) {
    __m128i k = _mm_add_epi32(
        w[r & 3], _mm_load_si128(reinterpret_cast<const __m128i*>(kRound) + r));
    s.cdgh = _mm_sha256rnds2_epu32(s.cdgh, s.abef, k);
    s.abef = _mm_sha256rnds2_epu32(s.abef, s.cdgh, _mm_shuffle_epi32(k, 0x0E));
    if (r < 12) {
      __m128i t = _mm_sha256msg1_epu32(w[r & 3], w[(r + 1) & 3]);
      t = _mm_add_epi32(t, _mm_alignr_epi8(w[(r + 3) & 3], w[(r + 2) & 3], 4));
      w[r & 3] = _mm_sha256msg2_epu32(t, w[(r + 3) & 3]);
    }
  }
  s.abef = _mm_add_epi32(s.abef, saved.abef);
  s.cdgh = _mm_add_epi32(s.cdgh, saved.cdgh);
}

// compress() of two streams, their instructions interleaved: each stream's
// rounds are a chain of dependent sha256rnds2, the other's fill the gaps.
__attribute__((always_inline)) LIBPKG_SHA_TARGET inline void compress2(
    Lanes& s, const u8* p, Lanes& t, const u8* q) {
  const __m128i swap =
      _mm_set_epi64x(0x0c0d0e0f08090a0bULL, 0x0405060700010203ULL);
  const Lanes saved_s = s, saved_t = t;
  __m128i w[4], v[4];
  for (int i = 0; i < 4; ++i) {
    w[i] = _mm_shuffle_epi8(
        _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16 * i)), swap);
    v[i] = _mm_shuffle_epi8(
        _mm_loadu_si128(reinterpret_cast<const __m128i*>(q + 16 * i)), swap);
  }
#pragma GCC unroll 16
  for (int r = 0; r < 16; ++r) {
    const __m128i kr =
        _mm_load_si128(reinterpret_cast<const __m128i*>(kRound) + r);
    const __m128i k = _mm_add_epi32(w[r & 3], kr);
    const __m128i l = _mm_add_epi32(v[r & 3], kr);
    s.cdgh = _mm_sha256rnds2_epu32(s.cdgh, s.abef, k);
    t.cdgh = _mm_sha256rnds2_epu32(t.cdgh, t.abef, l);
    s.abef = _mm_sha256rnds2_epu32(s.abef, s.cdgh, _mm_shuffle_epi32(k, 0x0E));
    t.abef = _mm_sha256rnds2_epu32(t.abef, t.cdgh, _mm_shuffle_epi32(l, 0x0E));
    if (r < 12) {
      __m128i a = _mm_sha256msg1_epu32(w[r & 3], w[(r + 1) & 3]);
      __m128i b = _mm_sha256msg1_epu32(v[r & 3], v[(r + 1) & 3]);
      a = _mm_add_epi32(a, _mm_alignr_epi8(w[(r + 3) & 3], w[(r + 2) & 3], 4));
      b = _mm_add_epi32(b, _mm_alignr_epi8(v[(r + 3) & 3], v[(r + 2) & 3], 4));
      w[r & 3] = _mm_sha256msg2_epu32(a, w[(r + 3) & 3]);
      v[r & 3] = _mm_sha256msg2_epu32(b, v[(r + 3) & 3]);
    }
  }
  s.abef = _mm_add_epi32(s.abef, saved_s.abef);
  s.cdgh = _mm_add_epi32(s.cdgh, saved_s.cdgh);
  t.abef = _mm_add_epi32(t.abef, saved_t.abef);
  t.cdgh = _mm_add_epi32(t.cdgh, saved_t.cdgh);
}

LIBPKG_SHA_TARGET void blocks(std::array<u32, 8>& h, const u8* p,
                              std::size_t n) {
  Lanes s = load_lanes(h);
  for (std::size_t i = 0; i < n; ++i) compress(s, p + 64 * i);
  store_lanes(s, h);
}

LIBPKG_SHA_TARGET void blocks2(std::array<u32, 8>& h, const u8* p,
                               std::array<u32, 8>& g, const u8* q,
                               std::size_t n) {
  Lanes s = load_lanes(h), t = load_lanes(g);
  for (std::size_t i = 0; i < n; ++i) compress2(s, p + 64 * i, t, q + 64 * i);
  store_lanes(s, h);
  store_lanes(t, g);
}

bool detect_sha_extensions() {
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (__get_cpuid(1, &a, &b, &c, &d) == 0) return false;
  if ((c & bit_SSSE3) == 0 || (c & bit_SSE4_1) == 0) return false;
  if (__get_cpuid_count(7, 0, &a, &b, &c, &d) == 0) return false;
  return (b & bit_SHA) != 0;
}

#else  // !LIBPKG_SHA_EXTENSIONS: never called (accelerated() is false)

void blocks(std::array<u32, 8>&, const u8*, std::size_t) {}
void blocks2(std::array<u32, 8>&, const u8*, std::array<u32, 8>&, const u8*,
             std::size_t) {}
bool detect_sha_extensions() { return false; }

#endif

}  // namespace

bool Sha256Stream::cpu_has_sha_extensions() {
  static const bool has = detect_sha_extensions();
  return has;
}

Sha256Stream::Sha256Stream(Engine engine) : state_(kInitial) {
  if (engine == Engine::openssl || !cpu_has_sha_extensions())
    fallback_.emplace();
}

// Both copy helpers return early on empty input: an empty span's data() may
// be null, and memcpy from null is undefined even for 0 bytes.
std::size_t Sha256Stream::fill_block(std::span<const u8> bytes) {
  if (buffered_ == 0 || bytes.empty()) return 0;
  const std::size_t n = std::min(bytes.size(), block_.size() - buffered_);
  std::memcpy(block_.data() + buffered_, bytes.data(), n);
  buffered_ += n;
  if (buffered_ == block_.size()) {
    blocks(state_, block_.data(), 1);
    buffered_ = 0;
  }
  return n;
}

void Sha256Stream::buffer_tail(std::span<const u8> tail) {
  if (!tail.empty()) std::memcpy(block_.data(), tail.data(), tail.size());
  buffered_ = tail.size();
}

void Sha256Stream::update(std::span<const u8> bytes) {
  if (fallback_) {
    fallback_->update(bytes);
    return;
  }
  length_ += bytes.size();
  bytes = bytes.subspan(fill_block(bytes));
  if (buffered_ != 0) return;  // all of it went into the partial block
  const std::size_t n = bytes.size() / 64;
  blocks(state_, bytes.data(), n);
  buffer_tail(bytes.subspan(n * 64));
}

void Sha256Stream::update_both(Sha256Stream& a, Sha256Stream& b,
                               std::span<const u8> bytes) {
  update_pair(a, bytes, b, bytes);
}

void Sha256Stream::update_pair(Sha256Stream& a, std::span<const u8> x,
                               Sha256Stream& b, std::span<const u8> y) {
  if (!a.accelerated() || !b.accelerated()) {
    a.update(x);
    b.update(y);
    return;
  }
  a.length_ += x.size();
  b.length_ += y.size();
  // Each stream first completes its own partial block; from there both
  // take whole blocks, each from its own bytes.
  x = x.subspan(a.fill_block(x));
  y = y.subspan(b.fill_block(y));
  const std::size_t nx = a.buffered_ != 0 ? 0 : x.size() / 64;
  const std::size_t ny = b.buffered_ != 0 ? 0 : y.size() / 64;
  const std::size_t both = std::min(nx, ny);
  blocks2(a.state_, x.data(), b.state_, y.data(), both);
  blocks(a.state_, x.data() + 64 * both, nx - both);
  blocks(b.state_, y.data() + 64 * both, ny - both);
  if (a.buffered_ == 0) a.buffer_tail(x.subspan(nx * 64));
  if (b.buffered_ == 0) b.buffer_tail(y.subspan(ny * 64));
}

Sha256::Digest Sha256Stream::finish() {
  if (fallback_) return fallback_->finish();
  // Padding: 0x80, zeros up to 56 mod 64, the length in bits (big-endian).
  std::array<u8, 128> pad{};
  std::memcpy(pad.data(), block_.data(), buffered_);
  pad[buffered_] = 0x80;
  const std::size_t total = buffered_ + 9 <= 64 ? 64 : 128;
  const u64 bits = length_ * 8;
  for (int i = 0; i < 8; ++i)
    pad[total - 1 - i] = static_cast<u8>(bits >> (8 * i));
  blocks(state_, pad.data(), total / 64);
  Sha256::Digest d{};
  for (std::size_t i = 0; i < 8; ++i)
    for (std::size_t j = 0; j < 4; ++j)
      d[4 * i + j] = static_cast<u8>(state_[i] >> (24 - 8 * j));
  return d;
}

}  // namespace libpkg::archive
