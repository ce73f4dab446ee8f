// SPDX-License-Identifier: BSD-3-Clause
// One-shot digests other than the streaming SHA-256 of sha256.hpp: the hash
// types Apple code signatures use (SHA-1 in old CodeDirectories, SHA-384).
#pragma once

#include <span>
#include <vector>

#include "libpkg/base/integers.hpp"

namespace libpkg {

/// The digest algorithms digest_of computes.
enum class DigestKind { sha1, sha256, sha384 };

/// The digest of `bytes` (20, 32 or 48 bytes), computed with OpenSSL.
std::vector<u8> digest_of(DigestKind kind, std::span<const u8> bytes);

}  // namespace libpkg
