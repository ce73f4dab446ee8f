// SPDX-License-Identifier: BSD-3-Clause
#include "libpkg/archive/file_digest.hpp"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <ctime>
#include <optional>
#include <string>

#include "libpkg/base/error.hpp"
#include "libpkg/base/fd.hpp"

namespace libpkg::archive {
namespace fs = std::filesystem;
namespace {

// Files changed this recently are not memoized (see the header).
constexpr i64 kSettleNs = 2'000'000'000;

i64 ns(const struct timespec& t) {
  return static_cast<i64>(t.tv_sec) * 1'000'000'000 + t.tv_nsec;
}

std::string identity(const struct stat& st, const fs::path& file) {
  return fmt::format(
      "libpkg file digest 1; uid {}; dev {}; ino {}; size {}; mtime {}; "
      "ctime {}; path {}",
      ::geteuid(), st.st_dev, st.st_ino, st.st_size, ns(st.st_mtim),
      ns(st.st_ctim), file.string());
}

bool same_file_state(const struct stat& a, const struct stat& b) {
  return a.st_dev == b.st_dev && a.st_ino == b.st_ino &&
         a.st_size == b.st_size && ns(a.st_mtim) == ns(b.st_mtim) &&
         ns(a.st_ctim) == ns(b.st_ctim);
}

bool settled(const struct stat& st) {
  struct timespec now {};
  if (::clock_gettime(CLOCK_REALTIME, &now) != 0) return false;
  return ns(now) - std::max(ns(st.st_mtim), ns(st.st_ctim)) >= kSettleNs;
}

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
  const ChunkCache::Key key =
      ChunkCache::key_for(identity(before, file), std::span<const u8>{});
  Sha256::Digest digest{};
  if (const auto known = cache->load_own(key, digest.size());
      known && known->size() == digest.size()) {
    std::copy(known->begin(), known->end(), digest.begin());
    return digest;
  }
  digest = hash_open_file(fd.get(), file);
  struct stat after {};
  if (settled(before) && ::fstat(fd.get(), &after) == 0 &&
      same_file_state(before, after))
    cache->store(key, 0, digest);
  return digest;
}

}  // namespace libpkg::archive
