// SPDX-License-Identifier: BSD-3-Clause
// `pkgtool zip list|test|extract ...`: inspect, test and safely unpack any
// zip archive (wheels, .conda, libtorch zips).
//
//   zip list ARCHIVE [--json]
//   zip test ARCHIVE...        exit 1 if a member fails, 2 if an archive is
//                              unreadable (like `unzip -t`)
//   zip extract ARCHIVE -d DIR [-j N] [--max-total-size BYTES]
//       [--max-ratio N] [--max-entries N] [--no-symlinks] [--overwrite]
#include <fmt/format.h>

#include <charconv>
#include <nlohmann/json.hpp>
#include <optional>

#include "cli_parse.hpp"
#include "commands.hpp"
#include "libpkg/archive/extract.hpp"
#include "libpkg/archive/zip_reader.hpp"
#include "libpkg/base/error.hpp"
#include "subcommand_table.hpp"

namespace pkgtool {
namespace {

using libpkg::Errc;
using libpkg::Error;
using libpkg::u64;
using namespace libpkg::archive;

const char* kZipUsage =
    "usage: pkgtool zip list ARCHIVE [--json]\n"
    "       pkgtool zip test ARCHIVE...\n"
    "       pkgtool zip extract ARCHIVE -d DIR [-j N] [--max-total-size "
    "BYTES]\n"
    "                 [--max-ratio N] [--max-entries N] [--no-symlinks] "
    "[--overwrite]\n"
    "                 [--max-expansion RATIO (default 200, 0: no bound)]\n";

[[noreturn]] void usage(const std::string& message) {
  usage_error("pkgtool zip", message);
}

u64 parse_number(const std::string& option, const std::string& text) {
  u64 v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size())
    usage(fmt::format("{} expects a non-negative integer, got '{}'", option,
                      text));
  return v;
}

std::string method_label(libpkg::u16 method) {
  if (method == 0) return "stored";
  if (method == 8) return "deflated";
  return fmt::format("method-{}", method);
}

int run_list(const std::vector<std::string>& args) {
  std::optional<std::string> archive;
  bool json = false;
  for (const std::string& a : args) {
    if (a == "--json")
      json = true;
    else if (!a.empty() && a[0] == '-')
      usage(unexpected_argument(a));
    else if (archive)
      usage("zip list takes one archive");
    else
      archive = a;
  }
  if (!archive) usage("zip list needs an archive");
  ZipReader zip = ZipReader::open(*archive);
  if (json) {
    nlohmann::json out = nlohmann::json::array();
    for (const ZipEntry& e : zip.entries())
      out.push_back({{"name", e.name},
                     {"size", e.uncompressed_size},
                     {"compressed", e.compressed_size},
                     {"method", method_label(e.method)},
                     {"crc", e.crc32},
                     {"mode", e.unix_mode()},
                     {"mtime", e.mtime()}});
    // Names are bytes; replace invalid UTF-8 rather than failing the dump.
    fmt::print("{}\n", out.dump(2, ' ', false,
                                nlohmann::json::error_handler_t::replace));
    return 0;
  }
  fmt::print("{:>12} {:>12} {:<8} {:<8} {:<7} {}\n", "size", "compressed",
             "method", "crc32", "mode", "name");
  u64 total = 0;
  for (const ZipEntry& e : zip.entries()) {
    fmt::print("{:>12} {:>12} {:<8} {:08x} {:07o} {}\n", e.uncompressed_size,
               e.compressed_size, method_label(e.method), e.crc32,
               e.unix_mode(), e.name);
    total += e.uncompressed_size;
  }
  fmt::print("{:>12} {:>12} {} members\n", total, "", zip.entries().size());
  return 0;
}

int run_test(const std::vector<std::string>& args) {
  if (args.empty()) usage("zip test needs at least one archive");
  // Every argument is checked before any archive is read: a mistyped
  // option is the one error line, not one more after the archives' own.
  for (const std::string& path : args)
    if (!path.empty() && path[0] == '-') usage(unexpected_argument(path));
  int status = 0;
  for (const std::string& path : args) {
    std::optional<ZipReader> zip;
    try {
      zip.emplace(ZipReader::open(path));
    } catch (const Error& e) {
      fmt::print(stderr, "error: {}\n", e.what());
      status = 2;
      continue;
    }
    std::size_t failed = 0;
    for (const ZipEntry& e : zip->entries()) {
      try {
        zip->read(e, [](std::span<const libpkg::u8>) {});
      } catch (const Error& err) {
        ++failed;
        fmt::print("{}: {}: FAILED: {}\n", path, e.name, err.message());
      }
    }
    if (failed) {
      fmt::print("{}: {} of {} members failed\n", path, failed,
                 zip->entries().size());
      status = std::max(status, 1);
    } else {
      fmt::print("{}: OK ({} members)\n", path, zip->entries().size());
    }
  }
  return status;
}

int run_extract(const std::vector<std::string>& args) {
  std::optional<std::string> archive;
  std::optional<std::string> dir;
  ZipLimits limits;
  ExtractOptions options;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&]() -> const std::string& {
      if (i + 1 >= args.size()) usage(a + " needs a value");
      return args[++i];
    };
    if (a == "-d")
      dir = value();
    else if (a == "-j")
      options.threads = static_cast<unsigned>(parse_number(a, value()));
    else if (a == "--max-total-size")
      limits.max_total_uncompressed = parse_number(a, value());
    else if (a == "--max-ratio")
      limits.max_ratio = parse_number(a, value());
    else if (a == "--max-entries")
      limits.max_entries = parse_number(a, value());
    else if (a == "--max-expansion")
      options.max_expansion = parse_number(a, value());
    else if (a == "--no-symlinks")
      options.allow_symlinks = false;
    else if (a == "--overwrite")
      options.overwrite = true;
    else if (!a.empty() && a[0] == '-')
      usage(unexpected_argument(a));
    else if (archive)
      usage("zip extract takes one archive");
    else
      archive = a;
  }
  if (!archive) usage("zip extract needs an archive");
  if (!dir) usage("zip extract needs -d DIR");
  // A single member may be as large as the whole archive allows.
  limits.max_entry_uncompressed =
      std::min(limits.max_entry_uncompressed, limits.max_total_uncompressed);
  ZipReader zip = ZipReader::open(*archive, limits);
  ExtractReport r = extract(zip, *dir, options);
  fmt::print(
      "{}: extracted {} files, {} directories, {} symlinks ({} bytes) "
      "to {}\n",
      *archive, r.files, r.directories, r.symlinks, r.bytes, *dir);
  return 0;
}

}  // namespace

int run_zip(const std::vector<std::string>& args) {
  static const SubcommandTable table = {
      {"list", {"", run_list, kZipUsage}},
      {"test", {"", run_test, kZipUsage}},
      {"extract", {"", run_extract, kZipUsage}},
  };
  return run_subcommand(table, "pkgtool zip", args, kZipUsage);
}

}  // namespace pkgtool
