// SPDX-License-Identifier: BSD-3-Clause
// Turns an archive's member names into a checked extraction plan (private to
// the archive layer): check_member_names() is this plan thrown away, and
// extract() creates exactly what the plan lists, so nothing the name rules
// refused can be reached by the writer.
#pragma once

#include <string>
#include <vector>

#include "libpkg/archive/zip_reader.hpp"

namespace libpkg::archive::names {

// Longest symlink target an extractor accepts and a writer emits (PATH_MAX
// including the NUL).
inline constexpr u64 kMaxLinkTarget = 4095;

enum class MemberKind { file, directory, symlink };

struct PlannedMember {
  const ZipEntry* entry = nullptr;
  MemberKind kind = MemberKind::file;
  // Normalised relative path segments ("a/./b//" -> {"a", "b"}); never
  // empty, never "." or "..".
  std::vector<std::string> segments;
  std::string link_target;  // symlinks only, as stored
};

// Applies every name rule of extract.hpp; throws Errc::format naming the
// archive and the member. Directory entries that name the target itself
// ("./") are dropped. Symlink targets are read from the archive.
std::vector<PlannedMember> plan_members(const ZipReader& zip,
                                        bool allow_symlinks);

// "a/b/c" for messages and lookups.
std::string join_path(const std::vector<std::string>& segments,
                      std::size_t count);

}  // namespace libpkg::archive::names
