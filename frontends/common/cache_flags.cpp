// SPDX-License-Identifier: BSD-3-Clause
#include "cache_flags.hpp"

#include <fmt/format.h>

#include <charconv>
#include <cstdio>

#include "libpkg/base/error.hpp"

namespace pkgtool {

using libpkg::u64;

u64 parse_byte_size(const std::string& option, const std::string& text) {
  u64 value = 0;
  const char* end = text.data() + text.size();
  auto [p, ec] = std::from_chars(text.data(), end, value);
  std::string unit(p, end);
  if (unit.ends_with("iB"))
    unit.resize(unit.size() - 2);
  else if (unit.size() > 1 && unit.ends_with("B"))
    unit.resize(unit.size() - 1);
  int shift = -1;
  if (unit.empty() || unit == "B") shift = 0;
  if (unit == "K" || unit == "k") shift = 10;
  if (unit == "M") shift = 20;
  if (unit == "G") shift = 30;
  if (unit == "T") shift = 40;
  if (ec != std::errc() || p == text.data() || shift < 0 ||
      (shift > 0 && value > (~u64{0} >> shift)))
    throw libpkg::Error(libpkg::Errc::usage, option,
                        fmt::format("expects a size such as 20G, 512M or a "
                                    "number of bytes, got '{}'",
                                    text));
  return value << shift;
}

void CacheFlags::add_to(CLI::App& app) {
  app.add_flag("--no-cache", no_cache,
               "do not use the chunk cache (also LIBPKG_NO_CACHE=1)");
  app.add_option_function<std::string>(
      "--cache-dir", [this](const std::string& v) { dir = v; },
      "chunk cache directory (default $XDG_CACHE_HOME/libpkg/chunks)");
  app.add_option_function<std::string>(
      "--cache-max", [this](const std::string& v) { max = v; },
      "chunk cache size cap, e.g. 20G (the default)");
}

bool CacheFlags::take(const std::string& arg,
                      const std::function<std::string()>& value) {
  if (arg == "--no-cache")
    no_cache = true;
  else if (arg == "--cache-dir")
    dir = value();
  else if (arg == "--cache-max")
    max = value();
  else
    return false;
  return true;
}

std::shared_ptr<libpkg::archive::ChunkCache> CacheFlags::open() const {
  std::optional<u64> max_bytes;
  if (max) max_bytes = parse_byte_size("--cache-max", *max);
  std::optional<std::filesystem::path> path;
  if (dir) path = *dir;
  return libpkg::archive::ChunkCache::open(
      no_cache, path, max_bytes, [](const std::string& line) {
        std::fprintf(stderr, "%s\n", line.c_str());
      });
}

void print_cache_summary(const libpkg::archive::ChunkCache* cache) {
  if (cache == nullptr) return;
  const auto c = cache->counters();
  if (c.hits + c.misses == 0) return;
  std::fprintf(stderr,
               "chunk cache %s: %llu hits, %llu misses (%llu corrupt), "
               "%.1f MB not recompressed\n",
               cache->dir().c_str(), static_cast<unsigned long long>(c.hits),
               static_cast<unsigned long long>(c.misses),
               static_cast<unsigned long long>(c.corrupt),
               static_cast<double>(c.bytes_saved) / 1e6);
}

}  // namespace pkgtool
