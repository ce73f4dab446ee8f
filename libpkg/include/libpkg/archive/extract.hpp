// SPDX-License-Identifier: BSD-3-Clause
// Safe extraction of an untrusted zip into a directory.
//
// Every name is checked before anything is written: no absolute paths, no
// `..` segments, no NUL or backslash, no two names that are the same path
// after segment normalisation, Unicode NFKC case folding (macOS and Windows
// file systems would merge them), no member below a symlink member, and
// every symlink must resolve (lexically, from its own directory) inside the
// target. Files are created with O_NOFOLLOW|O_EXCL under directory fds, so
// even a pre-existing symlink inside the target can't redirect a write.
//
// Names that are not valid UTF-8 are accepted only without the UTF-8 flag
// (general purpose bit 11), as legacy bytes folded by ASCII case only.
// Extraction writes into a temporary sibling of the target and renames it
// into place at the end: after an error nothing has appeared at the target
// (it is as before) and the temporary directory is removed.
#pragma once

#include <array>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "libpkg/archive/zip_reader.hpp"
#include "libpkg/base/callbacks.hpp"
#include "libpkg/base/thread_pool_fwd.hpp"

namespace libpkg::archive {

/// How `extract` writes members: modes, symlinks, overwrite, threads, progress,
/// the expansion bound and an optional member filter.
struct ExtractOptions {
  // Apply the unix permission bits stored in the archive (masked to 0777 and
  // never setuid/setgid/sticky; directories also never world-writable, so a
  // 01777 directory becomes 0775 rather than an unprotected 0777);
  // otherwise 0644 / 0755 for executables.
  bool keep_modes = true;
  bool allow_symlinks = true;
  // The target may already exist only if empty (unless overwrite is set).
  // With overwrite, a non-empty target is replaced as a whole (atomically
  // where the file system supports RENAME_EXCHANGE), not merged.
  bool overwrite = false;
  unsigned threads = 0;        // 0: one per core
  ThreadPool* pool = nullptr;  // the job's pool; null: own `threads`
  ProgressFn progress;
  // What extraction may write, relative to the archive's own size: the
  // members' declared sizes may total at most max_expansion times the file
  // size, or kExpansionFloor, whichever is larger; 0 removes the bound.
  // The reader's per-member ratio cap (ZipLimits::max_ratio, 1100) can never
  // trigger on deflate, whose best ratio is about 1032:1, so without this a
  // 1 MiB wheel of zeros unpacks to a GiB. Real packages compress 2-10x.
  u64 max_expansion = 200;
  // When set, only the file members it accepts are written (with the
  // directories above them); directory and symlink members are skipped.
  // Every name is still checked. For callers that need some members on disk
  // (repair's ELF files) through the same hardened writes.
  std::function<bool(const ZipEntry&)> select;
  // Hash (SHA-256) every file member from the very bytes written, into
  // ExtractReport::digests, so a caller that checks the contents (a wheel's
  // RECORD) need not inflate them a second time. A member that fails to
  // inflate (corrupt data, wrong CRC or length) then no longer stops the
  // others: its error is recorded in its digest, and extract() throws the
  // first such error (in archive order) after `before_install`, so a
  // corrupt tree is still never installed.
  bool digests = false;
};

/// One member's content as extract() wrote it (with ExtractOptions::digests).
struct MemberDigest {
  bool present = false;  // the member was written (a file member)
  std::array<u8, 32> sha256{};
  u64 size = 0;       // bytes written
  std::string error;  // set: the member failed to inflate (why)
};

// Archives may always expand to this much (small fixtures, tiny wheels).
inline constexpr u64 kExpansionFloor = u64{256} << 20;

/// What `extract` wrote: counts of files, directories and symlinks and the
/// content bytes.
struct ExtractReport {
  u64 files = 0;
  u64 directories = 0;
  u64 symlinks = 0;
  u64 bytes = 0;
  // With ExtractOptions::digests: one per zip.entries() element, same order
  // (directories, symlinks and members `select` skipped are not present).
  std::vector<MemberDigest> digests;
};

/// Called by extract() when every member has been written into the staging
/// directory (`staged`) and before it is renamed onto the target: throwing
/// from it leaves the target untouched and removes the staging directory.
using BeforeInstallFn = std::function<void(
    const ExtractReport& report, const std::filesystem::path& staged)>;

/// Throws Errc::format naming the archive and the offending member when a
/// name is hostile (see above); nothing has been written at that point.
void check_member_names(const ZipReader& zip, bool allow_symlinks = true);

/// Extracts `zip` into `dir` through a staging directory that replaces `dir`
/// only when every member was written. Throws Errc::format for a hostile name,
/// members past the expansion bound or a corrupt member, Errc::usage for a
/// target StagedTarget refuses, Errc::io for a failed write; `dir` is then
/// untouched.
ExtractReport extract(const ZipReader& zip, const std::filesystem::path& dir,
                      const ExtractOptions& options = {},
                      const BeforeInstallFn& before_install = {});

}  // namespace libpkg::archive
