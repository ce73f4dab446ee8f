// SPDX-License-Identifier: BSD-3-Clause
// SHA-256 (OpenSSL libcrypto), streaming, for RECORD rows, conda paths.json
// and the content hashes that name grafted libraries.
#pragma once

#include <array>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "libpkg/base/integers.hpp"

namespace libpkg {

/// An incremental SHA-256 (OpenSSL); construction, update, finish and of
/// throw Errc::io (with no file name) when OpenSSL fails.
class Sha256 {
 public:
  /// The 32-byte digest.
  using Digest = std::array<u8, 32>;

  /// Starts a new hash; throws Errc::io when OpenSSL cannot initialise it.
  Sha256();
  ~Sha256();
  /// Takes over `other`'s state.
  Sha256(Sha256&&) noexcept;
  /// Takes over `other`'s state.
  Sha256& operator=(Sha256&&) noexcept;

  /// Hashes `bytes` next; throws Errc::io when OpenSSL fails.
  void update(std::span<const u8> bytes);
  void update(std::string_view s) {
    update({reinterpret_cast<const u8*>(s.data()), s.size()});
  }
  /// Finishes the hash; the object can't be updated afterwards.
  Digest finish();

  /// The digest of `bytes` in one call.
  static Digest of(std::span<const u8> bytes);
  /// The digest of a file, read in 1 MiB pieces rather than mapped (a
  /// GB-sized CUDA library would otherwise count towards the resident set);
  /// its size in *size when given. Errc::io naming the file on failure.
  static Digest of_file(const std::filesystem::path& file, u64* size = nullptr);
  /// The digest as 64 lowercase hex digits.
  static std::string hex(const Digest& d);
  /// URL-safe base64 without '=' padding, as wheel RECORD files use.
  static std::string urlsafe_b64_nopad(const Digest& d);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace libpkg
