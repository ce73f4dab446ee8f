// SPDX-License-Identifier: BSD-3-Clause
// The chunk cache's hit tags: a MAC under a key only this user can read, so
// that an entry this user wrote can be trusted without inflating it.
//
// A hit must never put bytes other than the chunk's input into an archive.
// Inflating every hit and comparing it with the input proves that for any
// entry, whoever wrote it, but it was 44 % of a warm `wheel pack`'s CPU
// (bench/RESULTS.md). An entry this user wrote is trusted instead when
//  - its file is owned by this user and closed to writers other than the
//    owner (no group or other write bit, which an ACL granting write would
//    set): nobody else (root aside) can change its bytes in place, and
//    nobody else can make a file owned by this user;
//  - its header carries a 64-bit tag, HMAC-SHA-256 under a 32-byte random
//    key over the chunk key, the input CRC, the stored length and the CRC-32
//    of the stored bytes. Someone who can write the directory but not read
//    the key can rename an entry but cannot move it to another chunk key,
//    nor make a tag for a file of their own.
// The stored bytes' CRC-32 is checked against them on every read (as for
// any entry), which covers accidental damage: the tag need not hash the
// bytes again (a SHA-256 of the stored bytes was 10 % of a warm repair's
// CPU). Whoever can read the key (this user, root) could equally change the
// program or its input. Entries without a matching tag (another user's in a
// shared cache, an older entry, a key that changed, a file opened to other
// writers) are still inflated and compared.
//
// The key lives in the cache directory as `.hit-key-<uid>`, one per user of
// a shared cache, and is trusted only as a regular file of 32 bytes owned
// by this user, with no permission bits for others and one link: a file
// planted under that name by someone else is refused with a warning (hits
// are then inflated), never used. Private to the archive layer.
#pragma once

#include <array>
#include <filesystem>
#include <optional>
#include <span>
#include <string>

#include "libpkg/base/integers.hpp"

namespace libpkg::archive {

/// The secret a cache directory's tags are made with.
using HitKey = std::array<u8, 32>;

/// What reading the key file found.
struct HitKeyFile {
  std::optional<HitKey> key;  // a trusted key
  // Why a file at the key's name was refused ("" when none was there or it
  // was trusted): the caller warns with it.
  std::string refused;
};

/// The key file's path in cache directory `dir` for the effective user.
std::filesystem::path hit_key_path(const std::filesystem::path& dir);

/// Reads `dir`'s key file, refusing one that breaks the rules above;
/// creates it (random, mode 0600, published with link() so that two
/// processes creating it at once agree on one key) when it is missing and
/// `create` is set. Never throws; a key that cannot be read or created is
/// simply absent.
HitKeyFile read_hit_key(const std::filesystem::path& dir, bool create);

/// The tag of an entry: the first 8 bytes (little-endian) of
/// HMAC-SHA-256(key, version "libpkg chunk hit tag 2\n", chunk_key,
/// input_crc32 (4 bytes LE), stored_size (8 bytes LE), stored_crc32 (4 bytes
/// LE)). Never 0: 0 marks an entry stored without a key.
u64 hit_tag(const HitKey& key, std::span<const u8, 32> chunk_key,
            u32 input_crc32, u64 stored_size, u32 stored_crc32);

/// Whether an entry file with this owner and mode may be trusted by its tag
/// (see above): this user's, writable by nobody else.
bool trustable_entry_file(unsigned uid, unsigned mode);

}  // namespace libpkg::archive
