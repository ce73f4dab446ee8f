// SPDX-License-Identifier: BSD-3-Clause
// A lazy, zero-copy, bounds-checked reader of ELF files.
//
// Opening reads only the ELF header. Every accessor reads just the tables it
// needs, when called: asking for the RUNPATH of a 541 MB CUDA library touches
// the header, the program headers, the dynamic section and one string, like
// `readelf -d`. Works on ELF32/ELF64 in either byte order, on files larger
// than 4 GiB and on files whose section headers were stripped (the dynamic
// section is found through PT_DYNAMIC and addresses through PT_LOAD).
//
// Returned string_views point into the file's bytes and live as long as the
// ElfFile (or the memory it views).
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "libpkg/base/bytes.hpp"
#include "libpkg/base/mapped_file.hpp"

namespace libpkg::elf {

struct ProgramHeader {
  u32 index = 0;
  u32 type = 0;
  u32 flags = 0;
  u64 offset = 0, vaddr = 0, paddr = 0, filesz = 0, memsz = 0, align = 0;
};

struct SectionHeader {
  u32 index = 0;
  std::string_view name;
  u32 type = 0;
  u64 flags = 0, addr = 0, offset = 0, size = 0;
  u32 link = 0, info = 0;
  u64 addralign = 0, entsize = 0;
};

struct DynamicEntry {
  u32 index = 0;
  i64 tag = 0;
  u64 value = 0;
};

struct Symbol {
  u32 index = 0;
  std::string_view name;
  u64 value = 0, size = 0;
  u8 bind = 0, type = 0, visibility = 0;
  u16 shndx = 0;
  // Symbol version from .gnu.version: the version name ("GLIBC_2.34"), empty
  // for unversioned/local/global symbols; `version_file` is the library the
  // version is needed from (undefined symbols), empty for defined ones.
  std::string_view version;
  std::string_view version_file;
  bool version_hidden = false;  // '@' rather than '@@' for defined symbols

  bool is_defined() const { return shndx != 0; }
};

struct VersionAux {
  std::string_view name;
  u32 hash = 0;
  u16 flags = 0;
  u16 other = 0;  // the version index used in .gnu.version
};

struct VersionNeed {
  std::string_view file;
  std::vector<VersionAux> versions;
};

struct VersionDef {
  u16 index = 0;
  u16 flags = 0;
  std::vector<std::string_view>
      names;  // names[0] = this version; rest = parents
};

/// Recoverable oddities the reader works around, e.g. a DT_HASH that no
/// loadable segment maps (the symbol count then comes from DT_GNU_HASH, or
/// no symbols are read) or version tables that disagree with each other.
/// Called with the message (without the file name: ElfFile::name()); each
/// distinct message once per ElfFile. May be called from any thread that
/// uses the ElfFile.
using ElfWarningFn = std::function<void(std::string_view message)>;

struct ElfReadOptions {
  ElfWarningFn warning;  // default: none (oddities are worked around quietly)
};

class ElfFile {
 public:
  /// Maps and opens `path`. Throws libpkg::Error (Errc::format) naming the file
  /// and offset when it is not a well-formed ELF header.
  static ElfFile open(const std::filesystem::path& path,
                      ElfReadOptions options = {});
  /// Views bytes owned by the caller (an archive member, a test buffer).
  explicit ElfFile(ByteView bytes, ElfReadOptions options = {});
  /// Views bytes kept alive by `owner` (an archive member inflated on demand,
  /// archive/member_view.hpp): the ElfFile and its copies hold it.
  ElfFile(ByteView bytes, std::shared_ptr<const void> owner,
          ElfReadOptions options = {});
  /// True when the bytes start with the ELF magic.
  static bool has_elf_magic(std::span<const u8> bytes);

  const std::string& name() const { return bytes_.name(); }
  const ByteView& bytes() const { return bytes_; }
  /// The underlying map, when the ElfFile owns one (open()).
  const MappedFile* mapped_file() const { return file_.get(); }

  bool is_64() const { return is_64_; }
  bool is_little_endian() const { return is_le_; }
  u8 osabi() const { return osabi_; }
  u16 type() const { return type_; }
  u16 machine() const { return machine_; }
  u64 entry() const;
  std::string machine_name() const;

  std::vector<ProgramHeader> program_headers() const;
  /// Empty when the file has no section header table.
  std::vector<SectionHeader> sections() const;
  std::optional<SectionHeader> section(std::string_view name) const;

  std::optional<std::string_view> interpreter() const;
  bool has_dynamic() const;
  /// The dynamic entries up to (not including) the first DT_NULL.
  std::vector<DynamicEntry> dynamic() const;
  std::vector<std::string_view> needed() const;
  std::optional<std::string_view> soname() const;
  std::optional<std::string_view> rpath() const;
  std::optional<std::string_view> runpath() const;
  u64 dt_flags() const;
  u64 dt_flags_1() const;

  /// Number of entries in .dynsym (including the null symbol 0).
  u64 dynamic_symbol_count() const;
  /// Visits every .dynsym entry (from index 1) with its version resolved,
  /// without materialising a vector: big libraries have 10^5 symbols.
  void for_each_dynamic_symbol(
      const std::function<void(const Symbol&)>& fn) const;
  std::vector<Symbol> dynamic_symbols() const;
  std::vector<VersionNeed> version_needs() const;
  std::vector<VersionDef> version_defs() const;

  /// A note with this owner name and type (notes of the PT_NOTE segments, or
  /// of the SHT_NOTE sections when there are none).
  bool has_note(std::string_view name, u32 type) const;
  /// Hex of the NT_GNU_BUILD_ID note, if any.
  std::optional<std::string> build_id() const;
  /// GNU_PROPERTY_X86_ISA_1_NEEDED bitmask from the property note, if any.
  std::optional<u32> x86_isa_needed() const;

  /// File offset holding virtual address `vaddr` (through PT_LOAD), if mapped
  /// from the file.
  std::optional<u64> vaddr_to_offset(u64 vaddr) const;

 private:
  ElfFile(std::shared_ptr<MappedFile> file, ByteView bytes,
          ElfReadOptions options);
  void parse_ident();
  void set_warning(ElfWarningFn fn);
  template <typename F>
  decltype(auto) visit(F&& f) const;

  std::shared_ptr<MappedFile> file_;
  std::shared_ptr<const void> owner_;  // what bytes_ lives in, if not file_
  ByteView bytes_;
  std::shared_ptr<const ElfWarningFn> warn_;  // deduplicating; null: none
  bool is_64_ = false, is_le_ = false;
  u8 osabi_ = 0;
  u16 type_ = 0, machine_ = 0;
};

/// "x86-64-v2" etc. for an ISA_1_NEEDED mask; "baseline" or "" when unknown.
std::string x86_isa_level_name(u32 mask);

/// Demangles an Itanium C++ ABI name; returns the input when it is not one.
std::string demangle(std::string_view name);

}  // namespace libpkg::elf
