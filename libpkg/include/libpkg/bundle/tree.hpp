// SPDX-License-Identifier: BSD-3-Clause
// Bundling the external dependencies of an install tree (lib/ include/
// share/ [bin/], libtorch-style) into its lib/ directory.
//
// What PyTorch's build_libtorch.sh did with cp, fname_with_sha256 and
// patchelf (builder-scripts.md §2.4), as plan → apply:
//   - every ELF file's NEEDED is resolved with the loader's rules
//     (deps::Resolver); a name some file of the tree's lib/ provides is
//     inside, a library the platform policy allows is the system's;
//   - the libraries asked for (paths or sonames: a per-CUDA table's list,
//     OpenMP, --include) and, when `bundle_external`, every other library
//     resolved outside that the policy does not allow, travel into lib/
//     with their own dependencies;
//   - grafted copies are renamed `<stem>-<sha256[:8]>.<rest>` as the old
//     script did, except names that are dlopen'd by name (keep-name globs:
//     libcudnn*, libnvrtc-builtins*, ...; the old libtorch script hashed
//     libnvrtc-builtins.so.11.x and broke nvrtc, pytorch#99781). Unlike the
//     old script, a renamed copy's SONAME becomes its file name (the
//     loader, and check_binary, match the two);
//   - NEEDED entries naming a renamed library are rewritten (exact names,
//     not the old script's regex substring);
//   - every dynamic ELF file gets RPATH/RUNPATH `$ORIGIN`-relative to lib/
//     (`$ORIGIN` in lib/, `$ORIGIN/../lib` in bin/), keeping those of its
//     entries that are `$ORIGIN`-relative and stay inside the tree, and
//     dropping absolute build or machine paths, as the old script's
//     `--set-rpath '$ORIGIN'` did.
//
// Applying edits a tree the caller owns (a staging copy): every edited or
// new file is written to a temporary and renamed, never written through,
// so a staging tree of hard links to the input leaves the input untouched
// (stage_tree makes one).
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "libpkg/bundle/repair.hpp"
#include "libpkg/deps/policy.hpp"
#include "libpkg/deps/resolve.hpp"
#include "libpkg/elf/editor.hpp"

namespace libpkg::bundle {

/// A library to bundle whether or not a NEEDED entry asks for it (dlopen'd
/// libraries, a CUDA table's list, OpenMP).
struct TreeLibraryRequest {
  std::string spec;    // a path (contains '/') or a soname to search for
  std::string reason;  // "CUDA 12.4 table", "OpenMP", "--include"
  bool keep_name = false;
  // Not found: a note instead of Errc::not_found.
  bool optional = false;
};

/// What plan_tree_bundle bundles into which directory, with which policy, names
/// and search paths.
struct TreeBundleOptions {
  // The directory (relative to the tree) grafts go to and RPATHs point at.
  std::string lib_dir = "lib";
  // Top-level entries that are not part of the tree (e.g. python/ of a
  // combined install prefix): neither scanned nor edited.
  std::vector<std::string> skip_entries;
  std::vector<TreeLibraryRequest> include;
  // Also graft every library resolved outside that the policy does not
  // allow (a with-deps variant). False: only `include` travels; the others
  // are listed in TreeBundlePlan::external.
  bool bundle_external = true;
  // Never bundled (fnmatch globs on soname or path): the machine's GPU
  // driver libraries.
  std::vector<std::string> exclude = {"libcuda.so*", "libnvidia-ml.so*"};
  // Policy whose whitelist says which libraries the system provides: a
  // name ("manylinux_2_28") or "" for the broadest glibc policy (what
  // check_binary uses for packages that claim no tag).
  std::string policy;
  const deps::PolicySet* policies = nullptr;  // nullptr = builtin
  bool hash_names = true;
  std::vector<std::string> keep_names = default_keep_names();
  elf::RpathTag rpath_tag = elf::RpathTag::runpath;
  deps::SearchConfig search;
  // Missing dependencies are listed in the plan instead of failing
  // (requested libraries must still be found unless `optional`).
  bool ignore_missing = false;
  // Memoizes the grafts' content hashes (archive/file_digest.hpp); null:
  // hashed every time.
  std::shared_ptr<archive::ChunkCache> cache;
};

/// One library copied into lib/: where from, its name there, and why.
struct TreeGraft {
  std::string soname;            // the name it is needed / asked for as
  std::filesystem::path source;  // where it was found (realpath)
  std::string file_name;         // its name in lib/
  bool keep_name = false;
  std::string reason;  // "needed by lib/libfoo.so, not allowed by ..."
  std::string sha256;
  std::vector<std::string> needed_by;
};

/// The edits of one ELF file of the tree (NEEDED, SONAME, search path).
struct TreeEdit {
  std::string file;  // relative to the tree ("lib/libtorch_cpu.so"), or
                     // the graft's "lib/<file_name>"
  bool graft = false;
  std::map<std::string, std::string> replace_needed;
  std::optional<std::string> set_soname;
  std::optional<std::string> rpath;  // new value (unset: unchanged)
  std::optional<std::string> old_rpath;
};

/// The whole tree bundle: grafts, edits, and what stays outside or is missing.
struct TreeBundlePlan {
  std::filesystem::path tree;
  std::string lib_dir;
  std::string policy;  // name of the policy that decided "system"
  elf::RpathTag rpath_tag = elf::RpathTag::runpath;
  std::vector<TreeGraft> grafts;
  std::vector<TreeEdit> edits;  // only files that change
  // Resolved outside, not allowed by the policy, and not grafted
  // (bundle_external off): soname → path.
  std::map<std::string, std::string> external;
  std::vector<std::string> excluded;  // sonames matched by `exclude`
  std::map<std::string, std::set<std::string>> missing;  // soname → needers
  std::vector<std::string> notes;
  std::size_t elf_files = 0;

  /// One line per graft, edit group and note, for a driver's plan.
  std::vector<std::string> lines() const;
  /// Schema "libpkg-tree-bundle/1".
  std::string to_json(int indent = 2) const;
};

/// Plans without writing. Throws Errc::usage when `tree` has no lib_dir
/// (or is not a directory) or the policy is unknown,
/// Errc::not_found for a missing dependency or requested library (unless
/// ignore_missing / optional), Errc::usage for a graft whose file name is
/// already taken in lib/ by a different file.
TreeBundlePlan plan_tree_bundle(const std::filesystem::path& tree,
                                const TreeBundleOptions& options = {});

/// Applies `plan` to `tree` (the planned tree or a copy with the same
/// relative paths): copies the grafts, then edits files by temporary file +
/// rename (a hard-linked input is never written through). Throws the copy's
/// and the ELF editor's errors.
void apply_tree_bundle(const TreeBundlePlan& plan,
                       const std::filesystem::path& tree);

/// Makes `staging` (created; must not exist or be empty) a copy of `input`:
/// directories recreated, symlinks copied as symlinks, regular files
/// hard-linked (copied when the file systems differ). Top-level entries
/// named in `skip` are left out; when `only` is non-empty, only those
/// top-level entries are staged. Throws Errc::usage when `input` is not a
/// directory, `staging` is not empty or an entry is not a regular file,
/// directory or symlink; an errno Error when a link fails.
void stage_tree(const std::filesystem::path& input,
                const std::filesystem::path& staging,
                const std::vector<std::string>& skip = {},
                const std::vector<std::string>& only = {});

}  // namespace libpkg::bundle
