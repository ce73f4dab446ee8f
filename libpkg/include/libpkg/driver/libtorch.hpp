// SPDX-License-Identifier: BSD-3-Clause
// The libtorch driver: an install tree (or a built wheel) → the libtorch
// zip set of one variant, checked.
//
// Replaces libtorch/build.sh + manywheel/build_libtorch.sh after the
// compile (builder-scripts.md §2.3, §2.4):
//   stage      hard-link copy of lib/ include/ share/ [bin/] (the input is
//              never modified; edited files are new inodes)
//   bundle     with-deps variants: the per-CUDA table's libraries (CUDA
//              builds), OpenMP, --include, and every other library the
//              platform policy doesn't allow, into lib/ (hash-renamed
//              except keep-name patterns, as the old script did); every
//              variant: RUNPATH $ORIGIN in lib/, $ORIGIN/../lib in bin/
//   debug      optional split of the main library (keep-debug file, strip,
//              .gnu_debuglink); its CRC names the debug zip
//   pack       libtorch/{lib,include,share,bin,build-version,build-hash},
//              deterministic zip, -latest copies, debug zip
//   check      check_binary on the zip (layout, ABI, dependencies, RPATH,
//              runtimes, accelerator, client link)
// Static variants differ from shared ones only in their name and in what
// the tree holds: the old post-processing was the same for both (and the
// static flag never reached the build, §7.2); a static tree without .a
// files gets a note.
//
// A macOS configuration makes libtorch-macos-<arch>-<ver>.zip (§4): the
// tree's Mach-O files are bundled like the macOS wheel repair
// (bundle/macos_tree.hpp: outside dylibs into lib/, @rpath references,
// build run paths dropped, re-signed) and the OpenMP runtime comes from
// where the wheel_macos driver takes it: the one libomp.dylib in lib/ (the
// wheel's torch/lib/libomp.dylib), which every reference to an OpenMP
// runtime (Homebrew's, a delocated .dylibs copy) is pointed at; a runtime
// the tree lacks, or a second one, is refused. There are no variants, and
// no debug split (no ELF debug info).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "libpkg/driver/common.hpp"

namespace libpkg::driver {

/// The libtorch driver's options: the input (install tree or wheel), the build
/// hash, debug splitting and what to bundle.
struct LibtorchDriverOptions {
  CommonOptions common;
  // Exactly one of these: an install prefix with lib/ include/ [share/
  // bin/], or a built wheel whose <pkg>/{lib,include,share,bin} make the
  // layout (<pkg> = config.package_name if the wheel has it, else the one
  // top-level directory with a lib/).
  std::optional<std::filesystem::path> tree;
  std::optional<std::filesystem::path> wheel;
  // build-hash: given, or `git -C source rev-parse HEAD`.
  std::optional<std::string> build_hash;
  std::optional<std::filesystem::path> source;
  bool debug_split = false;
  // Libraries to split (file-name globs; the first match of the first one
  // names the debug zip).
  std::vector<std::string> debug_libraries = {"libtorch_cpu.so"};
  // Extra libraries to bundle (paths or sonames), in every variant.
  std::vector<std::string> include;
  // Leave out top-level entries of the tree other than the layout
  // directories (e.g. python/) instead of refusing the tree.
  bool skip_other_entries = false;
  bool write_latest = true;
  // Keep the bundled libraries' names instead of <stem>-<sha8>.<rest>.
  bool keep_names = false;
  std::string objcopy = "objcopy";
  std::string git = "git";
  // macOS: where outside dylibs are found first, by leaf name
  // (DYLD_LIBRARY_PATH, --lib-path), libraries another package provides
  // (fnmatch globs, not bundled) and MACOSX_DEPLOYMENT_TARGET (10.15 by
  // default; arm64 at least 11.0), which check_binary holds the zip to.
  std::vector<std::filesystem::path> library_path;
  std::vector<std::string> exclude;
  std::optional<std::string> deployment_target;
};

/// Bundle → pack the libtorch zip (and -latest copies, debug zip) →
/// check_binary; a dry run only plans. Throws Errc::usage for a non-libtorch
/// configuration, a missing or ambiguous input, no build hash or a debug
/// split on macOS; Errc::not_found when git is needed and missing; on macOS
/// the macOS bundle's errors and Errc::format for an OpenMP runtime it
/// would bundle or a second one.
Summary run_libtorch(const LibtorchDriverOptions& options);

}  // namespace libpkg::driver
