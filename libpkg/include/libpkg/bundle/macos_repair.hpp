// SPDX-License-Identifier: BSD-3-Clause
// Repairing a macOS wheel (delocate-wheel's job): bundle the dylibs its
// Mach-O files load from outside the wheel, point every reference at the
// copies, clean the run paths, retag from the binaries' minos, and write
// the wheel in one streaming pass.
//
// Planning unpacks only the Mach-O members into a scratch directory that
// mirrors the wheel (so @loader_path and @rpath resolve as they will once
// installed) and resolves each one's closure with dyld's rules
// (deps/dyld.hpp), per slice. Applying streams every edited member and
// every bundled library through its edit overlay (macho::plan_edit, which
// re-signs what it changes) into the zip writer; untouched members are
// copied with their compressed bytes and RECORD is regenerated from the
// writer's hashes.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "libpkg/archive/zip_reader.hpp"
#include "libpkg/base/overlay.hpp"
#include "libpkg/base/scratch_dir.hpp"
#include "libpkg/base/thread_pool_fwd.hpp"
#include "libpkg/bundle/repair.hpp"
#include "libpkg/wheel/macos_tag.hpp"
#include "libpkg/wheel/name.hpp"

namespace libpkg::bundle {

/// How a reference to a bundled library is written.
enum class MacosRefs {
  // delocate: `@loader_path/<relative path>/<name>`; bundled ids
  // `/DLC/<member path>`.
  loader_path,
  // `@rpath/<name>`, plus one `@loader_path/<relative dir>` LC_RPATH in the
  // file that needs it (never a duplicate); bundled ids `@rpath/<name>`.
  rpath,
};

/// Where plan_macos_repair looks for libraries, where it bundles them, and how
/// it references, tags and signs them.
struct MacosRepairOptions {
  // Searched first, by leaf name (DYLD_LIBRARY_PATH): where the libraries
  // to bundle live on the build machine.
  std::vector<std::filesystem::path> dyld_library_path;
  // What @executable_path stands for while resolving (none by default).
  std::optional<std::filesystem::path> executable_path;
  // The bundle directory: `lib_dir` (a member directory such as
  // "torch/.dylibs") when set, else "<package>/<lib_sdir>" where <package>
  // is the top-level directory named like the distribution, else the first
  // top-level directory, else "<distribution>.dylibs" at the root.
  std::string lib_sdir = ".dylibs";
  std::optional<std::string> lib_dir;
  // fnmatch globs on the install name, its leaf name and the resolved path
  // of libraries that other wheels provide: neither bundled nor followed.
  std::vector<std::string> exclude;
  MacosRefs refs = MacosRefs::loader_path;
  // Keep absolute and relative (not @-prefixed) LC_RPATHs; by default they
  // are dropped (build-tree paths), as delocate's --sanitize-rpaths.
  bool keep_rpaths = false;
  // Architectures every Mach-O file of the output must have ("arm64",
  // "x86_64"; "universal2" means both).
  std::vector<std::string> require_archs;
  // MACOSX_DEPLOYMENT_TARGET / --target: floor and ceiling of the tag.
  std::optional<wheel::MacosVersion> target;
  // Re-sign edited slices (macho::EditOptions::sign).
  bool sign = true;
  unsigned threads = 0;
  ThreadPool* pool = nullptr;            // the job's pool; null: own `threads`
  std::filesystem::path scratch_parent;  // empty: the system temp dir
  // Memoizes the grafts' content hashes (the SBOM's, archive/file_digest.hpp):
  // the writer's chunk cache (ApplyOptions::cache); null: hashed every time.
  std::shared_ptr<archive::ChunkCache> cache;
};

/// A library copied into the wheel.
struct MacosGraft {
  std::string name;                // leaf name, its file name in the wheel
  std::filesystem::path source;    // as dyld found it
  std::filesystem::path realpath;  // what is copied
  std::string member;              // path in the output wheel
  std::string id;                  // its new LC_ID_DYLIB
  std::vector<std::string> install_names;  // how it was referenced
  std::vector<std::string> needed_by;      // members or other grafts
  std::string sha256;  // hex SHA-256 of `realpath` as found (the SBOM's)
};

/// A reference to a library outside the wheel whose name a wheel member
/// already has (libomp in torch/lib): pointed at that member, not copied.
struct MacosRedirect {
  std::filesystem::path source;  // what the reference found outside
  std::string member;            // the wheel's own copy
  std::vector<std::string> needed_by;
};

/// The load-command edits of one output Mach-O file (id, install-name changes,
/// run paths), and why.
struct MacosFileEdit {
  std::string member;  // output member (a graft's member for grafts)
  bool graft = false;
  std::optional<std::string> id;
  std::vector<std::pair<std::string, std::string>> changes;  // old → new
  std::vector<std::string> rpaths_before;
  std::optional<std::vector<std::string>> rpaths_after;  // unset: unchanged
  std::vector<std::string> why;

  // Not in the JSON: the file the member is streamed from and its edit,
  // planned (preflight and signature included) before anything is written.
  std::filesystem::path file;
  std::shared_ptr<const Overlay> overlay;
};

/// The whole macOS repair: output name and tags, bundle directory, grafts,
/// redirects, edits and notes, plus the open wheel and scratch tree for apply.
struct MacosRepairPlan {
  std::filesystem::path wheel;
  wheel::WheelName name;
  std::string dist_info;
  std::string output_name;
  std::vector<std::string> platform_tags;
  std::map<std::string, wheel::MacosVersion> arch_versions;
  std::string lib_dir;
  MacosRefs refs = MacosRefs::loader_path;
  std::vector<std::string> archs;  // union over the output's Mach-O files
  std::vector<MacosGraft> grafts;
  std::vector<MacosRedirect> redirects;
  std::vector<MacosFileEdit> edits;
  std::vector<std::string> excluded;  // install names not followed
  std::vector<std::string> notes;
  bool sign = true;

  // The open wheel and the unpacked Mach-O members (kept for apply).
  std::shared_ptr<archive::ZipReader> zip;
  std::shared_ptr<ScratchDir> scratch;
  std::filesystem::path tree;
  // Every Mach-O member of the input.
  std::vector<std::string> binaries;

  /// Schema "libpkg-macos-repair-plan/1" (docs/repair.md).
  std::string to_json(int indent = 2) const;
  /// The plan as human-readable lines.
  std::string to_text() const;
};

/// Whether `wheel`'s file name carries a macOS platform tag: `pkgtool
/// repair` takes this path for it. Throws Errc::format for a file name that is
/// not a wheel's.
bool is_macos_wheel(const std::filesystem::path& wheel);

/// Plans the repair of `wheel` (see above) without writing it.
/// Throws libpkg::Error naming the wheel: Errc::not_found for a dependency
/// that is not found (naming the file that needs it and the install name)
/// or found only for other archs; Errc::format for two different libraries
/// with one leaf name, a file missing a required arch or above the
/// deployment target; Errc::usage for a wheel without Mach-O files.
MacosRepairPlan plan_macos_repair(const std::filesystem::path& wheel,
                                  const MacosRepairOptions& options = {});

/// Writes `out_dir`/plan.output_name (temporary file + rename; nothing is
/// left behind on failure), with the SBOM of the grafts
/// (<dist-info>/sboms/pkgtool.cdx.json, bundle/sbom.hpp) when
/// ApplyOptions::sbom and something was grafted. Throws
/// Errc::usage when the output would replace the input, Errc::format for a
/// wheel without its WHEEL file.
RepairResult apply_macos_repair(const MacosRepairPlan& plan,
                                const std::filesystem::path& out_dir,
                                const ApplyOptions& options = {});

}  // namespace libpkg::bundle
