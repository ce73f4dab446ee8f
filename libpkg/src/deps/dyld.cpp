// SPDX-License-Identifier: BSD-3-Clause
// The dyld resolver: a depth-first walk carrying the run-path stack of the
// loading chain, because an @rpath name's meaning depends on every image
// above it (delocate#271 resolved it from the library alone and got it
// wrong).
#include "libpkg/deps/dyld.hpp"

#include <fmt/format.h>

#include <set>

#include "libpkg/base/error.hpp"
#include "libpkg/macho/format.hpp"
#include "libpkg/macho/view.hpp"

namespace libpkg::deps {

namespace fs = std::filesystem;
namespace lm = libpkg::macho;

bool is_python_library(std::string_view name) {
  const auto slash = name.rfind('/');
  const std::string_view leaf =
      slash == std::string_view::npos ? name : name.substr(slash + 1);
  if (leaf.starts_with("libpython") && leaf.ends_with(".dylib")) return true;
  // <dir>/Python.framework/Versions/3.11/Python or .../Python.framework/Python
  for (std::string_view fw : {"Python", "Python3"}) {
    if (leaf != fw) continue;
    const std::string dir = std::string("/") + std::string(fw) + ".framework/";
    const std::string at_start = dir.substr(1);
    if (name.find(dir) != std::string_view::npos || name.starts_with(at_start))
      return true;
  }
  return false;
}

const char* dyld_status_name(DyldStatus s) {
  switch (s) {
    case DyldStatus::found:
      return "found";
    case DyldStatus::system:
      return "system";
    case DyldStatus::already_loaded:
      return "already_loaded";
    case DyldStatus::not_found:
      return "not_found";
    case DyldStatus::wrong_arch:
      return "wrong_arch";
  }
  return "?";
}

namespace {

bool is_system(std::string_view name) {
  return name.starts_with("/usr/lib/") || name.starts_with("/System/");
}

// Replaces a leading `prefix` of `name` by `dir`; nullopt when it has none.
std::optional<fs::path> expand(std::string_view name, std::string_view prefix,
                               const fs::path& dir) {
  if (!name.starts_with(prefix)) return std::nullopt;
  std::string_view rest = name.substr(prefix.size());
  // "@loader_path/x" and "@loader_path" itself; "@loader_pathx" is no match.
  if (!rest.empty() && rest.front() != '/') return std::nullopt;
  while (rest.starts_with('/')) rest.remove_prefix(1);
  return (dir / std::string(rest)).lexically_normal();
}

class Walker {
 public:
  Walker(const DyldConfig& config, DyldTree& tree)
      : config_(config), tree_(tree) {}

  void image(const fs::path& path, const lm::Slice& slice,
             std::vector<fs::path> stack, int depth) {
    // This image's run paths come first, then its loaders' (dyld4's
    // LoadChain walk from the image up to the main executable).
    std::vector<fs::path> own;
    for (const auto& r : slice.rpaths()) {
      std::string p(r.path);
      if (auto e = expand(p, "@loader_path", path.parent_path()))
        own.push_back(*e);
      else if (auto x = exec_expand(p))
        own.push_back(*x);
      else if (!p.starts_with("@"))
        own.push_back(fs::path(p).lexically_normal());
    }
    stack.insert(stack.begin(), own.begin(), own.end());
    for (const auto& d : slice.dylibs()) {
      DyldLibrary lib;
      lib.install_name = std::string(d.name);
      lib.kind = lm::dylib_kind_name(d.kind);
      lib.needed_by = path.string();
      lib.depth = depth;
      std::optional<lm::MachOFile> found;
      const lm::Slice* found_slice = nullptr;
      resolve(lib, path, stack, found, found_slice);
      tree_.libraries.push_back(lib);
      if (lib.status == DyldStatus::found)
        image(*lib.path, *found_slice, stack, depth + 1);
    }
  }

 private:
  std::optional<fs::path> exec_expand(std::string_view name) const {
    if (!tree_.executable_path) return std::nullopt;
    return expand(name, "@executable_path", *tree_.executable_path);
  }

  // Fills lib.status/path/via/tried; `file`/`slice` hold the accepted one.
  void resolve(DyldLibrary& lib, const fs::path& loader,
               const std::vector<fs::path>& stack,
               std::optional<lm::MachOFile>& file, const lm::Slice*& slice) {
    const std::string& name = lib.install_name;
    std::string leaf = fs::path(name).filename().string();
    for (const auto& dir : config_.library_path)
      if (try_candidate(lib, dir / leaf, "DYLD_LIBRARY_PATH", file, slice))
        return;
    if (name.starts_with("@rpath/")) {
      for (const auto& dir : stack)
        if (try_candidate(lib, (dir / name.substr(7)).lexically_normal(),
                          "@rpath " + dir.string(), file, slice))
          return;
    } else if (auto e = expand(name, "@loader_path", loader.parent_path())) {
      if (try_candidate(lib, *e, "@loader_path", file, slice)) return;
    } else if (name.starts_with("@executable_path")) {
      if (auto x = exec_expand(name)) {
        if (try_candidate(lib, *x, "@executable_path", file, slice)) return;
      } else {
        lib.tried.push_back(
            "@executable_path: no executable path (--executable-path)");
      }
    } else if (is_system(name)) {
      lib.status = DyldStatus::system;
      lib.via = "system";
      return;
    } else if (try_candidate(lib, name, "install name", file, slice)) {
      return;
    }
    bool wrong = false;
    for (const auto& t : lib.tried)
      if (t.ends_with("(wrong architecture)")) wrong = true;
    lib.status = wrong ? DyldStatus::wrong_arch : DyldStatus::not_found;
  }

  bool try_candidate(DyldLibrary& lib, const fs::path& candidate,
                     const std::string& via, std::optional<lm::MachOFile>& file,
                     const lm::Slice*& slice) {
    std::error_code ec;
    if (!fs::is_regular_file(candidate, ec)) return false;
    try {
      file.emplace(lm::MachOFile::open(candidate));
    } catch (const Error& e) {
      lib.tried.push_back(fmt::format("{}: {}", candidate.string(), e.what()));
      return false;
    }
    slice = nullptr;
    std::string archs;
    for (const auto& s : file->slices()) {
      if (s.arch() == tree_.arch && s.parsed()) slice = &s;
      archs += (archs.empty() ? "" : ",") + s.arch();
    }
    if (!slice) {
      lib.tried.push_back(fmt::format("{}: {} only (wrong architecture)",
                                      candidate.string(), archs));
      return false;
    }
    lib.path = candidate;
    lib.via = via;
    fs::path key = fs::weakly_canonical(candidate, ec);
    if (ec) key = candidate;
    lib.status = loaded_.insert(key).second ? DyldStatus::found
                                            : DyldStatus::already_loaded;
    return true;
  }

  const DyldConfig& config_;
  DyldTree& tree_;
  std::set<fs::path> loaded_;
};

}  // namespace

std::vector<DyldTree> dyld_trees(const fs::path& file,
                                 const DyldConfig& config) {
  lm::MachOFile root = lm::MachOFile::open(file);
  std::vector<DyldTree> trees;
  for (const auto& slice : root.slices()) {
    if (!slice.parsed()) continue;
    DyldTree tree;
    tree.file = file;
    tree.arch = slice.arch();
    tree.executable_path = config.executable_path;
    if (!tree.executable_path && slice.filetype() == lm::kMhExecute)
      tree.executable_path = fs::absolute(file).parent_path();
    Walker(config, tree)
        .image(fs::absolute(file).lexically_normal(), slice, {}, 1);
    trees.push_back(std::move(tree));
  }
  if (trees.empty())
    throw Error(Errc::unsupported, file.string(),
                "no 64-bit little-endian slice to resolve");
  return trees;
}

}  // namespace libpkg::deps
