// SPDX-License-Identifier: BSD-3-Clause
// `pkgtool cache stats|prune|clear`: the chunk cache of the zip writers
// (libpkg/archive/chunk_cache.hpp).
//
//   cache stats [--cache-dir DIR] [--json]   entries and bytes on disk
//   cache prune [--cache-dir DIR] [--cache-max SIZE] [--to SIZE]
//                                            least recently used out first
//   cache clear [--cache-dir DIR]            every entry
#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <optional>

#include "cache_flags.hpp"
#include "cli_parse.hpp"
#include "commands.hpp"
#include "libpkg/archive/chunk_cache.hpp"
#include "libpkg/base/error.hpp"
#include "subcommand_table.hpp"

namespace pkgtool {
namespace {

using libpkg::Errc;
using libpkg::Error;
using libpkg::u64;
using libpkg::archive::ChunkCache;

const char* kCacheUsage =
    "usage: pkgtool cache stats [--cache-dir DIR] [--json]\n"
    "       pkgtool cache prune [--cache-dir DIR] [--cache-max SIZE] "
    "[--to SIZE]\n"
    "       pkgtool cache clear [--cache-dir DIR]\n"
    "the chunk cache of deflated large members (default "
    "$XDG_CACHE_HOME/libpkg/chunks);\n"
    "prune removes least recently used entries until the cache fits SIZE "
    "(--to, else\n"
    "--cache-max, else 20G)\n";

[[noreturn]] void usage(const std::string& message) {
  usage_error("pkgtool cache", message);
}

std::string mib(u64 bytes) {
  return fmt::format("{:.1f} MiB", static_cast<double>(bytes) / (1 << 20));
}

// `sub` is stats, prune or clear; `args` its arguments.
int run_cache_op(const std::string& sub, const std::vector<std::string>& args) {
  CacheFlags flags;
  std::optional<std::string> to;
  bool json = false;
  // A stray positional is reported after the loop, so that an unknown
  // option anywhere is the one named (it says more).
  std::optional<std::string> stray;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= args.size()) usage(a + " expects a value");
      return args[++i];
    };
    if (a == "--to" && sub == "prune")
      to = value();
    else if (a == "--json" && sub == "stats")
      json = true;
    else if (a.size() > 1 && a[0] == '-' &&
             (a == "--no-cache" || !flags.take(a, value)))
      usage(unexpected_argument(a));
    else if (a.size() <= 1 || a[0] != '-')
      stray = stray.value_or(a);
  }
  if (stray) usage(unexpected_argument(*stray));
  libpkg::archive::ChunkCacheOptions o;
  if (flags.dir) o.dir = *flags.dir;
  if (flags.max) o.max_bytes = parse_byte_size("--cache-max", *flags.max);
  ChunkCache cache(o);
  if (sub == "stats") {
    const ChunkCache::Usage u = cache.usage();
    if (json) {
      nlohmann::json j = {{"dir", cache.dir().string()},
                          {"entries", u.entries},
                          {"packs", u.packs},
                          {"bytes", u.bytes},
                          {"max_bytes", cache.max_bytes()}};
      fmt::print("{}\n", j.dump(2));
    } else {
      fmt::print("{}: {} entries ({} archives linked), {} (cap {})\n",
                 cache.dir().string(), u.entries, u.packs, mib(u.bytes),
                 mib(cache.max_bytes()));
    }
  } else if (sub == "prune") {
    const u64 cap = to ? parse_byte_size("--to", *to) : cache.max_bytes();
    const ChunkCache::Usage before = cache.usage();
    const ChunkCache::Usage after = cache.prune(cap);
    fmt::print("{}: removed {} entries ({}); {} entries, {} left\n",
               cache.dir().string(), before.entries - after.entries,
               mib(before.bytes - after.bytes), after.entries,
               mib(after.bytes));
  } else {
    const ChunkCache::Usage before = cache.usage();
    cache.clear();
    fmt::print("{}: removed {} entries ({})\n", cache.dir().string(),
               before.entries, mib(before.bytes));
  }
  return 0;
}

int cache_stats(const std::vector<std::string>& args) {
  return run_cache_op("stats", args);
}
int cache_prune(const std::vector<std::string>& args) {
  return run_cache_op("prune", args);
}
int cache_clear(const std::vector<std::string>& args) {
  return run_cache_op("clear", args);
}

}  // namespace

int run_cache(const std::vector<std::string>& args) {
  static const SubcommandTable table = {
      {"stats", {"", cache_stats, kCacheUsage}},
      {"prune", {"", cache_prune, kCacheUsage}},
      {"clear", {"", cache_clear, kCacheUsage}},
  };
  return run_subcommand(table, "pkgtool cache", args, kCacheUsage);
}

}  // namespace pkgtool
