// SPDX-License-Identifier: BSD-3-Clause
// Packs: archives the zip writer committed, hard-linked into the chunk
// cache, and the pointer entries that name a chunk's bytes inside them
// (chunk_cache.hpp describes the cache). Private to the archive layer.
//
// Why: a cold write used to copy every compressed chunk into an entry file
// of its own, as many bytes again as the archive, and new page-cache pages
// are what this kind of machine charges for (bench/RESULTS.md: the cache
// writes were 0.5 s of system time of a 4.3 s cold repair). The archive
// already holds those bytes, byte for byte, at offsets the writer knows; a
// hard link keeps them for the cache at the cost of a directory entry.
//
// A pack is never written to by us. Its bytes are checked like an entry's
// (the stored CRC-32 on every read); a tag trusts it only while it is this
// user's file closed to other writers, like an entry file (hit_tag.hpp).
#pragma once

#include <array>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "libpkg/archive/chunk_cache.hpp"
#include "libpkg/base/integers.hpp"

namespace libpkg::archive {

/// A pack's name: 16 random bytes, 32 hex digits in DIR/packs/.
using PackId = std::array<u8, 16>;

/// Magic of a pointer entry; a plain entry's is "LPKCHK01". The header
/// after it is a plain entry's (stored length, CRCs, tag), followed by the
/// offset of the bytes in the pack (u64) and the pack's id.
inline constexpr std::array<u8, 8> kPointerMagic = {'L', 'P', 'K', 'P',
                                                    'T', 'R', '0', '1'};
inline constexpr std::size_t kPointerTrailer = 8 + 16;

/// DIR/packs.
std::filesystem::path packs_dir(const std::filesystem::path& dir);
/// DIR/packs/<32 hex>.
std::filesystem::path pack_path(const std::filesystem::path& dir,
                                const PackId& id);
/// Whether `name` is shaped like a pack's file name.
bool is_pack_name(std::string_view name);

/// Hard-links the regular file open on `fd` into DIR/packs under a new
/// random id (through /proc/self/fd, which needs no privilege, unlike
/// linkat's AT_EMPTY_PATH). nullopt, with the reason in `why`, when it
/// cannot be linked: another file system, no /proc, a full directory.
std::optional<PackId> link_pack(int fd, const std::filesystem::path& dir,
                                std::string& why);

/// What a pointer entry's tag binds in place of the chunk key alone: the
/// key, the pack and the offset, so that a tagged pointer can be neither
/// moved to another key nor pointed at other bytes by renaming packs.
ChunkCache::Key pointer_subject(const ChunkCache::Key& key, const PackId& id,
                                u64 offset);

}  // namespace libpkg::archive
