// SPDX-License-Identifier: BSD-3-Clause
// What `pkgtool inspect` reports about one ELF file: identity, dynamic
// linking facts, the highest required symbol versions and symbol counts.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "libpkg/abi/versions.hpp"
#include "libpkg/elf/view.hpp"

namespace libpkg::abi {

struct ElfSummary {
  std::string file;
  std::string elf_class;  // "ELF32" | "ELF64"
  std::string endian;     // "little" | "big"
  std::string machine;    // "x86_64", "aarch64", ...
  std::string osabi;      // "SYSV", "GNU", ...
  std::string type;       // "EXEC" | "DYN" | "REL" | ...
  std::optional<std::string> interpreter;
  std::optional<std::string> soname;
  std::vector<std::string> needed;
  std::optional<std::string> rpath;
  std::optional<std::string> runpath;
  std::vector<std::string> flags;    // DT_FLAGS names (ORIGIN, BIND_NOW, ...)
  std::vector<std::string> flags_1;  // DT_FLAGS_1 names (NOW, PIE, ...)
  std::optional<std::string> build_id;
  std::optional<std::string> isa_level;  // x86-64-v2 ... from the property note
  // Highest version required per prefix (GLIBC, GLIBCXX, CXXABI, GCC, ...).
  std::map<std::string, RequiredVersion> max_versions;
  std::vector<elf::VersionNeed> version_needs;
  std::vector<std::string> version_defs;
  unsigned long long defined_symbols = 0;
  unsigned long long undefined_symbols = 0;
};

ElfSummary summarize(const elf::ElfFile& elf);

std::vector<std::string> dt_flags_names(unsigned long long flags);
std::vector<std::string> dt_flags_1_names(unsigned long long flags);

}  // namespace libpkg::abi
