// SPDX-License-Identifier: BSD-3-Clause
// resolve_libtorch_input / resolve_build_hash: see libtorch_input.hpp.
#include "driver/libtorch_input.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "libpkg/archive/extract.hpp"
#include "libpkg/archive/zip_reader.hpp"
#include "libpkg/base/error.hpp"
#include "libpkg/base/fd.hpp"
#include "libpkg/base/subprocess.hpp"
#include "libpkg/cppdist/libtorch.hpp"

namespace fs = std::filesystem;

namespace libpkg::driver {
namespace {

bool is_layout_dir(const std::string& name) {
  return std::any_of(std::begin(cppdist::kLibtorchDirs),
                     std::end(cppdist::kLibtorchDirs),
                     [&](const char* d) { return name == d; });
}

// Top-level entries of `tree` that are not layout directories.
std::vector<std::string> others(const fs::path& tree) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(tree)) {
    std::string name = e.path().filename().string();
    if (!is_layout_dir(name) || !e.is_directory() || e.is_symlink())
      out.push_back(name);
  }
  std::sort(out.begin(), out.end());
  return out;
}

void require_layout(const fs::path& tree, const std::string& what) {
  for (const char* dir : {"lib", "include"})
    if (!fs::is_directory(tree / dir))
      throw Error(Errc::usage, what,
                  fmt::format("no {}/ directory{}: a libtorch tree needs "
                              "lib/ and include/ (share/ and bin/ optional)",
                              dir,
                              tree.string() == what
                                  ? std::string()
                                  : fmt::format(" at {}", tree.string())));
}

LibtorchInput from_tree(const LibtorchDriverOptions& o) {
  const fs::path& tree = *o.tree;
  // A missing input is an io error with ENOENT (Python: FileNotFoundError),
  // not a usage error.
  require_directory(tree, "install tree");
  require_layout(tree, tree.string());
  LibtorchInput in{tree, others(tree),
                   fmt::format("input: install tree {}", tree.string())};
  if (!in.skip.empty() && !o.skip_other_entries)
    throw Error(Errc::usage, (tree / in.skip.front()).string(),
                fmt::format("not part of the libtorch layout "
                            "(lib, include, share, bin); {} such entr{}: "
                            "use --skip-other to leave them out",
                            in.skip.size(), in.skip.size() == 1 ? "y" : "ies"));
  return in;
}

LibtorchInput from_wheel(const LibtorchDriverOptions& o,
                         const fs::path& scratch) {
  const fs::path& wheel = *o.wheel;
  // Missing, unreadable or not a regular file: ZipReader::open's io error
  // (with errno), naming the wheel.
  archive::ZipReader zip = archive::ZipReader::open(wheel);
  const fs::path dir = scratch / "wheel";
  archive::ExtractOptions eo;
  eo.threads = o.common.threads;
  eo.pool = o.common.pool;
  archive::extract(zip, dir, eo);
  // The old scripts took torch/include and torch/share from the wheel.
  fs::path pkg = dir / o.common.config.package_name;
  if (!fs::is_directory(pkg / "lib")) {
    std::vector<fs::path> candidates;
    for (const auto& e : fs::directory_iterator(dir))
      if (e.is_directory() && fs::is_directory(e.path() / "lib"))
        candidates.push_back(e.path());
    if (candidates.size() != 1)
      throw Error(
          Errc::usage, wheel.string(),
          candidates.empty()
              ? fmt::format("no <package>/lib directory in the wheel "
                            "(looked for {}/lib and any top-level dir with "
                            "lib/)",
                            o.common.config.package_name)
              : fmt::format("several package directories with lib/ ({}, "
                            "{}); name one with --package-name",
                            candidates[0].filename().string(),
                            candidates[1].filename().string()));
    pkg = candidates.front();
  }
  const std::string pkg_name = pkg.filename().string();
  require_layout(pkg, wheel.string());
  return {pkg, others(pkg),
          fmt::format("input: wheel {} (package directory {}/)", wheel.string(),
                      pkg_name)};
}

std::string trim(std::string s) {
  while (!s.empty() &&
         (s.back() == '\n' || s.back() == '\r' || s.back() == ' '))
    s.pop_back();
  return s;
}

}  // namespace

LibtorchInput resolve_libtorch_input(const LibtorchDriverOptions& o,
                                     const fs::path& scratch) {
  if (o.tree.has_value() == o.wheel.has_value())
    throw Error(Errc::usage, "libtorch",
                "give exactly one input: an install tree or a wheel");
  return o.tree ? from_tree(o) : from_wheel(o, scratch);
}

std::string resolve_build_hash(const LibtorchDriverOptions& o) {
  if (o.build_hash) {
    std::string h = trim(*o.build_hash);
    if (h.empty() || h.find('\n') != std::string::npos)
      throw Error(
          Errc::usage, "build-hash",
          fmt::format("must be one non-empty line, got '{}'", *o.build_hash));
    return h;
  }
  if (!o.source)
    throw Error(Errc::usage, "build-hash",
                "give the build hash, or the source checkout to read it "
                "from (git rev-parse HEAD)");
  require_directory(*o.source, "source directory");
  RunResult r = run_process(
      {o.git, "-C", o.source->string(), "rev-parse", "HEAD"},
      {.env_unset = {"GIT_DIR", "GIT_WORK_TREE"}, .timeout_seconds = 60});
  if (r.not_found)
    throw Error(Errc::not_found, o.git,
                "git not found (needed to read the build hash; or give it)");
  std::string h = trim(r.output);
  if (!r.ok() || h.empty() || h.find('\n') != std::string::npos)
    throw Error(
        Errc::usage, o.source->string(),
        fmt::format("git rev-parse HEAD failed ({}): {}", r.describe(), h));
  return h;
}

}  // namespace libpkg::driver
