// SPDX-License-Identifier: BSD-3-Clause
// SHA-256 streams that can take the same bytes into two states in one pass.
//
// The zip writer hashes each large chunk twice: for the chunk cache's key
// (a prefix naming the encoder, then the chunk) and for the member's RECORD
// row (the member so far, then the chunk). With the x86 SHA extensions one
// stream is bound by the latency of the sha256rnds2 chain; two independent
// streams interleaved round by round run in about the time of one
// (measured on this 2-core EPYC: 1.78 GB/s for OpenSSL's single stream,
// 3.2-3.3 GB/s of hashed bytes for two interleaved streams; bench/RESULTS.md,
// section "wheel pack: RECORD hashed on the workers"). update_both() does
// that; without the extensions (or off x86-64) the two streams go through
// OpenSSL one after the other, as before. The digests are plain SHA-256
// either way (tests/archive/sha256_stream_test.cpp checks them against
// OpenSSL). Private to the archive layer.
#pragma once

#include <array>
#include <optional>
#include <span>
#include <string_view>

#include "libpkg/base/integers.hpp"
#include "libpkg/base/sha256.hpp"

namespace libpkg::archive {

/// An incremental SHA-256; update_both() feeds two of them at once.
class Sha256Stream {
 public:
  /// automatic: the SHA extensions when the CPU has them, else OpenSSL;
  /// openssl: OpenSSL always (the fallback path, for tests).
  enum class Engine { automatic, openssl };

  explicit Sha256Stream(Engine engine = Engine::automatic);
  Sha256Stream(Sha256Stream&&) noexcept = default;
  Sha256Stream& operator=(Sha256Stream&&) noexcept = default;

  /// Hashes `bytes` next; throws Errc::io when OpenSSL fails.
  void update(std::span<const u8> bytes);
  void update(std::string_view s) {
    update({reinterpret_cast<const u8*>(s.data()), s.size()});
  }
  /// The digest; the stream cannot be updated afterwards.
  Sha256::Digest finish();
  /// a.update(bytes) and b.update(bytes), interleaved when both use the SHA
  /// extensions.
  static void update_both(Sha256Stream& a, Sha256Stream& b,
                          std::span<const u8> bytes);
  /// a.update(x) and b.update(y), interleaved as update_both() does for the
  /// whole blocks both have (the chunk cache's hit tag hashes the two halves
  /// of an entry this way).
  static void update_pair(Sha256Stream& a, std::span<const u8> x,
                          Sha256Stream& b, std::span<const u8> y);
  /// Whether this CPU has the SHA extensions (and SSSE3, SSE4.1) the
  /// automatic engine uses; never throws.
  static bool cpu_has_sha_extensions();
  /// Whether this stream hashes with the SHA extensions.
  bool accelerated() const { return !fallback_.has_value(); }

 private:
  // The accelerated path: a..h, the partial block and the length so far.
  // Returns how many of `bytes` went into completing the partial block.
  std::size_t fill_block(std::span<const u8> bytes);
  void buffer_tail(std::span<const u8> tail);

  std::array<u32, 8> state_{};
  std::array<u8, 64> block_{};
  std::size_t buffered_ = 0;
  u64 length_ = 0;
  std::optional<Sha256> fallback_;
};

}  // namespace libpkg::archive
