// SPDX-License-Identifier: BSD-3-Clause
// A fact about a set of files, memoized in the chunk cache under the files'
// identities.
//
// Some facts cost a process and a database read each time, though the files
// they are about rarely change: which OS package owns each library a repair
// grafts takes one `dpkg -S` and one `dpkg-query` (~0.08 s, a fifth of a
// warm-cache repair of the torch-like wheel, bench/RESULTS.md). The key is
// built from `kind` and each file's identity as file_digest.hpp keys a
// file's SHA-256 (archive/file_state.hpp: user, device, inode, size, mtime
// and ctime in nanoseconds, and the path); a file that does not exist is
// part of the key as absent, so its appearing changes the key. When any file
// changed in the last two seconds, or changed while the fact was computed,
// nothing is stored. Only this user's own tagged entries are believed
// (ChunkCache::load_own).
#pragma once

#include <filesystem>
#include <functional>
#include <string_view>
#include <vector>

#include "libpkg/archive/chunk_cache.hpp"
#include "libpkg/base/integers.hpp"

namespace libpkg::archive {

/// `compute()`, or what it returned for the same `kind` and `files` in
/// their present state (at most `max_size` bytes) when `cache` holds it.
/// `cache` may be null: always computed. Throws what `compute` throws.
std::vector<u8> memoized_file_fact(
    ChunkCache* cache, std::string_view kind,
    const std::vector<std::filesystem::path>& files, u64 max_size,
    const std::function<std::vector<u8>()>& compute);

}  // namespace libpkg::archive
