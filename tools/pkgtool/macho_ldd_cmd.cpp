// SPDX-License-Identifier: BSD-3-Clause
// The Mach-O half of `pkgtool ldd`: dyld's rules (libpkg::deps::dyld_trees),
// one tree per slice.
//
// Text, per FILE and slice:
//   FILE (arm64)
//       @rpath/liba.dylib => /x/lib/liba.dylib (via @rpath /x/lib)
//           @loader_path/../lib/libb.dylib => /x/lib/libb.dylib (via
//           @loader_path)
//       /usr/lib/libSystem.B.dylib => system
//       @rpath/libz.dylib => not found
//       @rpath/libw.dylib => wrong architecture (/x/libw.dylib: x86_64 only)
// --json: [{"path", "slices": [{"arch", "executable_path", "libs": [{"name",
// "kind", "needed_by", "depth", "status", "path", "via", "tried"}],
// "errors": [names]}]}] (one object for one FILE).
// Exit 1 when a dependency is missing (not weak) or lacks the slice's arch.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "libpkg/deps/dyld.hpp"

namespace pkgtool {

namespace deps = libpkg::deps;

namespace {

nlohmann::ordered_json tree_json(const deps::DyldTree& t) {
  nlohmann::ordered_json libs = nlohmann::ordered_json::array();
  nlohmann::ordered_json errors = nlohmann::ordered_json::array();
  for (const auto& l : t.libraries) {
    libs.push_back(
        {{"name", l.install_name},
         {"kind", l.kind},
         {"needed_by", l.needed_by},
         {"depth", l.depth},
         {"status", deps::dyld_status_name(l.status)},
         {"path", l.path ? nlohmann::ordered_json(l.path->string()) : nullptr},
         {"via", l.via},
         {"tried", l.tried}});
    if (l.error()) errors.push_back(l.install_name);
  }
  return {
      {"arch", t.arch},
      {"executable_path",
       t.executable_path ? nlohmann::ordered_json(t.executable_path->string())
                         : nullptr},
      {"libs", libs},
      {"errors", errors}};
}

void print_tree(const deps::DyldTree& t) {
  fmt::print("{} ({})\n", t.file.string(), t.arch);
  for (const auto& l : t.libraries) {
    std::string indent(static_cast<size_t>(l.depth) * 4, ' ');
    std::string what;
    switch (l.status) {
      case deps::DyldStatus::found:
        what = fmt::format("{} (via {})", l.path->string(), l.via);
        break;
      case deps::DyldStatus::already_loaded:
        what = fmt::format("{} (already loaded)", l.path->string());
        break;
      case deps::DyldStatus::system:
        what = "system";
        break;
      case deps::DyldStatus::not_found:
        what = l.kind == "weak" ? "not found (weak: allowed)" : "not found";
        break;
      case deps::DyldStatus::wrong_arch:
        what = "wrong architecture";
        break;
    }
    fmt::print("{}{} => {}\n", indent, l.install_name, what);
    if (l.status == deps::DyldStatus::not_found ||
        l.status == deps::DyldStatus::wrong_arch)
      for (const auto& tr : l.tried)
        fmt::print("{}    (rejected {})\n", indent, tr);
  }
}

}  // namespace

int run_macho_ldd(const std::vector<std::string>& files,
                  const deps::DyldConfig& config, bool json) {
  int status = 0;
  nlohmann::ordered_json all = nlohmann::ordered_json::array();
  for (const auto& f : files) {
    auto trees = deps::dyld_trees(f, config);
    nlohmann::ordered_json slices = nlohmann::ordered_json::array();
    for (const auto& t : trees) {
      if (json)
        slices.push_back(tree_json(t));
      else
        print_tree(t);
      std::string bad;
      for (const auto& l : t.libraries)
        if (l.error()) bad += (bad.empty() ? "" : ", ") + l.install_name;
      if (!bad.empty()) {
        fmt::print(stderr, "pkgtool ldd: {} ({}): not loadable: {}\n", f,
                   t.arch, bad);
        status = 1;
      }
    }
    all.push_back({{"path", f}, {"slices", slices}});
  }
  if (json) fmt::print("{}\n", (files.size() == 1 ? all[0] : all).dump(2));
  return status;
}

}  // namespace pkgtool
