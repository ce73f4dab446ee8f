// SPDX-License-Identifier: BSD-3-Clause
// `wheel fuse`: two single-architecture macOS wheels of one project become
// one wheel (delocate-merge). Mach-O files at the same path become fat files
// laid out as `llvm-lipo -create A B` lays them out (macho/lipo.hpp); equal
// files are kept; any other file that differs is an error naming it, unless
// one side is preferred. The output is retagged from the fused files'
// minos, RECORD is regenerated and every member that is not fused is copied
// with its compressed bytes (wheel::rewrite).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "libpkg/base/callbacks.hpp"
#include "libpkg/base/integers.hpp"
#include "libpkg/wheel/name.hpp"

namespace libpkg::wheel {

/// Which wheel's copy wins for a differing file that is not Mach-O.
enum class FusePrefer { none, a, b };

/// How `fuse` writes its output: the directory, which side wins for differing
/// non-Mach-O files, the deflate level, threads and progress.
struct FuseOptions {
  std::filesystem::path out_dir;  // empty: the first wheel's directory
  FusePrefer prefer = FusePrefer::none;
  int level = 6;  // deflate level of the fused members
  unsigned threads = 0;
  ProgressFn progress;
};

/// What `fuse` wrote: the output path and name, the members made fat or taken
/// from one side, and member counts.
struct FuseResult {
  std::filesystem::path path;
  WheelName name;
  std::vector<std::string> fused;      // members made fat
  std::vector<std::string> preferred;  // differing members taken from one side
  u64 members = 0;                     // including RECORD
  u64 raw_copies = 0;
};

/// Fuses `a` and `b` into out_dir/<name with the fused platform tag>.whl.
/// Both must be verified wheels (RECORD) of the same distribution, version,
/// build, python and abi tags, with macOS platform tags. Errors (nothing
/// written): Errc::format for a file that is not a wheel or a corrupt member,
/// Errc::usage for mismatching names, differing non-Mach-O files (listed),
/// Mach-O pairs with a common architecture, or an output that would replace
/// an input; Errc::io when a scratch file for a Mach-O member cannot be made.
FuseResult fuse(const std::filesystem::path& a, const std::filesystem::path& b,
                const FuseOptions& options = {});

}  // namespace libpkg::wheel
