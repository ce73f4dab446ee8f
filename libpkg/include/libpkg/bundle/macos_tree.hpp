// SPDX-License-Identifier: BSD-3-Clause
// Bundling what the Mach-O files of a libtorch-style install tree (lib/
// include/ share/ [bin/]) load from outside it into its lib/: the macOS
// libtorch zip. The same planning as the macOS wheel repair
// (bundle/macos_repair.hpp) over a directory instead of a wheel: closures
// resolved with dyld's rules, a reference to a library whose leaf name the
// tree already has pointed at that file (libomp: one OpenMP runtime, never
// a second copy), other outside libraries grafted into lib/, build-tree
// run paths dropped, every edited file re-signed.
//
// Applying writes a staging copy of the tree (bundle::stage_tree's hard
// links): every edited or grafted file is written to a temporary and
// renamed, so the input is never written through.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "libpkg/bundle/macos_repair.hpp"

namespace libpkg::bundle {

/// What plan_macos_tree_bundle decided for a tree.
struct MacosTreeBundlePlan {
  std::filesystem::path tree;
  std::string lib_dir;                // relative to the tree ("lib")
  std::vector<std::string> binaries;  // the tree's Mach-O files
  std::vector<MacosGraft> grafts;
  std::vector<MacosRedirect> redirects;
  std::vector<MacosFileEdit> edits;
  std::vector<std::string> excluded, notes;
  std::vector<std::string> archs;  // union over the files and grafts

  /// One line per graft, redirect, edit and note, for a driver's plan.
  std::vector<std::string> lines() const;
  /// Schema "libpkg-macos-tree-bundle/1": tree, lib_dir, binaries, grafts,
  /// redirects, edits (as in libpkg-macos-repair-plan/1), excluded, notes.
  std::string to_json(int indent = 2) const;
};

/// Plans the bundle of `tree` without writing: its Mach-O files are every
/// regular file under it (symlinks are followed by dyld, not scanned) whose
/// top-level entry is not in `skip`. Uses `options`' library path,
/// executable path, excludes, refs, run-path rule, required archs and
/// signing; grafts go to `options.lib_dir` ("lib" when unset). Throws
/// Errc::usage when `tree` is not a directory or holds no Mach-O file, and
/// plan_macos_repair's errors (a missing dependency, two libraries with one
/// leaf name, a required arch missing, the interpreter's library linked)
/// naming `where` (what the caller was given, e.g. the wheel the tree was
/// unpacked from; empty: the tree).
MacosTreeBundlePlan plan_macos_tree_bundle(
    const std::filesystem::path& tree, const std::vector<std::string>& skip,
    const MacosRepairOptions& options = {}, const std::string& where = "");

/// Writes the plan into `staging` (a copy of the planned tree with the same
/// relative paths): each edited file and each graft (mode 0755) through a
/// temporary file and a rename. Throws the writers' Errc::io errors.
void apply_macos_tree_bundle(const MacosTreeBundlePlan& plan,
                             const std::filesystem::path& staging);

}  // namespace libpkg::bundle
