// SPDX-License-Identifier: BSD-3-Clause
// A lazy, zero-copy, bounds-checked reader of Mach-O files, thin and fat.
//
// Opening reads the fat header (if any) and each slice's mach header only.
// A slice's load commands are walked and validated the first time one of
// its accessors needs them; section contents, symbol tables and __LINKEDIT
// are never read, so listing the install names of a 200 MiB dylib touches
// its first page. Every string_view points into the file's bytes and lives
// as long as the MachOFile.
//
// Errors name the file and the slice's architecture ("lib.dylib (arm64)"),
// the structure (load command index and name) and both values that
// disagree, e.g. "load command 5 (LC_RPATH): path offset 0x20 past cmdsize
// 0x18". Only 64-bit little-endian slices (x86_64, arm64, arm64e) are parsed
// past their header; 32-bit and PowerPC slices are listed, never edited.
#pragma once

#include <array>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "libpkg/base/bytes.hpp"
#include "libpkg/base/mapped_file.hpp"

namespace libpkg::macho {

// "LC_RPATH", or "0x..." for a command this reader has no name for.
std::string command_name(u32 cmd);
// "arm64", "x86_64", "i386", "ppc", ... or "cputype 0x..".
std::string arch_name(u32 cputype, u32 cpusubtype);
// "dylib", "execute", "bundle", ... or "filetype 0x..".
std::string filetype_name(u32 filetype);
// A version encoded in nibbles xxxx.yy.zz as "11.0" or "10.15.2".
std::string version_string(u32 v);

struct Command {
  u32 index = 0;
  u32 cmd = 0;
  u32 cmdsize = 0;
  u64 offset = 0;  // from the slice's start
};

struct Section {
  std::string_view segname, sectname;
  u64 addr = 0, size = 0;
  u32 offset = 0, flags = 0;
  // Zero-fill sections occupy no file bytes.
  bool has_file_content() const;
};

struct Segment {
  u32 command_index = 0;
  std::string_view name;
  u64 vmaddr = 0, vmsize = 0, fileoff = 0, filesize = 0;
  u32 maxprot = 0, initprot = 0;
  std::vector<Section> sections;
};

enum class DylibKind { load, weak, reexport, upward, lazy };
const char* dylib_kind_name(DylibKind kind);

struct Dylib {
  u32 command_index = 0;
  // 1-based position among the dependent-library commands: the library
  // ordinal that binds and chained-fixup imports refer to.
  u32 ordinal = 0;
  DylibKind kind = DylibKind::load;
  std::string_view name;
  u32 timestamp = 0, current_version = 0, compatibility_version = 0;
};

struct Rpath {
  u32 command_index = 0;
  std::string_view path;
};

struct PlatformVersion {
  u32 command = 0;  // kLcBuildVersion or kLcVersionMinMacosx
  u32 platform = 0;
  u32 minos = 0, sdk = 0;
};

struct LinkeditData {
  u32 command_index = 0;
  u32 dataoff = 0, datasize = 0;  // from the slice's start
};

enum class FixupFormat { none, dyld_info, chained_fixups };
const char* fixup_format_name(FixupFormat f);

class Slice {
 public:
  Slice(ByteView bytes, std::string where, u32 cputype, u32 cpusubtype,
        u32 align);

  // "FILE (arm64)": the prefix of every error about this slice.
  const std::string& where() const { return where_; }
  std::string arch() const { return arch_name(cputype_, cpusubtype_); }
  u32 cputype() const { return cputype_; }
  u32 cpusubtype() const { return cpusubtype_; }
  u64 offset() const { return bytes_.base(); }  // in the file
  u64 size() const { return bytes_.size(); }
  u32 fat_align() const { return align_; }  // log2, 0 for a thin file
  const ByteView& bytes() const { return bytes_; }
  bool is_64() const { return is64_; }
  bool little_endian() const { return little_; }
  // 64-bit little-endian: parsed and editable. Others are only listed.
  bool parsed() const { return is64_ && little_; }

  u32 filetype() const { return filetype_; }
  u32 ncmds() const { return ncmds_; }
  u32 sizeofcmds() const { return sizeofcmds_; }
  u32 flags() const { return flags_; }
  u64 header_size() const { return is64_ ? 32 : 28; }
  u64 load_commands_end() const { return header_size() + sizeofcmds_; }

  // Every load command, validated (sizes, strings, segment and section
  // ranges, linkedit ranges) on first use.
  const std::vector<Command>& commands() const;
  std::vector<Segment> segments() const;
  std::optional<std::string_view> id() const;
  std::vector<Dylib> dylibs() const;
  std::vector<Rpath> rpaths() const;
  std::optional<PlatformVersion> platform_version() const;
  std::optional<std::array<u8, 16>> uuid() const;
  std::optional<LinkeditData> code_signature() const;
  FixupFormat fixup_format() const;

  // The file offset (slice-relative) of the first section with bytes in the
  // file: load commands may grow up to it without moving anything.
  u64 first_content_offset() const;
  // first_content_offset() - load_commands_end().
  u64 free_padding() const;

  // The string of an lc_str field (`str_offset` from the command's start).
  std::string_view command_string(const Command& c, u32 str_offset,
                                  std::string_view field) const;

 private:
  void require_parsed(std::string_view what) const;
  [[noreturn]] void fail(const std::string& message) const;
  void validate(const Command& c) const;
  template <typename T>
  const T& command_as(const Command& c) const;

  ByteView bytes_;
  std::string where_;
  u32 cputype_, cpusubtype_, align_;
  bool is64_ = false, little_ = true;
  u32 filetype_ = 0, ncmds_ = 0, sizeofcmds_ = 0, flags_ = 0;
  mutable std::optional<std::vector<Command>> commands_;
};

class MachOFile {
 public:
  // True when `head` starts with a Mach-O or fat magic (a fat magic is
  // also Java's class-file magic; parse() tells them apart).
  static bool has_magic(std::span<const u8> head);

  // Maps `path` and reads the headers.
  static MachOFile open(const std::filesystem::path& path);
  // Reads the headers of borrowed bytes (tests, fuzzers, archive members).
  static MachOFile parse(ByteView bytes);

  const std::string& name() const { return bytes_.name(); }
  const ByteView& bytes() const { return bytes_; }
  // The mapping behind open(); null after parse().
  const MappedFile* mapped() const { return mapped_.get(); }
  bool is_fat() const { return fat_magic_ != 0; }
  u32 fat_magic() const { return fat_magic_; }
  const std::vector<Slice>& slices() const { return slices_; }

 private:
  MachOFile() = default;
  void read_fat();
  void read_thin();

  std::unique_ptr<MappedFile> mapped_;
  ByteView bytes_;
  u32 fat_magic_ = 0;
  std::vector<Slice> slices_;
};

}  // namespace libpkg::macho
