// SPDX-License-Identifier: BSD-3-Clause
// Symbol-version tags such as GLIBC_2.17, GLIBCXX_3.4.29, CXXABI_1.3.13 or
// GCC_4.2.0: parsing, ordering, and the highest one an ELF file requires per
// prefix. Platform tags (manylinux_2_17) are decided by these maxima.
#pragma once

#include <compare>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "libpkg/elf/view.hpp"

namespace libpkg::abi {

/// A symbol version tag split into its prefix and numeric version; compares
/// numerically.
struct VersionTag {
  std::string prefix;            // "GLIBC", "GLIBCXX", "CXXABI_TM"
  std::vector<unsigned> number;  // {2, 17}

  /// The numeric part, "2.17".
  std::string version() const;  // "2.17"
  /// The whole tag, "GLIBC_2.17".
  std::string str() const;  // "GLIBC_2.17"
  // Ordered by prefix, then numerically component by component (2.2.5 < 2.17).
  auto operator<=>(const VersionTag&) const = default;
};

/// "GLIBC_2.2.5" -> {GLIBC, 2.2.5}; nullopt for tags without a numeric
/// version ("GLIBC_PRIVATE") or names that aren't version tags.
std::optional<VersionTag> parse_version_tag(std::string_view name);

/// The highest version of one prefix a file needs, and the library it is needed
/// from.
struct RequiredVersion {
  VersionTag tag;
  std::string file;  // library the highest version is needed from
};

/// The highest version needed per prefix, from .gnu.version_r.
std::map<std::string, RequiredVersion> max_required_versions(
    const elf::ElfFile& elf);

}  // namespace libpkg::abi
