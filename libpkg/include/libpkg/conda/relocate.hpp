// SPDX-License-Identifier: BSD-3-Clause
// Relocation of a staged prefix for conda, as conda-build's post-processing
// does before packing (prior-art.md §1.4, builder-scripts.md §3.2): the
// ELF files of a package are built with absolute RPATHs into the build
// prefix, which does not exist where the package is installed. Every such
// entry becomes an `$ORIGIN`-relative path to the same directory of the
// install prefix, entries outside the prefix are dropped (they would load
// libraries from whatever the installing machine has there), and every
// dynamic ELF file also searches `$PREFIX/lib`, where its conda dependencies
// put their libraries. DT_RPATH rather than DT_RUNPATH by default, as the
// old build.sh forced (`--force-rpath`, pytorch#19309): LD_LIBRARY_PATH must
// not override the environment's libraries.
//
// The input prefix is never modified: relocate_into stages it as a tree of
// hard links (copies across filesystems) and writes each edited file as a
// new file renamed over its link, so the input's inodes keep their bytes.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include "libpkg/base/thread_pool_fwd.hpp"
#include "libpkg/elf/editor.hpp"

namespace libpkg::conda {

/// What happens to an absolute entry outside every build prefix (or a
/// relative one without $ORIGIN, which ld.so resolves from the working
/// directory).
enum class OutsideRpath { drop, keep };

/// How relocate_search_path and the prefix relocation rewrite search paths.
struct RelocateOptions {
  // Absolute directories the files were built for: the build prefix (the
  // conda placeholder) and, when different, the staged prefix's own path.
  // An entry equal to or under one of them points into the package.
  std::vector<std::string> build_prefixes;
  OutsideRpath outside = OutsideRpath::drop;
  // Prefix-relative directories every dynamic ELF file searches (appended
  // after its own entries unless already there), as conda-build's
  // `build/rpaths`; empty adds nothing.
  std::vector<std::string> add_dirs = {"lib"};
  // The tag written (keep: the file's own, RUNPATH when it has none).
  elf::RpathTag tag = elf::RpathTag::rpath;
  unsigned threads = 0;        // 0: one per core
  ThreadPool* pool = nullptr;  // the job's pool; null: own `threads`
};

/// One ELF file's search path before and after relocation.
struct FileRelocation {
  std::string path;  // prefix-relative, '/'-separated
  std::string old_value;
  std::string old_tag;  // "RPATH", "RUNPATH" or "" (none)
  std::string new_value;
  std::string new_tag;  // "" when the search path is removed
  // Entries dropped or kept from outside the prefix, oddities.
  std::vector<std::string> notes;

  /// True when the value or the tag changes.
  bool changed() const { return old_value != new_value || old_tag != new_tag; }
};

/// The relocation of a whole prefix: what was examined, what changes, and what
/// was left alone.
struct RelocationPlan {
  std::size_t files = 0;      // regular files in the prefix
  std::size_t elf_files = 0;  // dynamic ELF files examined
  // Files that change or have notes, sorted by path.
  std::vector<FileRelocation> relocations;
  // Files left alone with a reason (ELF magic but unreadable).
  std::vector<std::string> notes;

  /// How many relocations change the value or the tag (the rest carry only
  /// notes).
  std::size_t changed_count() const;
};

/// The new search path of the file at prefix-relative `path` whose current
/// value is `old_value` under `old_tag`: pure, no file access.
FileRelocation relocate_search_path(const std::string& path,
                                    const std::string& old_value,
                                    const std::string& old_tag,
                                    const RelocateOptions& options);

/// Plans the relocation of every dynamic ELF file under `prefix` (info/
/// excluded), reading only; nothing is written.
RelocationPlan plan_relocation(const std::filesystem::path& prefix,
                               const RelocateOptions& options);

/// Stages `prefix` into `staging` (created; must not exist or be empty) and
/// applies the plan there. Returns the plan applied. Throws Errc::usage for
/// a missing prefix or special files, Errc::io for I/O failures.
RelocationPlan relocate_into(const std::filesystem::path& prefix,
                             const std::filesystem::path& staging,
                             const RelocateOptions& options);

}  // namespace libpkg::conda
