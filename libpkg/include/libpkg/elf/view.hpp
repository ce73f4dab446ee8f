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

/// A program header, decoded to host integers; `index` is its position in the
/// table.
struct ProgramHeader {
  u32 index = 0;
  u32 type = 0;
  u32 flags = 0;
  u64 offset = 0, vaddr = 0, paddr = 0, filesz = 0, memsz = 0, align = 0;
};

/// A section header, decoded, with its name from .shstrtab.
struct SectionHeader {
  u32 index = 0;
  std::string_view name;
  u32 type = 0;
  u64 flags = 0, addr = 0, offset = 0, size = 0;
  u32 link = 0, info = 0;
  u64 addralign = 0, entsize = 0;
};

/// A dynamic section entry, decoded; `index` is its position in .dynamic.
struct DynamicEntry {
  u32 index = 0;
  i64 tag = 0;
  u64 value = 0;
};

/// A .dynsym entry, decoded, with its name and resolved version.
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

  /// True when the symbol is defined in this file (st_shndx is not SHN_UNDEF).
  bool is_defined() const { return shndx != 0; }
};

/// One version in a version need or definition: its name, hash, flags and
/// index.
struct VersionAux {
  std::string_view name;
  u32 hash = 0;
  u16 flags = 0;
  u16 other = 0;  // the version index used in .gnu.version
};

/// A .gnu.version_r entry: the versions needed from one library file.
struct VersionNeed {
  std::string_view file;
  std::vector<VersionAux> versions;
};

/// A .gnu.version_d entry: a version this file defines, with its parents.
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

/// Options of ElfFile::open and the ElfFile constructor.
struct ElfReadOptions {
  ElfWarningFn warning;  // default: none (oddities are worked around quietly)
};

/// A read-only view of an ELF file of either class and byte order; accessors
/// parse on demand and throw Error(Errc::format) naming the file and offset of
/// a malformed structure.
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

  /// The file name used in error messages.
  const std::string& name() const { return bytes_.name(); }
  /// The bytes of the whole file.
  const ByteView& bytes() const { return bytes_; }
  /// The underlying map, when the ElfFile owns one (open()).
  const MappedFile* mapped_file() const { return file_.get(); }

  /// True for ELFCLASS64.
  bool is_64() const { return is_64_; }
  /// True for ELFDATA2LSB.
  bool is_little_endian() const { return is_le_; }
  /// EI_OSABI.
  u8 osabi() const { return osabi_; }
  /// e_type (ET_EXEC, ET_DYN, ...).
  u16 type() const { return type_; }
  /// e_machine (EM_X86_64, EM_AARCH64, ...).
  u16 machine() const { return machine_; }
  /// e_entry, the entry point address.
  u64 entry() const;
  /// The name of e_machine ("x86_64", ...), as elf::machine_name gives it.
  std::string machine_name() const;

  /// The program headers, decoded; throws Errc::format when the table is
  /// malformed (e_phentsize) or lies outside the file.
  std::vector<ProgramHeader> program_headers() const;
  /// Empty when the file has no section header table.
  std::vector<SectionHeader> sections() const;
  /// The first section called `name`, if any; throws as sections() does.
  std::optional<SectionHeader> section(std::string_view name) const;

  /// The PT_INTERP path (up to its NUL), if the file has one; throws
  /// Errc::format when it lies outside the file.
  std::optional<std::string_view> interpreter() const;
  /// True when the file has a dynamic section (PT_DYNAMIC).
  bool has_dynamic() const;
  /// The dynamic entries up to (not including) the first DT_NULL.
  std::vector<DynamicEntry> dynamic() const;
  /// The DT_NEEDED names in order; throws Errc::format when the dynamic string
  /// table is missing or an offset is out of bounds.
  std::vector<std::string_view> needed() const;
  /// The DT_SONAME, if any; throws as needed() does.
  std::optional<std::string_view> soname() const;
  /// The DT_RPATH string, if any; throws as needed() does.
  std::optional<std::string_view> rpath() const;
  /// The DT_RUNPATH string, if any; throws as needed() does.
  std::optional<std::string_view> runpath() const;
  /// DT_FLAGS, 0 when absent.
  u64 dt_flags() const;
  /// DT_FLAGS_1, 0 when absent.
  u64 dt_flags_1() const;

  /// Number of entries in .dynsym (including the null symbol 0).
  u64 dynamic_symbol_count() const;
  /// Visits every .dynsym entry (from index 1) with its version resolved,
  /// without materialising a vector: big libraries have 10^5 symbols.
  void for_each_dynamic_symbol(
      const std::function<void(const Symbol&)>& fn) const;
  /// Every .dynsym entry from index 1, as for_each_dynamic_symbol visits them.
  std::vector<Symbol> dynamic_symbols() const;
  /// The .gnu.version_r entries; throws Errc::format naming the offset of a
  /// malformed record.
  std::vector<VersionNeed> version_needs() const;
  /// The .gnu.version_d entries; throws Errc::format naming the offset of a
  /// malformed record.
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
