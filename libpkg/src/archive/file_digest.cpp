// SPDX-License-Identifier: BSD-3-Clause
#include "libpkg/archive/file_digest.hpp"

#include <fmt/format.h>
#include <sys/stat.h>

#include <cerrno>
#include <optional>
#include <string>

#include "archive/file_state.hpp"
#include "libpkg/base/error.hpp"
#include "libpkg/base/fd.hpp"

namespace libpkg::archive {
namespace fs = std::filesystem;
namespace {

Sha256::Digest hash_open_file(int fd, const fs::path& file) {
  Sha256 h;
  read_chunks(fd, file.string(), std::size_t{1} << 20,
              [&](std::span<const u8> piece) { h.update(piece); });
  return h.finish();
}

}  // namespace

Sha256::Digest file_digest(const fs::path& file, ChunkCache* cache) {
  Fd fd = open_regular(file);
  if (cache == nullptr) return hash_open_file(fd.get(), file);
  struct stat before {};
  if (::fstat(fd.get(), &before) != 0)
    throw Error(Errc::io, file.string(),
                fmt::format("cannot stat: {}", std::strerror(errno)));
  const FileState state = file_state(before);
  const ChunkCache::Key key =
      ChunkCache::key_for(file_identity("libpkg file digest 1", state, file),
                          std::span<const u8>{});
  Sha256::Digest digest{};
  if (const auto known = cache->load_own(key, digest.size());
      known && known->size() == digest.size()) {
    std::copy(known->begin(), known->end(), digest.begin());
    return digest;
  }
  digest = hash_open_file(fd.get(), file);
  struct stat after {};
  if (state.settled && ::fstat(fd.get(), &after) == 0 &&
      same_file_state(state, file_state(after)))
    cache->store(key, 0, digest);
  return digest;
}

}  // namespace libpkg::archive
