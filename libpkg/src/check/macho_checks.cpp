// SPDX-License-Identifier: BSD-3-Clause
// dependencies, rpath, runtimes on Mach-O files: what dyld will do with a
// macOS wheel or libtorch zip once installed. The old Darwin check only
// printed `otool -L` / LC_RPATH and grepped for OpenBLAS (builder-scripts.md
// §1.3); delocate left a second libomp in torch/.dylibs (pytorch#122705) and
// dyld from macOS 15.4 refuses an image with a duplicate LC_RPATH.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "check/package.hpp"
#include "libpkg/deps/dyld.hpp"

namespace fs = std::filesystem;

namespace libpkg::check::detail {
namespace {

const MachoEntry* find_macho(const Package& pkg, std::string_view member) {
  auto it = std::lower_bound(
      pkg.machos.begin(), pkg.machos.end(), member,
      [](const MachoEntry& e, std::string_view m) { return e.member < m; });
  return it != pkg.machos.end() && it->member == member ? &*it : nullptr;
}

const MachoSlice* find_slice(const MachoEntry* e, std::string_view arch) {
  if (!e) return nullptr;
  for (const auto& s : e->slices)
    if (s.arch == arch) return &s;
  return nullptr;
}

std::string plural(std::size_t n, const char* word) {
  return fmt::format("{} {}{}", n, word, n == 1 ? "" : "s");
}

// Why an install name did not resolve, in the words of its requester.
std::string unresolved_detail(const Package& pkg, const MachoNeed& need) {
  const MachoSlice* slice =
      find_slice(find_macho(pkg, need.requester), need.arch);
  std::string why;
  if (need.install_name.starts_with("@rpath/")) {
    if (!slice || slice->rpaths.empty())
      why =
          "the file has no LC_RPATH and no image of the package that loads "
          "it supplies a run path that finds it";
    else
      why = fmt::format("not under any run path (its LC_RPATHs: {})",
                        fmt::join(slice->rpaths, ", "));
  } else if (need.install_name.starts_with("@executable_path")) {
    why =
        "@executable_path is the executable's directory, and no "
        "executable of the package loads this file";
  } else if (need.install_name.starts_with("@loader_path")) {
    why = "no such file next to it";
  } else if (!need.install_name.starts_with("/")) {
    why =
        "a relative install name (dyld would look in the current "
        "directory)";
  } else {
    why =
        "an absolute path outside /usr/lib and /System (a build or "
        "Homebrew path)";
  }
  if (need.status == "wrong_arch") {
    // "<scratch>/pkg/torch/lib/x.dylib: arm64 only (...)" → the member.
    const std::string root = pkg.root.string() + "/";
    std::vector<std::string> tried;
    for (std::string t : need.tried) {
      if (t.starts_with(root)) t.erase(0, root.size());
      tried.push_back(std::move(t));
    }
    why = fmt::format("found only for other architectures than {}: {}",
                      need.arch, fmt::join(tried, "; "));
  }
  return why;
}

// "libomp" for "libomp.dylib", "libgomp" for "libgomp.1.dylib".
std::string dylib_base(std::string_view path) {
  auto slash = path.rfind('/');
  std::string_view name =
      slash == std::string_view::npos ? path : path.substr(slash + 1);
  return std::string(name.substr(0, name.find('.')));
}

bool is_openmp(std::string_view path) {
  static const std::set<std::string, std::less<>> bases = {
      "libomp", "libiomp5", "libiomp", "libgomp"};
  return bases.count(dylib_base(path)) != 0;
}

bool mentions_openblas(std::string_view s) {
  std::string lower(s);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  return lower.find("openblas") != std::string::npos;
}

}  // namespace

std::string check_macho_dependencies(const Package& pkg, CheckResult& result) {
  std::size_t inside = 0, system = 0;
  for (const auto& need : pkg.macho_needs) {
    // A wheel's extension that links the interpreter's library: not an
    // unresolved dependency to bundle but a build error (delocate copies
    // the framework into .dylibs, delocate#142; Homebrew's audit refuses
    // it), whatever resolved it.
    if (pkg.kind == ArtifactKind::wheel &&
        deps::is_python_library(need.install_name)) {
      result.problems.push_back(
          {need.requester,
           fmt::format("({}) links the Python interpreter's library {}: an "
                       "extension module must not (the interpreter that "
                       "imports it provides those symbols; a linked one "
                       "loads this build's Python into any other "
                       "interpreter, or fails to load where it is absent): "
                       "relink with -undefined dynamic_lookup, as setuptools "
                       "does",
                       need.arch, need.install_name)});
      continue;
    }
    if (need.member) {
      ++inside;
      continue;
    }
    if (need.status == "system") {
      ++system;
      continue;
    }
    if (need.path) {
      result.problems.push_back(
          {need.requester,
           fmt::format("({}) needs {}, resolved outside the package to {} "
                       "(bundle it: pkgtool repair)",
                       need.arch, need.install_name, need.path->string())});
      continue;
    }
    if (need.kind == "weak") {
      result.notes.push_back(fmt::format(
          "{} ({}): weak dylib {} is not in the package (dyld skips it)",
          need.requester, need.arch, need.install_name));
      continue;
    }
    result.problems.push_back(
        {need.requester,
         fmt::format("({}) needs {}, which resolves neither inside the "
                     "package nor to /usr/lib or /System: {}",
                     need.arch, need.install_name,
                     unresolved_detail(pkg, need))});
  }
  return fmt::format("{}: {} inside the package, {} from /usr/lib or /System",
                     plural(pkg.machos.size(), "Mach-O file"),
                     plural(inside, "install name"), system);
}

std::string check_macho_rpath(const Package& pkg, CheckResult& result) {
  std::size_t entries = 0;
  for (const auto& e : pkg.machos) {
    for (const auto& s : e.slices) {
      std::set<std::string_view> seen;
      for (const auto& raw : s.rpaths) {
        ++entries;
        if (!seen.insert(raw).second) {
          result.problems.push_back(
              {e.member, fmt::format("({}) duplicate LC_RPATH {} (dyld from "
                                     "macOS 15.4 refuses to load the image)",
                                     s.arch, raw)});
          continue;
        }
        if (raw.starts_with("@executable_path")) continue;
        if (!raw.starts_with("@loader_path")) {
          result.problems.push_back(
              {e.member,
               fmt::format("({}) LC_RPATH {} is {} (a leaked build or "
                           "machine path; use @loader_path-relative entries)",
                           s.arch, raw,
                           raw.starts_with("/")
                               ? "absolute"
                               : "not @loader_path- or "
                                 "@executable_path-relative")});
          continue;
        }
        std::string_view rest = std::string_view(raw).substr(12);
        if (!rest.empty() && rest.front() != '/') {
          result.problems.push_back(
              {e.member, fmt::format("({}) LC_RPATH {} is not @loader_path "
                                     "followed by a path",
                                     s.arch, raw)});
          continue;
        }
        while (rest.starts_with('/')) rest.remove_prefix(1);
        fs::path dir =
            (e.file.parent_path() / std::string(rest)).lexically_normal();
        auto rel = dir.lexically_relative(pkg.root);
        if (rel.empty() || *rel.begin() == "..")
          result.problems.push_back(
              {e.member, fmt::format("({}) LC_RPATH {} leaves the package (it "
                                     "points at {})",
                                     s.arch, raw, dir.string())});
      }
    }
  }
  return fmt::format("{} LC_RPATH entr{} in {}", entries,
                     entries == 1 ? "y" : "ies",
                     plural(pkg.machos.size(), "Mach-O file"));
}

std::string check_macho_runtimes(const Package& pkg, CheckResult& result) {
  // OpenMP runtimes that would be loaded: the package's copies (distinct
  // files) plus install names that point outside it.
  std::map<std::string, std::string> instances;  // key → description
  std::string first;
  for (const auto& e : pkg.machos) {
    if (!e.loadable || !is_openmp(e.member)) continue;
    std::error_code ec;
    instances.emplace(fs::weakly_canonical(e.file, ec).string(),
                      e.member + " (in the package)");
    if (first.empty()) first = e.member;
  }
  bool carried = !instances.empty();
  for (const auto& need : pkg.macho_needs) {
    if (!is_openmp(need.install_name) || need.member) continue;
    // An unresolved @rpath/@loader_path name means the package's own copy
    // (the dependencies check reports it); an absolute one (Homebrew's
    // /opt/homebrew/opt/libomp/lib/libomp.dylib) is a second runtime.
    if (!need.path && need.install_name.starts_with("@")) continue;
    instances.emplace("name:" + need.install_name,
                      fmt::format("{} (outside the package, needed by {})",
                                  need.install_name, need.requester));
    if (first.empty()) first = need.requester;
  }
  if (instances.size() > 1) {
    std::vector<std::string> described;
    for (const auto& [key, what] : instances) described.push_back(what);
    result.problems.push_back(
        {first, fmt::format("{} OpenMP runtimes would be loaded (\"OMP: Error "
                            "#15\"; ship exactly one): {}",
                            instances.size(), fmt::join(described, "; "))});
  }
  // The old Darwin check: `otool -L` of every dylib grepped for openblas
  // (the file's own name and id included, as otool -L prints them).
  std::size_t openblas = 0;
  for (const auto& e : pkg.machos) {
    std::set<std::string> names;
    if (mentions_openblas(e.member)) names.insert(e.member);
    for (const auto& s : e.slices) {
      if (s.id && mentions_openblas(*s.id)) names.insert(*s.id);
      for (const auto& [name, kind] : s.dylibs)
        if (mentions_openblas(name)) names.insert(name);
    }
    if (names.empty()) continue;
    ++openblas;
    result.problems.push_back(
        {e.member, fmt::format("OpenBLAS: {} (macOS builds must not ship or "
                               "link OpenBLAS: check_binary.sh's Darwin "
                               "check)",
                               fmt::join(names, ", "))});
  }
  if (instances.size() == 1 && !carried)
    result.problems.push_back(
        {first, fmt::format("needs an OpenMP runtime the package does not "
                            "carry: {}",
                            instances.begin()->second)});
  const std::string blas =
      openblas ? fmt::format("OpenBLAS in {}", plural(openblas, "file"))
               : "no OpenBLAS";
  if (instances.size() == 1)
    return fmt::format("one OpenMP runtime: {}; {}", instances.begin()->second,
                       blas);
  if (instances.empty()) return "no OpenMP runtime needed or carried; " + blas;
  return fmt::format("{} OpenMP runtimes; {}", instances.size(), blas);
}

}  // namespace libpkg::check::detail
