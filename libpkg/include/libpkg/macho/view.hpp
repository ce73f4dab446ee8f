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

/// "LC_RPATH", or "0x..." for a command this reader has no name for.
std::string command_name(u32 cmd);
/// "arm64", "x86_64", "i386", "ppc", ... or "cputype 0x..".
std::string arch_name(u32 cputype, u32 cpusubtype);
/// "dylib", "execute", "bundle", ... or "filetype 0x..".
std::string filetype_name(u32 filetype);
/// A version encoded in nibbles xxxx.yy.zz as "11.0" or "10.15.2".
std::string version_string(u32 v);

/// One load command of a slice: its index, cmd, cmdsize and slice offset.
struct Command {
  u32 index = 0;
  u32 cmd = 0;
  u32 cmdsize = 0;
  u64 offset = 0;  // from the slice's start
};

/// One section of a segment (names point into the file's bytes).
struct Section {
  std::string_view segname, sectname;
  u64 addr = 0, size = 0;
  u32 offset = 0, flags = 0;
  /// Zero-fill sections occupy no file bytes.
  bool has_file_content() const;
};

/// One LC_SEGMENT_64 with its sections.
struct Segment {
  u32 command_index = 0;
  std::string_view name;
  u64 vmaddr = 0, vmsize = 0, fileoff = 0, filesize = 0;
  u32 maxprot = 0, initprot = 0;
  std::vector<Section> sections;
};

/// Which command loads a dependent library (LC_LOAD_DYLIB, _WEAK_, REEXPORT_,
/// UPWARD_, LAZY_LOAD_).
enum class DylibKind { load, weak, reexport, upward, lazy };
/// "load", "weak", "reexport", "upward" or "lazy".
const char* dylib_kind_name(DylibKind kind);

/// One dependent-library command of a slice.
struct Dylib {
  u32 command_index = 0;
  // 1-based position among the dependent-library commands: the library
  // ordinal that binds and chained-fixup imports refer to.
  u32 ordinal = 0;
  DylibKind kind = DylibKind::load;
  std::string_view name;
  u32 timestamp = 0, current_version = 0, compatibility_version = 0;
};

/// One LC_RPATH of a slice.
struct Rpath {
  u32 command_index = 0;
  std::string_view path;
};

/// The minimum OS and SDK from LC_BUILD_VERSION or LC_VERSION_MIN_MACOSX.
struct PlatformVersion {
  u32 command = 0;  // kLcBuildVersion or kLcVersionMinMacosx
  u32 platform = 0;
  u32 minos = 0, sdk = 0;
};

/// Where a __LINKEDIT data command (LC_CODE_SIGNATURE, ...) points.
struct LinkeditData {
  u32 command_index = 0;
  u32 dataoff = 0, datasize = 0;  // from the slice's start
};

/// How the slice tells dyld about binds and rebases.
enum class FixupFormat { none, dyld_info, chained_fixups };
/// "none", "dyld_info" or "chained_fixups".
const char* fixup_format_name(FixupFormat f);

/// One architecture of a Mach-O file: the header read at construction, the load
/// commands validated on first use. Accessors below the header ones throw
/// Error(Errc::unsupported) for a slice that is not parsed() and
/// Error(Errc::format) naming the load command on a bad one.
class Slice {
 public:
  /// Reads the mach header of \p bytes; throws Error(Errc::format) when the
  /// magic is not Mach-O, the header is truncated or its cputype disagrees with
  /// the fat header's.
  Slice(ByteView bytes, std::string where, u32 cputype, u32 cpusubtype,
        u32 align);

  /// "FILE (arm64)": the prefix of every error about this slice.
  const std::string& where() const { return where_; }
  /// The architecture name of cputype/cpusubtype ("arm64", "x86_64", ...).
  std::string arch() const { return arch_name(cputype_, cpusubtype_); }
  /// The CPU type from the fat or mach header.
  u32 cputype() const { return cputype_; }
  /// The CPU subtype from the fat or mach header.
  u32 cpusubtype() const { return cpusubtype_; }
  /// The slice's offset in the file (0 for a thin file).
  u64 offset() const { return bytes_.base(); }  // in the file
  /// The slice's size in bytes.
  u64 size() const { return bytes_.size(); }
  /// The log2 alignment from the fat_arch entry (0 for a thin file).
  u32 fat_align() const { return align_; }  // log2, 0 for a thin file
  /// The slice's bytes, named after where().
  const ByteView& bytes() const { return bytes_; }
  /// True for an MH_MAGIC_64 slice.
  bool is_64() const { return is64_; }
  /// True when the header is little-endian.
  bool little_endian() const { return little_; }
  /// 64-bit little-endian: parsed and editable. Others are only listed.
  bool parsed() const { return is64_ && little_; }

  /// The mach header's filetype (MH_DYLIB, MH_EXECUTE, ...).
  u32 filetype() const { return filetype_; }
  /// The mach header's ncmds.
  u32 ncmds() const { return ncmds_; }
  /// The mach header's sizeofcmds.
  u32 sizeofcmds() const { return sizeofcmds_; }
  /// The mach header's flags.
  u32 flags() const { return flags_; }
  /// The size of the mach header: 32 bytes (64-bit) or 28.
  u64 header_size() const { return is64_ ? 32 : 28; }
  /// The slice offset where the load commands end (header + sizeofcmds).
  u64 load_commands_end() const { return header_size() + sizeofcmds_; }

  /// Every load command, validated (sizes, strings, segment and section
  /// ranges, linkedit ranges) on first use; throws Error(Errc::format) naming
  /// the command and both values on the first bad one.
  const std::vector<Command>& commands() const;
  /// The LC_SEGMENT_64 commands with their sections, in command order.
  std::vector<Segment> segments() const;
  /// The install name of LC_ID_DYLIB, if the slice has one.
  std::optional<std::string_view> id() const;
  /// The dependent-library commands in order, with their ordinals.
  std::vector<Dylib> dylibs() const;
  /// The LC_RPATH paths in command order.
  std::vector<Rpath> rpaths() const;
  /// The first LC_BUILD_VERSION or LC_VERSION_MIN_MACOSX, if any.
  std::optional<PlatformVersion> platform_version() const;
  /// The LC_UUID, if any.
  std::optional<std::array<u8, 16>> uuid() const;
  /// The LC_CODE_SIGNATURE's dataoff and datasize, if any.
  std::optional<LinkeditData> code_signature() const;
  /// chained_fixups or dyld_info when the slice has that command, else none.
  FixupFormat fixup_format() const;

  /// The file offset (slice-relative) of the first section with bytes in the
  /// file: load commands may grow up to it without moving anything. Throws
  /// Error(Errc::format) when that content overlaps the load commands.
  u64 first_content_offset() const;
  /// first_content_offset() - load_commands_end().
  u64 free_padding() const;

  /// The string of an lc_str field (`str_offset` from the command's start);
  /// throws Error(Errc::format) when it starts past cmdsize or has no NUL.
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

/// A thin or fat Mach-O file: the fat header and each slice's mach header, read
/// when opened.
class MachOFile {
 public:
  /// True when `head` starts with a Mach-O or fat magic (a fat magic is
  /// also Java's class-file magic; parse() tells them apart).
  static bool has_magic(std::span<const u8> head);

  /// Maps `path` and reads the headers; throws MappedFile::open's errors and
  /// parse()'s.
  static MachOFile open(const std::filesystem::path& path);
  /// Reads the headers of borrowed bytes (tests, fuzzers, archive members);
  /// throws Error(Errc::format) on an unknown magic, a truncated header or a
  /// fat_arch entry out of range or overlapping another.
  static MachOFile parse(ByteView bytes);

  /// The file's name (the path given to open, or the ByteView's name).
  const std::string& name() const { return bytes_.name(); }
  /// The whole file's bytes.
  const ByteView& bytes() const { return bytes_; }
  /// The mapping behind open(); null after parse().
  const MappedFile* mapped() const { return mapped_.get(); }
  /// True when the file starts with a fat magic.
  bool is_fat() const { return fat_magic_ != 0; }
  /// FAT_MAGIC or FAT_MAGIC_64, 0 for a thin file.
  u32 fat_magic() const { return fat_magic_; }
  /// Every slice, in fat_arch order (one for a thin file).
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
