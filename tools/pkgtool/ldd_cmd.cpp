// SPDX-License-Identifier: BSD-3-Clause
// `pkgtool ldd FILE... [--json] [--root DIR] [--ldpaths DIRS]
//                      [--lib-path DIR]... [--libc NAME] [--musl]`
//
// Resolves the shared-library closure of each FILE with the dynamic
// loader's rules (libpkg::deps::Resolver) without running anything.
// LD_LIBRARY_PATH is taken from the environment (':' or ';' separated, as
// ld.so reads it). --root DIR reads ld.so.conf and the default directories
// under DIR; --ldpaths replaces ld.so.conf + default directories (auditwheel's
// option); --lib-path adds a directory searched right after
// LD_LIBRARY_PATH. The loader rules are those of --libc (--musl is
// --libc musl) or of the libc the file is built for, glibc's otherwise.
//
// Text output, one indented tree per FILE (each library once, under the
// object that loaded it first):
//   prog (interpreter /lib64/ld-linux-x86-64.so.2)
//       libfoo.so.1 => /opt/x/lib/libfoo.so.1 (via RUNPATH)
//           libc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (already loaded)
//       libbar.so => not found
//
// --json prints, for one FILE, an object shaped like auditwheel's lddtree
// (for several FILEs, an array of them); the schema is the library's
// (libpkg/deps/ldd.hpp), shared with Python's libpkg.deps.ldd.
//
// Exit status: 0 when every library resolves, 1 when some are missing (named
// on stderr), 2 for bad input (missing file, not ELF, bad option).
#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "cli_parse.hpp"
#include "commands.hpp"
#include "libpkg/base/error.hpp"
#include "libpkg/deps/ldd.hpp"
#include "macho_inspect.hpp"

namespace pkgtool {

namespace {

namespace deps = libpkg::deps;

const char* kLddUsage =
    "usage: pkgtool ldd FILE... [--json] [--root DIR] [--ldpaths DIRS]\n"
    "                   [--lib-path DIR]... [--libc glibc|musl|bionic]\n"
    "       pkgtool ldd MACHO... [--json] [--executable-path DIR]\n"
    "                   [--dyld-library-path DIR]...   (dyld's rules)\n";

const char* via_display(deps::FoundVia via) {
  switch (via) {
    case deps::FoundVia::path:
      return "path";
    case deps::FoundVia::rpath:
      return "RPATH";
    case deps::FoundVia::inherited_rpath:
      return "inherited RPATH";
    case deps::FoundVia::ld_library_path:
      return "LD_LIBRARY_PATH";
    case deps::FoundVia::extra_path:
      return "--lib-path";
    case deps::FoundVia::runpath:
      return "RUNPATH";
    case deps::FoundVia::ld_so_conf:
      return "ld.so.conf";
    case deps::FoundVia::default_dir:
      return "default path";
    case deps::FoundVia::not_found:
      return "not found";
  }
  return "?";
}

class TextPrinter {
 public:
  // Indexed once: LddTree::find scans the list, which made printing a file
  // with N NEEDED entries O(N^2).
  explicit TextPrinter(const deps::LddTree& tree) : tree_(tree) {
    for (const auto& lib : tree.libraries) by_name_.emplace(lib.soname, &lib);
  }

  void print() {
    if (tree_.interpreter)
      fmt::print("{} (interpreter {})\n", tree_.path.string(),
                 *tree_.interpreter);
    else
      fmt::print("{}\n", tree_.path.string());
    children(tree_.needed, tree_.path.string(), 1);
  }

 private:
  void children(const std::vector<std::string>& needed,
                const std::string& parent, int depth) {
    std::string indent(static_cast<size_t>(depth) * 4, ' ');
    for (const auto& name : needed) {
      auto it = by_name_.find(name);
      if (it == by_name_.end()) continue;  // below a pruned library
      const deps::LibraryNode* lib = it->second;
      bool first = lib->needed_by == parent && printed_.insert(name).second;
      if (!lib->path) {
        fmt::print("{}{} => not found{}\n", indent, name,
                   first ? "" : " (already listed)");
      } else if (!first) {
        fmt::print("{}{} => {} (already loaded)\n", indent, name,
                   lib->path->string());
        continue;
      } else {
        fmt::print("{}{} => {} (via {})\n", indent, name, lib->path->string(),
                   via_display(lib->via));
      }
      if (!first) continue;
      for (const auto& s : lib->skipped)
        fmt::print("{}    (skipped {}: {})\n", indent, s.path.string(),
                   s.reason);
      if (lib->path) children(lib->needed, name, depth + 1);
    }
  }

  const deps::LddTree& tree_;
  std::unordered_map<std::string_view, const deps::LibraryNode*> by_name_;
  std::unordered_set<std::string> printed_;
};

std::vector<std::string> environment_library_path() {
  const char* env = std::getenv("LD_LIBRARY_PATH");
  return env ? deps::split_ld_library_path(env) : std::vector<std::string>{};
}

}  // namespace

int run_ldd(const std::vector<std::string>& args) {
  bool json = false;
  std::optional<deps::Libc> force_libc;
  deps::SearchConfig config;
  deps::DyldConfig dyld;
  std::vector<std::string> files;
  auto value = [&](size_t& i, const std::string& opt) -> std::string {
    const std::string& a = args[i];
    if (a.size() > opt.size() && a[opt.size()] == '=')
      return a.substr(opt.size() + 1);
    if (i + 1 >= args.size())
      usage_error("pkgtool ldd", opt + " needs a value");
    return args[++i];
  };
  auto is_opt = [](const std::string& a, const std::string& opt) {
    return a == opt || a.starts_with(opt + "=");
  };
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--json") {
      json = true;
    } else if (a == "--musl") {
      force_libc = deps::Libc::musl;
    } else if (is_opt(a, "--libc")) {
      std::string name = value(i, "--libc");
      force_libc = deps::parse_libc(name);
      if (!force_libc)
        usage_error(
            "pkgtool ldd",
            fmt::format("--libc must be glibc, musl or bionic, not '{}'",
                        name));
    } else if (is_opt(a, "--root")) {
      config.root = value(i, "--root");
    } else if (is_opt(a, "--ldpaths")) {
      config.system_dirs = deps::split_path_list(value(i, "--ldpaths"));
    } else if (is_opt(a, "--lib-path")) {
      config.extra_paths.push_back(value(i, "--lib-path"));
    } else if (is_opt(a, "--executable-path")) {
      dyld.executable_path = value(i, "--executable-path");
    } else if (is_opt(a, "--dyld-library-path")) {
      dyld.library_path.push_back(value(i, "--dyld-library-path"));
    } else if (a == "-h" || a == "--help") {
      fmt::print("{}", kLddUsage);
      return 0;
    } else if (a.starts_with("-")) {
      usage_error("pkgtool ldd", unexpected_argument(a));
    } else {
      files.push_back(a);
    }
  }
  if (files.empty()) usage_error("pkgtool ldd", "no input files");
  // Mach-O inputs (decided by the first file) follow dyld's rules.
  if (looks_like_macho(files.front())) return run_macho_ldd(files, dyld, json);
  config.ld_library_path = environment_library_path();

  std::vector<std::filesystem::path> paths(files.begin(), files.end());
  auto reports = deps::ldd(paths, config, force_libc);

  int status = 0;
  for (const auto& report : reports) {
    const deps::LddTree& tree = report.tree;
    if (!json) TextPrinter(tree).print();
    auto missing = tree.missing();
    if (!missing.empty()) {
      // At most 20 names: a crafted file can need a million libraries.
      constexpr size_t kShown = 20;
      std::string names;
      for (size_t i = 0; i < missing.size() && i < kShown; ++i)
        names += (i ? ", " : "") + missing[i];
      if (missing.size() > kShown)
        names += fmt::format(" and {} more", missing.size() - kShown);
      fmt::print(stderr, "pkgtool ldd: {}: {} librar{} not found: {}\n",
                 tree.path.string(), missing.size(),
                 missing.size() == 1 ? "y" : "ies", names);
      status = 1;
    }
  }
  if (json) fmt::print("{}\n", deps::to_json(reports));
  return status;
}

}  // namespace pkgtool
