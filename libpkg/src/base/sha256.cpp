// SPDX-License-Identifier: BSD-3-Clause
#include "libpkg/base/sha256.hpp"

#include <fcntl.h>
#include <openssl/evp.h>
#include <unistd.h>

#include <cerrno>
#include <vector>

#include "libpkg/base/error.hpp"
#include "libpkg/base/fd.hpp"

namespace libpkg {

struct Sha256::State {
  EVP_MD_CTX* ctx = nullptr;
  ~State() { EVP_MD_CTX_free(ctx); }
};

Sha256::Sha256() : state_(std::make_unique<State>()) {
  state_->ctx = EVP_MD_CTX_new();
  if (state_->ctx == nullptr ||
      EVP_DigestInit_ex(state_->ctx, EVP_sha256(), nullptr) != 1)
    throw Error(Errc::io, "", "OpenSSL: cannot initialise SHA-256");
}

Sha256::~Sha256() = default;
Sha256::Sha256(Sha256&&) noexcept = default;
Sha256& Sha256::operator=(Sha256&&) noexcept = default;

void Sha256::update(std::span<const u8> bytes) {
  if (EVP_DigestUpdate(state_->ctx, bytes.data(), bytes.size()) != 1)
    throw Error(Errc::io, "", "OpenSSL: SHA-256 update failed");
}

Sha256::Digest Sha256::finish() {
  Digest d{};
  unsigned len = 0;
  if (EVP_DigestFinal_ex(state_->ctx, d.data(), &len) != 1 || len != d.size())
    throw Error(Errc::io, "", "OpenSSL: SHA-256 final failed");
  return d;
}

Sha256::Digest Sha256::of(std::span<const u8> bytes) {
  Sha256 h;
  h.update(bytes);
  return h.finish();
}

Sha256::Digest Sha256::of_file(const std::filesystem::path& file, u64* size) {
  Fd fd = open_regular(file);
  Sha256 h;
  u64 total = 0;
  read_chunks(fd.get(), file.string(), std::size_t{1} << 20,
              [&](std::span<const u8> piece) {
                h.update(piece);
                total += piece.size();
              });
  if (size) *size = total;
  return h.finish();
}

std::string Sha256::hex(const Digest& d) {
  static const char* kHex = "0123456789abcdef";
  std::string s;
  s.reserve(64);
  for (u8 b : d) {
    s += kHex[b >> 4];
    s += kHex[b & 15];
  }
  return s;
}

std::string Sha256::urlsafe_b64_nopad(const Digest& d) {
  static const char* kAlphabet =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  std::string out;
  size_t i = 0;
  for (; i + 3 <= d.size(); i += 3) {
    u32 v = (u32{d[i]} << 16) | (u32{d[i + 1]} << 8) | d[i + 2];
    for (int k = 3; k >= 0; --k) out += kAlphabet[(v >> (6 * k)) & 63];
  }
  size_t rest = d.size() - i;  // 32 % 3 == 2
  if (rest == 2) {
    u32 v = (u32{d[i]} << 16) | (u32{d[i + 1]} << 8);
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += kAlphabet[(v >> 6) & 63];
  } else if (rest == 1) {
    u32 v = u32{d[i]} << 16;
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
  }
  return out;
}

}  // namespace libpkg
