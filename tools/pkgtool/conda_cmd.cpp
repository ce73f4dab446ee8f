// SPDX-License-Identifier: BSD-3-Clause
// `pkgtool conda pack|extract|transmute|verify ...`: conda packages.
//
//   conda pack PREFIX_DIR --name N --version V [--build-number N]
//       [--build STRING] [--depends SPEC]... [--constrains SPEC]...
//       [--license L] [--summary S] [--home URL] [--subdir S]
//       [--meta FILE.json] [--format conda|tar.bz2|both] [-o DIR]
//       [--placeholder PREFIX | --no-placeholder] [-l ZSTD_LEVEL]
//       [--bz2-level N] [-j N] [--cache-dir DIR] [--cache-max SIZE]
//       [--no-cache]
//   conda extract PKG -d DIR
//   conda transmute PKG --to conda|tar.bz2 [-o DIR] [-l ZSTD_LEVEL] [-j N]
//   conda verify PKG... [--json]       exit 1 when a package has findings
//
// The index.json timestamp is SOURCE_DATE_EPOCH (seconds) * 1000 when set,
// otherwise now. The placeholder defaults to PREFIX_DIR's absolute path: the
// prefix the staged files were built for.
#include <fmt/format.h>

#include <charconv>
#include <chrono>
#include <nlohmann/json.hpp>
#include <optional>

#include "cache_flags.hpp"
#include "cli_parse.hpp"
#include "commands.hpp"
#include "libpkg/archive/zip_writer.hpp"
#include "libpkg/base/error.hpp"
#include "libpkg/conda/package.hpp"
#include "subcommand_table.hpp"

namespace pkgtool {
namespace {

namespace fs = std::filesystem;
using libpkg::Errc;
using libpkg::Error;
using libpkg::i64;
using libpkg::u64;
using namespace libpkg::conda;

const char* kCondaUsage =
    "usage: pkgtool conda pack PREFIX_DIR --name N --version V "
    "[--build-number N]\n"
    "           [--build STRING] [--depends SPEC]... [--constrains SPEC]...\n"
    "           [--license L] [--summary S] [--home URL] [--subdir S]\n"
    "           [--meta FILE.json] [--format conda|tar.bz2|both] [-o DIR]\n"
    "           [--placeholder PREFIX | --no-placeholder] [-l ZSTD_LEVEL]\n"
    "           [--bz2-level N] [-j N] [--cache-dir DIR] [--cache-max SIZE]\n"
    "           [--no-cache]  (chunk cache of large files' zstd frames and\n"
    "           bzip2 blocks)\n"
    "       pkgtool conda extract PKG -d DIR\n"
    "       pkgtool conda transmute PKG --to conda|tar.bz2 [-o DIR] "
    "[-l ZSTD_LEVEL] [-j N]\n"
    "       pkgtool conda verify PKG... [--json]\n";

[[noreturn]] void usage(const std::string& message) {
  usage_error("pkgtool conda", message);
}

u64 parse_number(const std::string& option, const std::string& text) {
  u64 v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size()) {
    usage(fmt::format("{} expects a non-negative integer, got '{}'", option,
                      text));
  }
  return v;
}

PackageFormat parse_format(const std::string& text) {
  if (text == "conda" || text == ".conda") return PackageFormat::conda;
  if (text == "tar.bz2" || text == ".tar.bz2") return PackageFormat::tar_bz2;
  usage("unknown package format '" + text + "' (conda or tar.bz2)");
}

i64 timestamp_ms() {
  if (std::optional<i64> epoch = libpkg::archive::source_date_epoch()) {
    return *epoch * 1000;
  }
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

int run_pack(const std::vector<std::string>& args) {
  std::optional<std::string> prefix;
  std::optional<std::string> meta_file;
  CondaMetadata cli;
  std::optional<u64> build_number;
  std::vector<std::string> depends, constrains;
  std::optional<std::string> placeholder;
  bool no_placeholder = false;
  PackOptions options;
  CacheFlags cache;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&]() -> const std::string& {
      if (i + 1 >= args.size()) usage(a + " needs a value");
      return args[++i];
    };
    if (cache.take(a, value)) continue;
    if (a == "--name") {
      cli.name = value();
    } else if (a == "--version") {
      cli.version = value();
    } else if (a == "--build-number") {
      build_number = parse_number(a, value());
    } else if (a == "--build") {
      cli.build = value();
    } else if (a == "--depends") {
      depends.push_back(value());
    } else if (a == "--constrains") {
      constrains.push_back(value());
    } else if (a == "--license") {
      cli.license = value();
    } else if (a == "--summary") {
      cli.summary = value();
    } else if (a == "--home") {
      cli.home = value();
    } else if (a == "--subdir") {
      cli.subdir = value();
    } else if (a == "--meta") {
      meta_file = value();
    } else if (a == "--format") {
      const std::string& f = value();
      if (f == "both") {
        options.formats = {PackageFormat::conda, PackageFormat::tar_bz2};
      } else {
        options.formats = {parse_format(f)};
      }
    } else if (a == "-o") {
      options.out_dir = value();
    } else if (a == "--placeholder") {
      placeholder = value();
    } else if (a == "--no-placeholder") {
      no_placeholder = true;
    } else if (a == "-l") {
      options.zstd_level = static_cast<int>(parse_number(a, value()));
    } else if (a == "--bz2-level") {
      options.bzip2_level = static_cast<int>(parse_number(a, value()));
    } else if (a == "-j") {
      options.threads = static_cast<unsigned>(parse_number(a, value()));
    } else if (!a.empty() && a[0] == '-') {
      usage(unexpected_argument(a));
    } else if (prefix) {
      usage("conda pack takes one PREFIX_DIR");
    } else {
      prefix = a;
    }
  }
  if (!prefix) usage("conda pack needs a PREFIX_DIR");
  // The JSON file gives the base; command-line flags override it.
  CondaMetadata meta = meta_file ? load_metadata(*meta_file) : CondaMetadata{};
  overlay_text_fields(meta, cli);
  if (build_number) meta.build_number = *build_number;
  if (!depends.empty()) meta.depends = depends;
  if (!constrains.empty()) meta.constrains = constrains;
  if (meta.name.empty()) usage("conda pack needs --name (or name in --meta)");
  if (meta.version.empty()) {
    usage("conda pack needs --version (or version in --meta)");
  }
  if (placeholder && no_placeholder) {
    usage("--placeholder and --no-placeholder exclude each other");
  }
  if (!no_placeholder) {
    options.placeholder =
        placeholder ? *placeholder
                    : fs::absolute(*prefix).lexically_normal().string();
    while (options.placeholder.size() > 1 &&
           options.placeholder.back() == '/') {
      options.placeholder.pop_back();
    }
  }
  options.timestamp_ms = timestamp_ms();
  options.cache = cache.open();
  PackResult result = pack(*prefix, meta, options);
  print_cache_summary(options.cache.get());
  std::size_t with_prefix = 0;
  for (const PathRecord& r : result.paths) {
    if (r.prefix_placeholder) ++with_prefix;
  }
  for (const fs::path& out : result.outputs) {
    fmt::print("{}: {} paths, {} with the build prefix\n", out.string(),
               result.paths.size(), with_prefix);
  }
  return 0;
}

int run_extract(const std::vector<std::string>& args) {
  std::optional<std::string> package;
  std::optional<std::string> dir;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "-d") {
      if (i + 1 >= args.size()) usage("-d needs a value");
      dir = args[++i];
    } else if (!a.empty() && a[0] == '-') {
      usage(unexpected_argument(a));
    } else if (package) {
      usage("conda extract takes one package");
    } else {
      package = a;
    }
  }
  if (!package) usage("conda extract needs a package");
  if (!dir) usage("conda extract needs -d DIR");
  extract(*package, *dir);
  fmt::print("{}: extracted to {}\n", *package, *dir);
  return 0;
}

int run_transmute(const std::vector<std::string>& args) {
  std::optional<std::string> package;
  std::optional<PackageFormat> to;
  fs::path out_dir;
  TransmuteOptions options;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&]() -> const std::string& {
      if (i + 1 >= args.size()) usage(a + " needs a value");
      return args[++i];
    };
    if (a == "--to") {
      to = parse_format(value());
    } else if (a == "-o") {
      out_dir = value();
    } else if (a == "-l") {
      options.zstd_level = static_cast<int>(parse_number(a, value()));
    } else if (a == "-j") {
      options.threads = static_cast<unsigned>(parse_number(a, value()));
    } else if (!a.empty() && a[0] == '-') {
      usage(unexpected_argument(a));
    } else if (package) {
      usage("conda transmute takes one package");
    } else {
      package = a;
    }
  }
  if (!package) usage("conda transmute needs a package");
  if (!to) usage("conda transmute needs --to conda|tar.bz2");
  if (out_dir.empty()) out_dir = fs::path(*package).parent_path();
  if (out_dir.empty()) out_dir = ".";
  fs::path out = transmute(*package, out_dir, *to, options);
  fmt::print("{}\n", out.string());
  return 0;
}

int run_verify(const std::vector<std::string>& args) {
  std::vector<std::string> packages;
  bool json = false;
  for (const std::string& a : args) {
    if (a == "--json") {
      json = true;
    } else if (!a.empty() && a[0] == '-') {
      usage(unexpected_argument(a));
    } else {
      packages.push_back(a);
    }
  }
  if (packages.empty()) usage("conda verify needs at least one package");
  int status = 0;
  nlohmann::json report = nlohmann::json::array();
  for (const std::string& package : packages) {
    std::vector<Finding> findings = verify(package);
    if (!findings.empty()) status = 1;
    if (json) {
      nlohmann::json rows = nlohmann::json::array();
      for (const Finding& f : findings) {
        rows.push_back({{"where", f.where}, {"message", f.message}});
      }
      report.push_back(
          {{"package", package}, {"ok", findings.empty()}, {"findings", rows}});
      continue;
    }
    for (const Finding& f : findings) {
      fmt::print("{}: {}: {}\n", package, f.where, f.message);
    }
    fmt::print("{}: {}\n", package,
               findings.empty() ? std::string("OK")
                                : fmt::format("{} findings", findings.size()));
  }
  if (json) {
    fmt::print("{}\n", report.dump(2, ' ', false,
                                   nlohmann::json::error_handler_t::replace));
  }
  return status;
}

}  // namespace

int run_conda(const std::vector<std::string>& args) {
  static const SubcommandTable table = {
      {"pack", {"", run_pack, kCondaUsage}},
      {"extract", {"", run_extract, kCondaUsage}},
      {"transmute", {"", run_transmute, kCondaUsage}},
      {"verify", {"", run_verify, kCondaUsage}},
  };
  return run_subcommand(table, "pkgtool conda", args, kCondaUsage);
}

}  // namespace pkgtool
