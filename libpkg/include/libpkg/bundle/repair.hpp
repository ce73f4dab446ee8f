// SPDX-License-Identifier: BSD-3-Clause
// Repairing a wheel: plan (which libraries to graft, their new names, every
// file's NEEDED/SONAME/RPATH edits, the platform tags, and why), then apply
// the plan in one streaming pass.
//
// Applying never copies a library into a staging tree: a grafted library is
// streamed from its system location through its edit overlay into the
// compressor, an edited wheel member from its unpacked scratch copy, and
// every untouched member is copied with its compressed bytes. RECORD is
// regenerated from the hashes computed while writing.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "libpkg/archive/chunk_cache.hpp"
#include "libpkg/base/callbacks.hpp"
#include "libpkg/base/integers.hpp"
#include "libpkg/base/thread_pool_fwd.hpp"
#include "libpkg/bundle/analyze.hpp"
#include "libpkg/elf/editor.hpp"

namespace libpkg::bundle {

/// Libraries that are dlopen'd by name keep their file name (renaming them
/// would break the dlopen), as PyTorch's build scripts learned the hard way.
std::vector<std::string> default_keep_names();

/// The name of a grafted copy: `<stem>-<sha256[:8]>.<rest>`, split at the
/// first dot (libz.so.1.2.13 → libz-0123abcd.so.1.2.13); a name that already
/// carries this hash is returned unchanged.
std::string hashed_name(const std::string& soname, const std::string& sha256);

/// The $ORIGIN-relative search-path entry from the directory of `member` to
/// the wheel directory `dir`: ("foo/_ext.so", "foo.libs") →
/// "$ORIGIN/../foo.libs",
/// ("torch/lib/a.so", "torch/lib") → "$ORIGIN".
std::string origin_relative(const std::string& member, const std::string& dir);

/// What plan_repair aims at and how it names, places and links the grafts.
struct RepairOptions {
  // Target platform: "auto" (the most compatible tag reachable), a policy
  // name or alias with or without the arch ("manylinux2014",
  // "manylinux_2_28_x86_64"), or "linux" (bundle, keep linux_<arch>).
  std::string plat = "auto";
  // Graft directory: `lib_dir` (a member directory such as "torch/lib")
  // when set, else "<distribution><lib_sdir>" at the wheel root.
  std::string lib_sdir = ".libs";
  std::optional<std::string> lib_dir;
  // fnmatch globs on sonames that keep their name when grafted.
  std::vector<std::string> keep_names = default_keep_names();
  elf::RpathTag rpath_tag = elf::RpathTag::rpath;
  // Only the target tag (and its aliases), not also a more compatible tag
  // the wheel reaches.
  bool only_plat = false;
  // false: the output keeps the input's platform tags in its file name and
  // WHEEL (auditwheel's --no-update-tags); grafting still follows `plat`.
  bool update_tags = true;
  // Proceed when a dependency can't be found (it stays un-bundled).
  bool ignore_missing = false;
  // Run binutils' `strip` on every ELF file of the output before patching,
  // at auditwheel's --strip-level: debug `-g`, unneeded
  // `--strip-unneeded`, all `-s`. `strip` (auditwheel's deprecated --strip)
  // means `all`.
  bool strip = false;
  std::string strip_level = "none";  // none, debug, unneeded, all

  /// How libraries asked for with AnalyzeOptions::include are grafted.
  /// Without a matching rule an included library keeps its name (it is
  /// loaded with dlopen by name); a rule with `rename` lets keep_names
  /// decide, as for any graft: the per-CUDA tables list libraries that
  /// are linked normally (libcudart) next to ones loaded by name (cuDNN).
  struct IncludeRule {
    std::string match;   // glob on the soname or the source path
    std::string reason;  // shown in the plan ("CUDA 12.4 table"); "" = default
    bool rename = false;
  };
  std::vector<IncludeRule> include_rules;
  // Give every ELF member of the wheel a search path, not only the ones
  // that need the graft directory: its entries inside the wheel, then the
  // graft directory (when the output has one); every graft gets $ORIGIN.
  // build_common.sh set the path of every library of the package, so no
  // build-tree entry survives.
  bool rpath_all = false;
  // Entries put first in the search path of every ELF member of the wheel
  // (implies rpath_all): a relative entry is a directory of the install
  // root (site-packages, e.g. "nvidia/cublas/lib" of an nvidia-* wheel),
  // written relative to each member's $ORIGIN; an absolute one is used as
  // written.
  std::vector<std::string> rpath_first;
  // Threads for planning (hashing the grafts); 0: one per core. Callers
  // pass the user's -j so that -j 1 really runs on one thread.
  unsigned threads = 0;
  ThreadPool* pool = nullptr;  // the job's pool; null: own `threads`
  // Memoizes the grafts' content hashes (archive/file_digest.hpp): the
  // writer's chunk cache (ApplyOptions::cache); null: hashed every time.
  std::shared_ptr<archive::ChunkCache> cache;
};

/// One library copied into the wheel: where from, its new member and name, and
/// why.
struct Graft {
  std::string soname;            // as in DT_NEEDED
  std::filesystem::path source;  // where it was found
  std::string member;            // path in the output wheel
  std::string new_soname;        // its file name in the graft directory
  bool keep_name = false;
  std::string reason;  // "not allowed by manylinux_2_17", "--include"
  std::string sha256;  // hex digest of the source
  std::vector<std::string> needed_by;
};

/// The DT_NEEDED, SONAME and search-path edits of one output ELF file, and why.
struct FileEdit {
  std::string member;  // output member (a graft's member for grafts)
  bool graft = false;
  std::map<std::string, std::string> replace_needed;
  std::vector<std::string> remove_needed;
  std::optional<std::string> set_soname;
  std::optional<std::string> rpath;  // new value; "" = remove
  elf::RpathTag rpath_tag = elf::RpathTag::rpath;
  std::vector<std::string> why;
};

/// The whole repair: output name, target policy and tags, grafts, edits and
/// notes.
struct RepairPlan {
  std::filesystem::path wheel;
  std::string output_name;  // file name of the repaired wheel
  std::string policy;       // target policy name
  std::vector<std::string> platform_tags;
  std::string graft_dir;
  std::vector<Graft> grafts;
  std::vector<FileEdit> edits;
  std::vector<std::string> excluded;
  std::map<std::string, std::set<std::string>> missing;  // ignored ones
  std::vector<std::string> notes;
  bool strip = false;      // some stripping happens
  std::string strip_flag;  // strip's option: -g, --strip-unneeded, -s

  /// Schema "libpkg-repair-plan/1" (docs/repair.md).
  std::string to_json(int indent = 2) const;
  /// The plan as human-readable lines: target and tags, grafts, edits, notes.
  std::string to_text() const;
};

/// Throws Errc::not_found for a missing library (unless ignore_missing),
/// Errc::usage for an unknown or unreachable --plat (the message names the
/// file and the symbol or library that blocks it).
RepairPlan plan_repair(const WheelAnalysis& analysis,
                       const RepairOptions& options = {});

/// How apply_repair writes the output wheel.
struct ApplyOptions {
  int level = 6;
  unsigned threads = 0;
  ThreadPool* pool = nullptr;  // the job's pool; null: own `threads`
  // mtime of new members; unset: the newest member mtime of the input.
  std::optional<i64> timestamp;
  // Write the CycloneDX SBOM of the grafted libraries
  // (<dist-info>/sboms/pkgtool.cdx.json, libpkg/bundle/sbom.hpp) when
  // anything is grafted.
  bool sbom = true;
  // Rewrite a wheel that fails RECORD verification (wheel::RewriteOptions::
  // allow_unverified): unlisted or doubly listed members stay unlisted.
  bool allow_unverified = false;
  // Bytes written so far / in all, from the writing thread.
  ProgressFn progress;
  // Deflated chunks of the grafted libraries (archive/chunk_cache.hpp), so
  // the same libraries are compressed once across wheels and runs.
  std::shared_ptr<archive::ChunkCache> cache;
};

/// What apply_repair wrote: the path and how each member was written.
struct RepairResult {
  std::filesystem::path path;
  u64 members = 0;
  u64 raw_copies = 0;
  u64 compressed = 0;
  u64 grafted_bytes = 0;
  u64 size = 0;  // bytes of the wheel written (the writer's own count)
  // Edited members written by splicing the input's deflate data, and the
  // input's compressed bytes they re-use (wheel::RewriteResult).
  u64 spliced = 0;
  u64 spliced_reused_bytes = 0;
};

/// Writes `out_dir`/plan.output_name (temporary file + rename; nothing is
/// left behind on failure). Throws Errc::io when `strip` cannot run,
/// Errc::format for a wheel without its WHEEL file, and the writers' errors.
RepairResult apply_repair(const WheelAnalysis& analysis, const RepairPlan& plan,
                          const std::filesystem::path& out_dir,
                          const ApplyOptions& options = {});

}  // namespace libpkg::bundle
