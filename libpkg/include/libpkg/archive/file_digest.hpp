// SPDX-License-Identifier: BSD-3-Clause
// SHA-256 of a file's content, memoized in the chunk cache under the file's
// identity.
//
// A repair names each graft after the SHA-256 of the library it copies
// (libcublas-<8 hex>.so.13, as auditwheel does), so every repair of a
// nightly hashed the same 1–2 GB of CUDA libraries again before it could
// write anything: 0.7 s of the 3.7 s of CPU a warm-cache repair of the
// torch-like wheel took (bench/RESULTS.md), on its critical path. The
// digest is stored as a cache entry keyed by what identifies the file's
// content without reading it (archive/file_state.hpp: the effective user,
// device, inode, size, mtime and ctime in nanoseconds, and the path; a file
// changed in the last two seconds is hashed and not memoized, and one that
// changed while it was hashed is not stored).
//
// Nothing can check a memoized digest short of hashing the file, so only
// this user's own entries with a valid hit tag are used
// (ChunkCache::load_own); anything else is hashed and stored again.
#pragma once

#include <filesystem>

#include "libpkg/archive/chunk_cache.hpp"
#include "libpkg/base/sha256.hpp"

namespace libpkg::archive {

/// The SHA-256 of `file`'s content (symlinks followed), from `cache` when it
/// holds it for the file as it is now, else hashed (and stored in `cache`
/// when the file is older than two seconds). `cache` may be null: always
/// hashed. Throws Errc::io naming the file when it cannot be read.
Sha256::Digest file_digest(const std::filesystem::path& file,
                           ChunkCache* cache);

}  // namespace libpkg::archive
