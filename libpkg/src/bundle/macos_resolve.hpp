// SPDX-License-Identifier: BSD-3-Clause
// The dependency graph of a macOS wheel's Mach-O files (private to
// bundle/): every (image, install name, arch) reference with where dyld's
// rules found it, merged over the closures of all the wheel's files.
//
// Each wheel file is resolved as a root (deps::dyld_trees, per slice) and
// the results are merged: a library's @rpath reference that only resolves
// through its loader's run paths (delocate#271) is found in the closure of
// that loader, and found beats not found for the same reference.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "libpkg/deps/dyld.hpp"

namespace libpkg::bundle {

struct MacosEdge {
  std::string install_name;
  std::string kind;  // "load", "weak", ...
  std::string arch;  // the slice that holds the reference
  deps::DyldStatus status = deps::DyldStatus::not_found;
  std::optional<std::string> to;  // canonical path of what was found
  std::filesystem::path found;    // the path as dyld's rules found it
  std::vector<std::string> tried;
};

class MacosGraph {
 public:
  // References made by the image at canonical path `from`, in load order.
  const std::vector<MacosEdge>& edges_from(const std::string& from) const;
  void add(const std::string& from, MacosEdge edge);

 private:
  std::map<std::string, std::vector<MacosEdge>> edges_;
};

struct MacosResolveOptions {
  deps::DyldConfig dyld;
  unsigned threads = 0;
};

MacosGraph resolve_macos_closures(
    const std::vector<std::filesystem::path>& roots,
    const MacosResolveOptions& options);

}  // namespace libpkg::bundle
