// SPDX-License-Identifier: BSD-3-Clause
#include "libpkg/base/digest.hpp"

#include <openssl/evp.h>

#include "libpkg/base/error.hpp"

namespace libpkg {

std::vector<u8> digest_of(DigestKind kind, std::span<const u8> bytes) {
  const EVP_MD* md = kind == DigestKind::sha1     ? EVP_sha1()
                     : kind == DigestKind::sha256 ? EVP_sha256()
                                                  : EVP_sha384();
  std::vector<u8> out(static_cast<size_t>(EVP_MD_size(md)));
  unsigned len = 0;
  if (EVP_Digest(bytes.data(), bytes.size(), out.data(), &len, md, nullptr) !=
          1 ||
      len != out.size())
    throw Error(Errc::io, "", "OpenSSL: digest failed");
  return out;
}

}  // namespace libpkg
