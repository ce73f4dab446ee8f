// SPDX-License-Identifier: BSD-3-Clause
// The chunk cache flags every zip-writing command shares: --cache-dir DIR,
// --cache-max SIZE, --no-cache (and LIBPKG_NO_CACHE=1), see
// libpkg/archive/chunk_cache.hpp. Warnings go to stderr as they come.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "libpkg/archive/chunk_cache.hpp"
#include "libpkg/base/integers.hpp"

namespace pkgtool {

// "20G", "512M", "64K", "1T" (binary units, an optional trailing "iB" or
// "B") or plain bytes. Errc::usage naming `option` otherwise.
libpkg::u64 parse_byte_size(const std::string& option, const std::string& text);

struct CacheFlags {
  bool no_cache = false;
  std::optional<std::string> dir;
  std::optional<std::string> max;

  // For CLI11 commands.
  void add_to(CLI::App& app);
  // For hand-parsed commands: consumes `arg` (taking its value from
  // `value`) when it is a cache flag.
  bool take(const std::string& arg, const std::function<std::string()>& value);
  // The cache asked for, or null (--no-cache, LIBPKG_NO_CACHE).
  std::shared_ptr<libpkg::archive::ChunkCache> open() const;
};

// "chunk cache DIR: H hits, M misses (C corrupt), S MB not recompressed" on
// stderr, when the cache saw any lookup.
void print_cache_summary(const libpkg::archive::ChunkCache* cache);

}  // namespace pkgtool
