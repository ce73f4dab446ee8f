// SPDX-License-Identifier: BSD-3-Clause
// What `pkgtool inspect` reports about one file: for ELF its identity,
// dynamic linking facts, the highest required symbol versions and symbol
// counts; for Mach-O the reader's facts per slice.
//
// The JSON schema is shared by `pkgtool inspect --json` and Python's
// `libpkg.inspect`, so it lives here, not in a frontend. ELF:
//   {"file", "class", "endian", "machine", "osabi", "type",
//    "interpreter": str|null, "soname": str|null, "needed": [...],
//    "rpath": str|null, "runpath": str|null, "flags": [...],
//    "flags_1": [...], "build_id": str|null, "isa_level": str|null,
//    "max_versions": {PREFIX: {"version", "tag", "from"}},
//    "version_needs": [{"file", "versions": [...]}], "version_defs": [...],
//    "symbols": {"defined": N, "undefined": N}}
// Mach-O:
//   {"file", "format": "macho", "fat": bool, "slices": [{"arch", "offset",
//    "size", "bits", "type", "parsed", and when parsed: "platform", "minos",
//    "sdk", "version_command", "id", "dylibs": [{"name", "kind", "ordinal",
//    "current_version", "compatibility_version"}], "rpaths", "uuid",
//    "sizeofcmds", "free_padding", "fixups", "code_signature": {"present",
//    "dataoff", "datasize"}}]}
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "libpkg/abi/versions.hpp"
#include "libpkg/elf/view.hpp"

namespace libpkg::abi {

/// The `pkgtool inspect` facts of one ELF file (summarize() makes it).
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

/// The summary of an open ELF file. Throws libpkg::Error (Errc::format)
/// when a table it reads is malformed.
ElfSummary summarize(const elf::ElfFile& elf);

/// DT_FLAGS bits by name ("ORIGIN", "BIND_NOW", ...; unknown bits as hex).
std::vector<std::string> dt_flags_names(unsigned long long flags);
/// DT_FLAGS_1 bits by name ("NOW", "PIE", ...; unknown bits as hex).
std::vector<std::string> dt_flags_1_names(unsigned long long flags);

/// The JSON object of an ELF summary (schema above), indented by `indent`
/// spaces (-1: one line).
std::string to_json(const ElfSummary& summary, int indent = 2);

/// True when `path` is a regular file that starts with a Mach-O or fat
/// magic. Throws nothing: an unreadable file is "not Mach-O" here, and the
/// ELF reader then names what is wrong with it.
bool is_macho_file(const std::filesystem::path& path);

/// The JSON object of one file, ELF or Mach-O (schema above), as
/// `pkgtool inspect --json` prints it; oddities the ELF reader works around
/// go to `warning`. Throws libpkg::Error for a missing, unreadable or
/// malformed file.
std::string inspect_json(const std::filesystem::path& file,
                         const elf::ElfWarningFn& warning = {}, int indent = 2);

}  // namespace libpkg::abi
