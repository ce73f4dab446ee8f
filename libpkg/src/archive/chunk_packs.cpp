// SPDX-License-Identifier: BSD-3-Clause
#include "archive/chunk_packs.hpp"

#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "archive/le_bytes.hpp"
#include "libpkg/base/sha256.hpp"

namespace libpkg::archive {
namespace fs = std::filesystem;

fs::path packs_dir(const fs::path& dir) { return dir / "packs"; }

fs::path pack_path(const fs::path& dir, const PackId& id) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string name;
  for (u8 b : id) {
    name.push_back(kHex[b >> 4]);
    name.push_back(kHex[b & 15]);
  }
  return packs_dir(dir) / name;
}

bool is_pack_name(std::string_view name) {
  return name.size() == 32 &&
         name.find_first_not_of("0123456789abcdef") == std::string_view::npos;
}

std::optional<PackId> link_pack(int fd, const fs::path& dir, std::string& why) {
  std::error_code ec;
  fs::create_directory(packs_dir(dir), ec);
  if (ec) {
    why = ec.message();
    return std::nullopt;
  }
  PackId id{};
  if (::getrandom(id.data(), id.size(), 0) != static_cast<ssize_t>(id.size())) {
    why = std::strerror(errno);
    return std::nullopt;
  }
  const std::string proc = "/proc/self/fd/" + std::to_string(fd);
  const fs::path target = pack_path(dir, id);
  if (::linkat(AT_FDCWD, proc.c_str(), AT_FDCWD, target.c_str(),
               AT_SYMLINK_FOLLOW) != 0) {
    why = std::strerror(errno);
    return std::nullopt;
  }
  return id;
}

ChunkCache::Key pointer_subject(const ChunkCache::Key& key, const PackId& id,
                                u64 offset) {
  Sha256 h;
  h.update(std::string_view("libpkg chunk pointer\n"));
  h.update(key);
  h.update(id);
  std::array<u8, 8> at{};
  put_le(at.data(), offset, 8);
  h.update(at);
  return h.finish();
}

}  // namespace libpkg::archive
