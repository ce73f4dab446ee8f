// SPDX-License-Identifier: BSD-3-Clause
#include "libpkg/archive/file_memo.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <optional>
#include <string>

#include "archive/file_state.hpp"

namespace libpkg::archive {
namespace fs = std::filesystem;
namespace {

// `kind` and every file's identity ("absent" for a file that is not there),
// one per line; nullopt when a file cannot be stat'ed for another reason or
// changed too recently to be memoized.
std::optional<std::string> identities(std::string_view kind,
                                      const std::vector<fs::path>& files) {
  std::string id(kind);
  for (const fs::path& file : files) {
    struct stat st {};
    if (::stat(file.c_str(), &st) != 0) {
      if (errno != ENOENT && errno != ENOTDIR) return std::nullopt;
      id += "\nabsent; path " + file.string();
      continue;
    }
    const FileState state = file_state(st);
    if (!state.settled) return std::nullopt;
    id += "\n" + file_identity("file", state, file);
  }
  return id;
}

}  // namespace

std::vector<u8> memoized_file_fact(
    ChunkCache* cache, std::string_view kind,
    const std::vector<fs::path>& files, u64 max_size,
    const std::function<std::vector<u8>()>& compute) {
  if (cache == nullptr) return compute();
  const std::optional<std::string> before = identities(kind, files);
  if (!before) return compute();
  const ChunkCache::Key key = ChunkCache::key_for(*before, {});
  if (auto known = cache->load_own(key, max_size)) return std::move(*known);
  std::vector<u8> fact = compute();
  // Stored only when no file changed while the fact was computed.
  if (fact.size() <= max_size && identities(kind, files) == before)
    cache->store(key, 0, fact);
  return fact;
}

}  // namespace libpkg::archive
