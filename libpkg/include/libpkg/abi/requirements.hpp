// SPDX-License-Identifier: BSD-3-Clause
// Versioned-symbol requirements of an ELF file with the symbols that need
// them, so a report can say "GLIBCXX_3.4.29 from libstdc++.so.6, needed by
// std::__cxx11::basic_string<...>::_M_replace_cold(...)".
#pragma once

#include <map>
#include <string>
#include <vector>

#include "libpkg/abi/versions.hpp"
#include "libpkg/elf/view.hpp"

namespace libpkg::abi {

/// One (library, version) pair from .gnu.version_r with the undefined symbols
/// bound to it.
struct VersionRequirement {
  std::string library;  // vn_file, e.g. "libstdc++.so.6"
  std::string version;  // "GLIBCXX_3.4.29" (also GLIBC_PRIVATE etc.)
  // Undefined symbols bound to this version, demangled, sorted, at most
  // `max_examples` (see version_requirements); `symbol_count` counts all.
  std::vector<std::string> symbols;
  std::size_t symbol_count = 0;
};

/// Every (library, version) pair in .gnu.version_r, in file order, with the
/// undefined .dynsym symbols that use it. Symbols are visited once.
std::vector<VersionRequirement> version_requirements(
    const elf::ElfFile& elf, std::size_t max_examples = 3);

/// A required version with the binary that needs it, the library that defines
/// it and example symbols (for policy reports).
struct RequiredVersionExample {
  VersionTag tag;
  std::string file;     // the binary that needs it (caller-chosen name)
  std::string library;  // where the version is defined
  std::vector<std::string> symbols;
};

}  // namespace libpkg::abi
