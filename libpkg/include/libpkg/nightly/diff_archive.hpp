// SPDX-License-Identifier: BSD-3-Clause
// `pkgtool diff`: what changed between two packages (wheels, conda packages
// in either format, zips): members added, removed and changed (size,
// SHA-256), size deltas, and for changed ELF members the NEEDED entries and
// symbol-version requirements (.gnu.version_r) gained or lost, which is
// what decides whether a nightly still loads where yesterday's did.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "libpkg/base/integers.hpp"

namespace libpkg::nightly {

/// What a diff compares of an ELF member: its DT_NEEDED entries and the symbol
/// versions it needs.
struct ElfFacts {
  std::vector<std::string> needed;
  // "libc.so.6 GLIBC_2.34": the library and the version needed from it.
  std::vector<std::string> versions;
};

/// One file or symlink of an archive: its name, size, SHA-256 and ELF facts.
struct ArchiveMember {
  std::string name;
  bool symlink = false;  // conda members; size/hash are of the target text
  u64 size = 0;
  std::string sha256;
  std::optional<ElfFacts> elf;  // ELF members read whole (see kElfFactsLimit)
};

// ELF members bigger than this are hashed but their NEEDED/versions are not
// read: they would be held in memory whole.
inline constexpr u64 kElfFactsLimit = u64{1} << 30;

/// Every member of one archive, keyed by name, with the archive's format and
/// size.
struct ArchiveListing {
  std::filesystem::path path;
  std::string format;  // "zip", "conda", "tar.bz2"
  u64 file_size = 0;
  std::map<std::string, ArchiveMember> members;  // files and symlinks
  /// The sum of the members' sizes.
  u64 unpacked_size() const;
};

/// Reads every member of `path` (chosen by extension: .conda, .tar.bz2, else
/// a zip such as a wheel). Throws Errc::usage for another kind of file and
/// Errc::format for a malformed archive, naming the file; Errc::io when its
/// size cannot be read.
ArchiveListing list_archive(const std::filesystem::path& path);

/// One member present in both archives with different contents.
struct MemberChange {
  std::string name;
  u64 old_size = 0, new_size = 0;
  std::string old_sha256, new_sha256;
  // Only for members that are ELF on both sides.
  std::vector<std::string> needed_added, needed_removed;
  std::vector<std::string> versions_added, versions_removed;
};

/// The members added, removed and changed from one archive to another.
struct ArchiveDiff {
  ArchiveListing old_listing, new_listing;
  std::vector<ArchiveMember> added, removed;
  std::vector<MemberChange> changed;
  u64 unchanged = 0;

  /// True when no member was added, removed or changed.
  bool identical() const {
    return added.empty() && removed.empty() && changed.empty();
  }
  /// Human-readable, one line per member difference.
  std::string to_text() const;
  /// `libpkg-diff/1`.
  std::string to_json(int indent = 2) const;
};

/// Lists both archives and compares their members by SHA-256 (and ELF facts
/// when both are ELF); throws list_archive's errors.
ArchiveDiff diff_archives(const std::filesystem::path& old_path,
                          const std::filesystem::path& new_path);

}  // namespace libpkg::nightly
