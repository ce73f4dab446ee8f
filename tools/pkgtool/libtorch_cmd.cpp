// SPDX-License-Identifier: BSD-3-Clause
// `pkgtool libtorch pack|name|verify`: C++ zip distributions.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "cache_flags.hpp"
#include "cli_parse.hpp"
#include "commands.hpp"
#include "libpkg/archive/zip_writer.hpp"
#include "libpkg/base/error.hpp"
#include "libpkg/cppdist/libtorch.hpp"
#include "subcommand_table.hpp"

namespace pkgtool {
namespace {

namespace cd = libpkg::cppdist;

const char* kUsage =
    "usage: pkgtool libtorch pack TREE --version V --build-hash H [-o DIR]\n"
    "                        [--variant shared-with-deps] [--pre-cxx11-abi]\n"
    "                        [--macos [--arch x86_64|arm64]] [--no-latest]\n"
    "                        [--skip-other] [-z LEVEL] [-j N] [--json]\n"
    "       pkgtool libtorch name --version V [naming options]\n"
    "                        [--debug-crc HEX | --debug-from ELF] "
    "[--wheel WHEEL] [--url] [--json]\n"
    "       pkgtool libtorch verify ZIP... [--json]\n";

// Naming flags shared by `pack` and `name`.
struct NameFlags {
  std::string version;
  std::string variant = "shared-with-deps";
  bool pre_cxx11 = false;
  bool macos = false;
  std::string arch;

  void add_to(CLI::App& app) {
    app.add_option("--version", version, "release version (may carry +cu124)")
        ->required();
    app.add_option("--variant", variant,
                   "shared|static-with|without-deps (Linux)");
    app.add_flag("--pre-cxx11-abi", pre_cxx11,
                 "built with _GLIBCXX_USE_CXX11_ABI=0 (no cxx11-abi- prefix)");
    app.add_flag("--macos", macos, "macOS naming (libtorch-macos-...)");
    app.add_option("--arch", arch, "macOS architecture: x86_64 or arm64");
  }
  cd::LibtorchName build() const {
    cd::LibtorchName n;
    n.version = version;
    n.platform = macos ? cd::DistPlatform::macos : cd::DistPlatform::linux;
    n.variant = cd::LibtorchVariant::parse(variant);
    n.cxx11_abi = !pre_cxx11;
    n.macos_arch = arch;
    if (!macos && !arch.empty()) {
      throw libpkg::Error(libpkg::Errc::usage, "pkgtool libtorch",
                          "--arch only applies with --macos");
    }
    return n;
  }
};

bool parse(CLI::App& app, const std::vector<std::string>& args) {
  return parse_cli(app, args, "pkgtool libtorch " + app.get_name(), kUsage);
}

int run_pack(const std::vector<std::string>& args) {
  CLI::App app{"pack an install tree as a libtorch zip", "pack"};
  NameFlags names;
  names.add_to(app);
  std::string tree, out_dir = ".", build_hash;
  int level = 6;
  unsigned threads = 0;
  bool no_latest = false, json = false, skip_other = false;
  app.add_option("tree", tree, "install tree with lib/ include/ [share/ bin/]")
      ->required();
  app.add_option("--build-hash", build_hash, "source commit")->required();
  app.add_option("-o,--output-dir", out_dir, "where the zips go");
  app.add_option("-z,--level", level, "deflate level 0-9")
      ->check(CLI::Range(0, 9));
  app.add_option("-j,--jobs", threads, "compression threads (default: cores)");
  app.add_flag("--no-latest", no_latest, "don't write the -latest copies");
  app.add_flag("--skip-other", skip_other,
               "leave out top-level entries other than lib include share bin");
  app.add_flag("--json", json, "print a JSON summary");
  CacheFlags cache;
  cache.add_to(app);
  if (!parse(app, args)) return 0;

  cd::LibtorchPackOptions opts;
  opts.cache = cache.open();
  opts.skip_other_entries = skip_other;
  opts.name = names.build();
  opts.build_hash = build_hash;
  opts.level = level;
  opts.threads = threads;
  opts.timestamp = libpkg::archive::source_date_epoch();
  opts.write_latest = !no_latest;
  cd::LibtorchPackResult r = cd::pack_libtorch(tree, out_dir, opts);
  print_cache_summary(opts.cache.get());
  if (json) {
    nlohmann::json j{{"zip", r.zip.string()},
                     {"files", r.files},
                     {"bytes", r.bytes},
                     {"zip_size", r.zip_size}};
    j["latest"] = nlohmann::json::array();
    for (const auto& p : r.latest) j["latest"].push_back(p.string());
    j["skipped"] = nlohmann::json::array();
    for (const auto& p : r.skipped) j["skipped"].push_back(p.string());
    std::puts(j.dump(2).c_str());
  } else {
    fmt::print("{} ({} files, {} bytes -> {} bytes)\n", r.zip.string(), r.files,
               r.bytes, r.zip_size);
    for (const auto& p : r.latest) fmt::print("{}\n", p.string());
    for (const auto& p : r.skipped) fmt::print("skipped {}\n", p.string());
  }
  return 0;
}

libpkg::u32 parse_crc(const std::string& hex) {
  std::size_t used = 0;
  unsigned long v = 0;
  try {
    v = std::stoul(hex, &used, 16);
  } catch (const std::exception&) {
  }
  if (hex.empty() || used != hex.size() || hex.size() > 8) {
    throw libpkg::Error(libpkg::Errc::usage, "--debug-crc",
                        fmt::format("'{}' is not a 32-bit hex number", hex));
  }
  return static_cast<libpkg::u32>(v);
}

int run_name(const std::vector<std::string>& args) {
  CLI::App app{"print the file names of a libtorch release", "name"};
  NameFlags names;
  names.add_to(app);
  std::string crc_hex, debug_from, wheel;
  bool url = false, json = false;
  auto* crc_opt = app.add_option("--debug-crc", crc_hex,
                                 ".gnu_debuglink CRC-32 (hex) for debug zips");
  app.add_option("--debug-from", debug_from,
                 "read the CRC from this stripped ELF's .gnu_debuglink")
      ->excludes(crc_opt);
  app.add_option("--wheel", wheel, "also name the wheel's debug zip");
  app.add_flag("--url", url, "escape '+' as %2B for download URLs");
  app.add_flag("--json", json, "print JSON");
  if (!parse(app, args)) return 0;

  cd::LibtorchName n = names.build();
  std::optional<libpkg::u32> crc;
  if (!crc_hex.empty()) crc = parse_crc(crc_hex);
  if (!debug_from.empty()) {
    crc = cd::debuglink_crc(debug_from);
    if (!crc) {
      throw libpkg::Error(libpkg::Errc::not_found, debug_from,
                          "no .gnu_debuglink section (was it linked with "
                          "objcopy --add-gnu-debuglink?)");
    }
  }
  auto show = [&](std::string s) { return url ? cd::url_escape(s) : s; };
  nlohmann::json j{{"zip", show(cd::zip_name(n))}};
  j["latest"] = nlohmann::json::array();
  for (const auto& l : cd::latest_names(n)) j["latest"].push_back(show(l));
  if (crc) {
    j["debug_zip"] = show(cd::debug_zip_name(n, *crc));
    if (!wheel.empty()) {
      j["debug_wheel_zip"] = show(cd::debug_wheel_zip_name(wheel, *crc));
    }
    j["crc32"] = fmt::format("{:08x}", *crc);
  }
  if (json) {
    std::puts(j.dump(2).c_str());
  } else {
    fmt::print("{}\n", j["zip"].get<std::string>());
    for (const auto& l : j["latest"]) fmt::print("{}\n", l.get<std::string>());
    if (j.contains("debug_zip"))
      fmt::print("{}\n", j["debug_zip"].get<std::string>());
    if (j.contains("debug_wheel_zip"))
      fmt::print("{}\n", j["debug_wheel_zip"].get<std::string>());
  }
  return 0;
}

int run_verify(const std::vector<std::string>& args) {
  CLI::App app{"check the layout of libtorch zips", "verify"};
  std::vector<std::string> zips;
  bool json = false;
  app.add_option("zip", zips, "libtorch zip files")->required();
  app.add_flag("--json", json, "print JSON");
  if (!parse(app, args)) return 0;

  nlohmann::json out = nlohmann::json::array();
  bool failed = false;
  for (const std::string& path : zips) {
    libpkg::archive::ZipReader zip = libpkg::archive::ZipReader::open(path);
    std::vector<cd::LayoutProblem> problems = cd::check_libtorch_zip(zip);
    failed |= !problems.empty();
    nlohmann::json p = nlohmann::json::array();
    for (const auto& pr : problems) {
      p.push_back({{"member", pr.member}, {"message", pr.message}});
      if (!json) {
        fmt::print("{}: {}{}{}\n", path, pr.member,
                   pr.member.empty() ? "" : ": ", pr.message);
      }
    }
    if (!json && problems.empty()) fmt::print("{}: OK\n", path);
    out.push_back({{"file", path}, {"ok", problems.empty()}, {"problems", p}});
  }
  if (json) std::puts(out.dump(2).c_str());
  return failed ? 1 : 0;
}

}  // namespace

int run_libtorch(const std::vector<std::string>& args) {
  static const SubcommandTable table = {
      {"pack", {"", run_pack}},
      {"name", {"", run_name}},
      {"verify", {"", run_verify}},
  };
  return run_subcommand(table, "pkgtool libtorch", args, kUsage);
}

}  // namespace pkgtool
