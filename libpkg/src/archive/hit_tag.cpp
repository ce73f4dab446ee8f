// SPDX-License-Identifier: BSD-3-Clause
#include "archive/hit_tag.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string_view>

#include "archive/le_bytes.hpp"
#include "libpkg/base/error.hpp"
#include "libpkg/base/fd.hpp"
#include "libpkg/base/sha256.hpp"

namespace libpkg::archive {
namespace fs = std::filesystem;
namespace {

// Bumped with any change to what the tag covers: old tags then stop
// matching, and those entries are inflated like anyone else's.
// (1: over the SHA-256 of the stored bytes; 2: over their length and CRC,
// trusted only in files closed to other writers.)
constexpr std::string_view kTagVersion = "libpkg chunk hit tag 2\n";

// Reads the key from an open file if the file is ours and private, else
// says why not.
HitKeyFile read_trusted(int fd, const fs::path& path) {
  HitKeyFile r;
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    r.refused =
        fmt::format("{}: cannot stat: {}", path.string(), std::strerror(errno));
    return r;
  }
  std::string problem;
  if (!S_ISREG(st.st_mode))
    problem = "not a regular file";
  else if (st.st_uid != ::geteuid())
    problem = "owned by another user";
  else if ((st.st_mode & 077) != 0)
    problem = "open to other users (mode must be 0600)";
  else if (st.st_nlink != 1)
    problem = "has other hard links";
  else if (st.st_size != static_cast<off_t>(HitKey{}.size()))
    problem = fmt::format("{} bytes long, not {}", st.st_size, HitKey{}.size());
  if (!problem.empty()) {
    r.refused = fmt::format("{}: {}", path.string(), problem);
    return r;
  }
  HitKey key{};
  try {
    if (read_full(fd, key, path.string()) != key.size()) {
      r.refused = path.string() + ": shorter than its size";
      return r;
    }
  } catch (const Error& e) {
    r.refused = e.what();
    return r;
  }
  r.key = key;
  return r;
}

// A new random key, written to a temporary file and published under `path`
// with link(), which fails when another process published one first (then
// theirs is read): two processes never use two keys for long.
void create_key(const fs::path& path) {
  HitKey key{};
  if (::getrandom(key.data(), key.size(), 0) !=
      static_cast<ssize_t>(key.size()))
    return;
  std::string tmp = path.string() + ".tmp-XXXXXX";
  Fd fd(::mkostemp(tmp.data(), O_CLOEXEC));  // mode 0600
  if (!fd) return;
  try {
    write_all(fd.get(), key, tmp);
  } catch (const Error&) {
    ::unlink(tmp.c_str());
    return;
  }
  (void)::link(tmp.c_str(), path.c_str());
  ::unlink(tmp.c_str());
}

// HMAC-SHA-256 (RFC 2104) of `message` under a 32-byte key (shorter than
// the 64-byte block, so it is used as is, zero-padded).
Sha256::Digest hmac_sha256(const HitKey& key, std::span<const u8> message) {
  std::array<u8, 64> ipad{}, opad{};
  for (std::size_t i = 0; i < ipad.size(); ++i) {
    const u8 k = i < key.size() ? key[i] : 0;
    ipad[i] = static_cast<u8>(k ^ 0x36);
    opad[i] = static_cast<u8>(k ^ 0x5c);
  }
  Sha256 inner;
  inner.update(ipad);
  inner.update(message);
  const Sha256::Digest inner_digest = inner.finish();
  Sha256 outer;
  outer.update(opad);
  outer.update(inner_digest);
  return outer.finish();
}

}  // namespace

fs::path hit_key_path(const fs::path& dir) {
  return dir / fmt::format(".hit-key-{}", ::geteuid());
}

HitKeyFile read_hit_key(const fs::path& dir, bool create) {
  const fs::path path = hit_key_path(dir);
  // O_NOFOLLOW: a symlink planted under the name is refused, not followed;
  // O_NONBLOCK: a FIFO does not hang us (fstat refuses it).
  const int flags = O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK;
  Fd fd(::open(path.c_str(), flags));
  int error = errno;
  if (!fd && error == ENOENT && create) {
    create_key(path);
    fd.reset(::open(path.c_str(), flags));
    error = errno;
  }
  if (!fd) {
    HitKeyFile r;
    if (error != ENOENT)
      r.refused = fmt::format("{}: cannot open: {}", path.string(),
                              std::strerror(error));
    return r;
  }
  return read_trusted(fd.get(), path);
}

u64 hit_tag(const HitKey& key, std::span<const u8, 32> chunk_key,
            u32 input_crc32, u64 stored_size, u32 stored_crc32) {
  std::string message(kTagVersion);
  message.append(reinterpret_cast<const char*>(chunk_key.data()),
                 chunk_key.size());
  append_le(message, input_crc32, 4);
  append_le(message, stored_size, 8);
  append_le(message, stored_crc32, 4);
  const Sha256::Digest mac = hmac_sha256(
      key, {reinterpret_cast<const u8*>(message.data()), message.size()});
  const u64 tag = get_le(mac.data(), 8);
  return tag == 0 ? 1 : tag;
}

bool trustable_entry_file(unsigned uid, unsigned mode) {
  return uid == ::geteuid() && (mode & (S_IWGRP | S_IWOTH)) == 0;
}

}  // namespace libpkg::archive
