// SPDX-License-Identifier: BSD-3-Clause
// Merging the dyld closures of a macOS wheel's files into one graph.
#include "bundle/macos_resolve.hpp"

#include <algorithm>

#include "libpkg/base/thread_pool.hpp"

namespace fs = std::filesystem;

namespace libpkg::bundle {

namespace {

std::string canonical_string(const fs::path& p) {
  std::error_code ec;
  fs::path c = fs::weakly_canonical(p, ec);
  return (ec ? p.lexically_normal() : c).string();
}

bool resolved(deps::DyldStatus s) {
  return s == deps::DyldStatus::found ||
         s == deps::DyldStatus::already_loaded || s == deps::DyldStatus::system;
}

}  // namespace

const std::vector<MacosEdge>& MacosGraph::edges_from(
    const std::string& from) const {
  static const std::vector<MacosEdge> kNone;
  auto it = edges_.find(from);
  return it == edges_.end() ? kNone : it->second;
}

void MacosGraph::add(const std::string& from, MacosEdge edge) {
  auto& list = edges_[from];
  auto same = std::find_if(list.begin(), list.end(), [&](const MacosEdge& e) {
    return e.install_name == edge.install_name && e.arch == edge.arch;
  });
  if (same == list.end()) {
    list.push_back(std::move(edge));
  } else if (!resolved(same->status) && resolved(edge.status)) {
    *same = std::move(edge);  // found through another loading chain
  }
}

MacosGraph resolve_macos_closures(const std::vector<fs::path>& roots,
                                  const MacosResolveOptions& options) {
  std::vector<std::vector<deps::DyldTree>> trees(roots.size());
  ThreadPool pool(options.threads);
  pool.parallel_for(roots.size(), [&](std::size_t i) {
    trees[i] = deps::dyld_trees(roots[i], options.dyld);
  });
  MacosGraph graph;
  for (const auto& per_root : trees)
    for (const auto& tree : per_root)
      for (const auto& lib : tree.libraries) {
        MacosEdge e;
        e.install_name = lib.install_name;
        e.kind = lib.kind;
        e.arch = tree.arch;
        e.status = lib.status;
        if (lib.path) {
          e.found = *lib.path;
          e.to = canonical_string(*lib.path);
        }
        e.tried = lib.tried;
        graph.add(canonical_string(lib.needed_by), std::move(e));
      }
  return graph;
}

}  // namespace libpkg::bundle
