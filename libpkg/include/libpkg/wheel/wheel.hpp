// SPDX-License-Identifier: BSD-3-Clause
// Wheel operations: pack a tree, unpack, verify, retag, and the general
// member-level rewrite they are built on.
//
// All outputs are written through archive::ZipWriter (temporary file +
// atomic rename); inputs are never modified. Members that don't change are
// copied with their compressed bytes (no recompression), and RECORD rows are
// produced from the SHA-256 the writer computes while compressing, so no
// file is read twice.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "libpkg/archive/chunk_cache.hpp"
#include "libpkg/archive/extract.hpp"
#include "libpkg/archive/source.hpp"
#include "libpkg/archive/zip_reader.hpp"
#include "libpkg/base/callbacks.hpp"
#include "libpkg/base/integers.hpp"
#include "libpkg/base/thread_pool_fwd.hpp"
#include "libpkg/wheel/name.hpp"

namespace libpkg::wheel {

// ---- pack -----------------------------------------------------------------

/// How `pack` compresses and stamps members: deflate level, threads, timestamp,
/// build tag override, a previous build to reuse, progress and chunk cache.
struct PackOptions {
  int level = 6;         // deflate level 0..9 (libdeflate 10..12 accepted)
  unsigned threads = 0;  // 0: one per core
  ThreadPool* pool = nullptr;  // the job's pool; null: own `threads`
  // Timestamp for every member (e.g. SOURCE_DATE_EPOCH, read by the
  // frontend); unset: each file's mtime.
  std::optional<i64> timestamp;
  // Replaces the WHEEL file's Build field ("" removes it), as `wheel pack
  // --build-number` does; the source tree is not modified.
  std::optional<std::string> build_tag;
  // A previous build of the same wheel: members whose content is identical
  // (same size, CRC-32 and RECORD SHA-256) are copied from it raw.
  std::optional<std::filesystem::path> reuse;
  // Content bytes written so far / in all, on the calling thread
  // (ZipWriterOptions::progress).
  ProgressFn progress;
  // Deflated chunks of large members (ZipWriterOptions::cache); null: none.
  std::shared_ptr<archive::ChunkCache> cache;
};

/// What `pack` wrote: the wheel's path, its member count, raw reuses and
/// uncompressed bytes.
struct PackResult {
  std::filesystem::path path;
  u64 members = 0;  // including RECORD
  u64 reused = 0;   // raw copies from PackOptions::reuse
  u64 bytes = 0;    // uncompressed content
};

/// Packs `dir` (an unpacked wheel: exactly one top-level *.dist-info with a
/// WHEEL file) into `out_dir`/<name>-<version>[-<build>]-<tags>.whl, where
/// name and version come from the .dist-info directory name and the tags from
/// WHEEL's Tag lines, like `wheel pack`. Member order: files before
/// subdirectories, each sorted by name (os.walk with sorted names, as `wheel
/// pack`), then everything under the .dist-info directory sorted, RECORD
/// last. Modes are normalised to 0755 (any execute bit) or 0644. Symlinks to
/// files are followed (the content is stored, as `wheel pack` does); a
/// symlink to a directory is an Errc::unsupported error rather than silently
/// dropped. An existing RECORD in the tree is ignored and regenerated.
/// Throws Errc::usage when `dir` is not a directory or the build tag is
/// invalid, Errc::format for a missing or malformed WHEEL or no Tag lines or
/// not exactly one .dist-info, Errc::io when the tree cannot be listed.
PackResult pack(const std::filesystem::path& dir,
                const std::filesystem::path& out_dir,
                const PackOptions& options = {});

// ---- unpack ---------------------------------------------------------------

/// How `unpack` checks and extracts: RECORD verification, threads and the
/// expansion limit.
struct UnpackOptions {
  bool verify = true;  // check every member against RECORD first
  unsigned threads = 0;
  ThreadPool* pool = nullptr;  // the job's pool; null: own `threads`
  u64 max_expansion = 200;     // archive::ExtractOptions::max_expansion
};

/// Extracts `wheel` into `dest`/<name>-<version> (names from the file name,
/// like `wheel unpack`) through archive::extract (hostile names refused before
/// anything is written). With `verify`, a wheel whose RECORD check finds
/// anything is refused (Errc::format naming the first finding).
/// Throws Errc::format for a file name that is not a wheel's and whatever
/// archive::ZipReader::open, archive::check_member_names and archive::extract
/// throw.
std::filesystem::path unpack(const std::filesystem::path& wheel,
                             const std::filesystem::path& dest,
                             const UnpackOptions& options = {});

// ---- verify ---------------------------------------------------------------

/// What verify() can find wrong with a wheel; each is a Finding, not an
/// exception.
enum class FindingKind {
  bad_file_name,       // the file name does not parse
  dist_info_count,     // not exactly one top-level *.dist-info directory
  name_mismatch,       // file name vs .dist-info directory
  version_mismatch,    // file name vs .dist-info directory
  wheel_missing,       // no WHEEL file
  wheel_malformed,     // WHEEL does not parse
  tag_mismatch,        // tags in the file name vs WHEEL's Tag lines
  build_mismatch,      // build tag in the file name vs WHEEL's Build
  record_missing,      // no RECORD file
  record_malformed,    // RECORD does not parse
  bad_hash_algorithm,  // md5/sha1 (weak) or an algorithm we can't check
  bad_hash,            // missing or malformed digest
  hash_mismatch,
  size_mismatch,
  missing_member,   // listed in RECORD, absent from the archive
  unlisted_member,  // in the archive, not in RECORD
  corrupt_member,   // the member does not decompress (CRC, truncation)
  duplicate_row,    // RECORD lists a path twice (installers disagree which
                    // row counts: pip/wheel use the last, we used the first)
};

/// The kind's kebab-case name ("bad-file-name", "hash-mismatch", ...); never
/// throws.
const char* finding_kind_name(FindingKind kind);

/// One problem verify() found: its kind, the member concerned and the expected
/// and actual values.
struct Finding {
  FindingKind kind;
  std::string member;  // the member (or file name) concerned
  std::string expected;
  std::string actual;
  /// "KIND: MEMBER: expected E, found A" (or a message for kinds without
  /// expected/actual values).
  /// Never throws.
  std::string message() const;
};

/// Threads (or the job's pool) verify() hashes members on, and where the
/// members' digests come from.
struct VerifyOptions {
  unsigned threads = 0;
  ThreadPool* pool = nullptr;  // the job's pool; null: own `threads`
  // Digests archive::extract() computed while writing the members
  // (ExtractReport::digests, indexed like zip.entries()): a member with one
  // (or with its inflate error) is not decompressed again. Empty, or a
  // member without one: it is inflated and hashed here.
  std::span<const archive::MemberDigest> digests;
};

/// What verify() checked: the wheel, member count, bytes hashed and every
/// finding.
struct VerifyReport {
  std::filesystem::path wheel;
  u64 members = 0;  // file members in the archive
  u64 hashed_bytes = 0;
  std::vector<Finding> findings;
  /// True when verify() found nothing.
  bool ok() const { return findings.empty(); }
};

/// Checks every member against RECORD (decompressing on a thread pool), and
/// the file name against the .dist-info directory and WHEEL. Throws only when
/// the file can't be read as a zip at all.
VerifyReport verify(const std::filesystem::path& wheel,
                    const VerifyOptions& options = {});
VerifyReport verify(const archive::ZipReader& zip,
                    const VerifyOptions& options = {});

/// Throws Errc::format naming the wheel and its first finding (then `hint`:
/// how to proceed anyway) when verify() finds anything: unpack and every
/// rewrite of a wheel go through this.
void require_verified(const archive::ZipReader& zip, unsigned threads,
                      const std::string& hint, ThreadPool* pool = nullptr);
void require_verified(const archive::ZipReader& zip,
                      const VerifyOptions& options, const std::string& hint);

// ---- rewrite --------------------------------------------------------------

/// Member-level edits, keyed by the names in the input wheel. RECORD is
/// always regenerated (and RECORD signatures dropped, since they'd no longer
/// match); do not edit it.
struct WheelEdits {
  /// A member to add: its name, content and Unix mode.
  struct NewMember {
    std::string name;
    archive::SourcePtr content;
    unsigned mode = 0644;
  };
  // New content for an existing member (it keeps its mode and position).
  std::map<std::string, archive::SourcePtr> replace;
  std::vector<NewMember> add;
  std::set<std::string> remove;
  std::map<std::string, std::string> rename;  // old name → new name
  /// Members copied with their compressed bytes from another archive (wheel
  /// fuse takes them from the second wheel): a name the input has is
  /// replaced in its position, any other name is added like `add`.
  struct RawMember {
    const archive::ZipReader* zip = nullptr;  // must outlive rewrite()
    const archive::ZipEntry* entry = nullptr;
    // The SHA-256 of its content when known (a verified RECORD row);
    // unset leaves the member out of the output RECORD, as rewrite does for
    // unlisted raw copies.
    std::optional<std::array<u8, 32>> sha256;
  };
  std::map<std::string, RawMember> raw_from;
};

/// How `rewrite` compresses, stamps and reports new members, and whether it
/// accepts an unverified input.
struct RewriteOptions {
  int level = 6;
  unsigned threads = 0;
  ThreadPool* pool = nullptr;  // the job's pool; null: own `threads`
  // mtime of new and replaced members; unset: the newest member mtime of the
  // input (deterministic). Raw copies keep their own.
  std::optional<i64> timestamp;
  // Bytes written so far / in all (ZipWriterOptions::progress).
  ProgressFn progress;
  // Deflated chunks of large members (ZipWriterOptions::cache); null: none.
  std::shared_ptr<archive::ChunkCache> cache;
  // Rewrite a wheel that fails verify() (refused by default: a fresh RECORD
  // over unverified members would launder them). Even then the output
  // RECORD lists only members this rewrite produced or whose input RECORD
  // row it copies: an unlisted input member stays unlisted, a stale hash
  // stays stale, so the output fails verification the way the input did.
  bool allow_unverified = false;
  // Digests of input members the caller already extracted with
  // archive::ExtractOptions::digests (VerifyOptions::digests): the check of
  // the input's RECORD takes them instead of inflating those members again.
  std::span<const archive::MemberDigest> digests;
};

/// What `rewrite` wrote: the output path and how many members were copied raw
/// or compressed.
struct RewriteResult {
  std::filesystem::path path;
  u64 members = 0;     // including RECORD
  u64 raw_copies = 0;  // members copied without recompression
  u64 compressed = 0;  // members compressed from new content
  u64 size = 0;        // bytes of the wheel written (the writer's count)
  // Of `compressed`: edited members of the input written by splicing its
  // deflate data, and how many compressed bytes of the input they re-use.
  u64 spliced = 0;
  u64 spliced_reused_bytes = 0;
};

/// Writes `out` = `input` with `edits` applied. Member order: the input's
/// order (renamed in place), added members (sorted) after the last member
/// outside the .dist-info directory and at the end of the .dist-info
/// members, RECORD last. The input is verified first (verify(), every member
/// hashed) and refused with Errc::format naming it and its first finding
/// unless options.allow_unverified; RECORD rows of raw copies then come from
/// the input RECORD. Throws Errc::usage for edits naming absent members,
/// duplicate output names or not exactly one output .dist-info.
/// Errc::format also when a raw copy has a name the writer refuses, Errc::io
/// when the output cannot be written.
RewriteResult rewrite(const archive::ZipReader& input,
                      const std::filesystem::path& out, const WheelEdits& edits,
                      const RewriteOptions& options = {});

// ---- retag ----------------------------------------------------------------

/// Which tags, build tag and version a retag changes, and where the output
/// goes.
struct RetagOptions {
  // Each: "a.b" replaces the set, "+a.b" adds, "-a.b" removes (wheel tags).
  std::optional<std::string> python_tags;
  std::optional<std::string> abi_tags;
  std::optional<std::string> platform_tags;
  std::optional<std::string> build;  // "" removes the build tag
  // "1.0+cu124" → "1.0" in the file name, the .dist-info (and .data)
  // directory names and METADATA's Version.
  bool strip_local_version = false;
  bool remove_original = false;  // delete the input after success
  // Allow the output to replace the input (same path).
  bool in_place = false;
  std::filesystem::path out_dir;  // empty: the input's directory
  unsigned threads = 0;
  ThreadPool* pool = nullptr;     // the job's pool; null: own `threads`
  bool allow_unverified = false;  // RewriteOptions::allow_unverified
};

/// Computes the retagged name (no I/O beyond parsing the name).
/// Throws Errc::usage for an edit that leaves a tag set empty or an invalid
/// build tag, Errc::format for a malformed tag.
WheelName retagged_name(const WheelName& name, const RetagOptions& options);

/// Writes the retagged wheel and returns what rewrite() wrote (its path in
/// `path`). WHEEL's Tag lines (and Build) are rewritten; every other member is
/// copied raw. Throws Errc::usage when the output would be the input and
/// `in_place` is unset, Errc::format when the wheel has no WHEEL, and whatever
/// retagged_name() and rewrite() throw.
RewriteResult retag(const std::filesystem::path& wheel,
                    const RetagOptions& options);

// ---- helpers --------------------------------------------------------------

/// Top-level "*.dist-info" directory names among the members, sorted.
/// Never throws.
std::vector<std::string> dist_info_dirs(const archive::ZipReader& zip);
/// The .dist-info directory of a wheel: the one matching the file name's
/// name-version (compared with canonicalised names), or the only one.
/// Throws Errc::format when there is none or it is ambiguous.
std::string find_dist_info(const archive::ZipReader& zip,
                           const std::optional<WheelName>& name);

}  // namespace libpkg::wheel
