// SPDX-License-Identifier: BSD-3-Clause
// Mach-O constants and on-disk layouts (mach-o/loader.h and mach-o/fat.h as
// Apple documents them), and nothing else: parsing is in view.hpp.
//
// Thin Mach-O files here are little-endian (x86_64, arm64, i386); fat
// headers are always big-endian. Every struct uses Integer<> fields (alignof
// 1), so it can be viewed in place at any offset, including slices of a fat
// file whose offsets are only page-aligned by convention.
#pragma once

#include "libpkg/base/integers.hpp"

namespace libpkg::macho {

inline constexpr u32 kMhMagic = 0xfeedface;    // 32-bit, file byte order
inline constexpr u32 kMhMagic64 = 0xfeedfacf;  // 64-bit, file byte order
inline constexpr u32 kMhCigam = 0xcefaedfe;    // 32-bit, swapped (PPC)
inline constexpr u32 kMhCigam64 = 0xcffaedfe;  // 64-bit, swapped (PPC64)
inline constexpr u32 kFatMagic = 0xcafebabe;   // big-endian on disk
inline constexpr u32 kFatMagic64 = 0xcafebabf;
// The largest fat_arch align (log2) accepted, llvm's
// MachOUniversalBinary::MaxSectionAlignment: more is a corrupt header (and
// 1 << align would overflow from 64 on).
inline constexpr u32 kMaxFatAlign = 15;

// CPU types (mach/machine.h): the 64-bit flag is 0x01000000.
inline constexpr u32 kCpuArch64 = 0x01000000;
inline constexpr u32 kCpuTypeX86 = 7;
inline constexpr u32 kCpuTypeX86_64 = kCpuTypeX86 | kCpuArch64;
inline constexpr u32 kCpuTypeArm = 12;
inline constexpr u32 kCpuTypeArm64 = kCpuTypeArm | kCpuArch64;
inline constexpr u32 kCpuTypeArm64_32 = kCpuTypeArm | 0x02000000;  // ILP32
inline constexpr u32 kCpuTypePowerPC = 18;
inline constexpr u32 kCpuTypePowerPC64 = kCpuTypePowerPC | kCpuArch64;
inline constexpr u32 kCpuSubtypeMask = 0xff000000;  // capability bits
inline constexpr u32 kCpuSubtypeArm64E = 2;
inline constexpr u32 kCpuSubtypeX86_64H = 8;

// File types.
inline constexpr u32 kMhObject = 1;
inline constexpr u32 kMhExecute = 2;
inline constexpr u32 kMhDylib = 6;
inline constexpr u32 kMhDylinker = 7;
inline constexpr u32 kMhBundle = 8;

// Load commands. LC_REQ_DYLD marks commands dyld must understand.
inline constexpr u32 kLcReqDyld = 0x80000000;
inline constexpr u32 kLcSegment = 0x1;
inline constexpr u32 kLcSymtab = 0x2;
inline constexpr u32 kLcDysymtab = 0xb;
inline constexpr u32 kLcLoadDylib = 0xc;
inline constexpr u32 kLcIdDylib = 0xd;
inline constexpr u32 kLcLoadDylinker = 0xe;
inline constexpr u32 kLcLoadWeakDylib = 0x18 | kLcReqDyld;
inline constexpr u32 kLcSegment64 = 0x19;
inline constexpr u32 kLcUuid = 0x1b;
inline constexpr u32 kLcRpath = 0x1c | kLcReqDyld;
inline constexpr u32 kLcCodeSignature = 0x1d;
inline constexpr u32 kLcReexportDylib = 0x1f | kLcReqDyld;
inline constexpr u32 kLcLazyLoadDylib = 0x20;
inline constexpr u32 kLcDyldInfo = 0x22;
inline constexpr u32 kLcDyldInfoOnly = 0x22 | kLcReqDyld;
inline constexpr u32 kLcLoadUpwardDylib = 0x23 | kLcReqDyld;
inline constexpr u32 kLcVersionMinMacosx = 0x24;
inline constexpr u32 kLcFunctionStarts = 0x26;
inline constexpr u32 kLcMain = 0x28 | kLcReqDyld;
inline constexpr u32 kLcDataInCode = 0x29;
inline constexpr u32 kLcSourceVersion = 0x2a;
inline constexpr u32 kLcBuildVersion = 0x32;
inline constexpr u32 kLcDyldExportsTrie = 0x33 | kLcReqDyld;
inline constexpr u32 kLcDyldChainedFixups = 0x34 | kLcReqDyld;

// Section type (low byte of flags) for zero-fill sections, which have no
// bytes in the file and so do not bound the header padding.
inline constexpr u32 kSectionTypeMask = 0xff;
inline constexpr u32 kSZerofill = 0x1;
inline constexpr u32 kSGbZerofill = 0xc;
inline constexpr u32 kSThreadLocalZerofill = 0x12;

inline constexpr u32 kPlatformMacos = 1;

/// The fat header (big-endian): FAT_MAGIC or FAT_MAGIC_64 and the slice count.
struct FatHeader {
  ub32 magic, nfat_arch;
};
/// One 32-bit fat_arch entry: a slice's CPU, file offset, size and log2
/// alignment.
struct FatArch {
  ub32 cputype, cpusubtype, offset, size, align;
};
/// One fat_arch_64 entry (FAT_MAGIC_64 files): 64-bit offset and size.
struct FatArch64 {
  ub32 cputype, cpusubtype;
  ub64 offset, size;
  ub32 align, reserved;
};

/// Thin headers are read little-endian; a big-endian (PPC) slice is listed
/// from its header fields swapped by hand and never parsed further.
struct MachHeader {
  ul32 magic, cputype, cpusubtype, filetype, ncmds, sizeofcmds, flags;
};
/// The 64-bit thin header (MH_MAGIC_64), one reserved word longer.
struct MachHeader64 {
  ul32 magic, cputype, cpusubtype, filetype, ncmds, sizeofcmds, flags, reserved;
};
/// The header every load command starts with.
struct LoadCommand {
  ul32 cmd, cmdsize;
};
/// LC_SEGMENT_64, followed by its nsects Section64 entries.
struct SegmentCommand64 {
  ul32 cmd, cmdsize;
  char segname[16];
  ul64 vmaddr, vmsize, fileoff, filesize;
  ul32 maxprot, initprot, nsects, flags;
};
/// One section entry of a segment command.
struct Section64 {
  char sectname[16];
  char segname[16];
  ul64 addr, size;
  ul32 offset, align, reloff, nreloc, flags, reserved1, reserved2, reserved3;
};
/// LC_ID_DYLIB, LC_LOAD_*DYLIB, LC_REEXPORT_DYLIB: the name is an lc_str, an
/// offset from the command's start, NUL-terminated inside cmdsize.
struct DylibCommand {
  ul32 cmd, cmdsize, name, timestamp, current_version, compatibility_version;
};
/// LC_RPATH: `path` is an lc_str offset from the command's start.
struct RpathCommand {
  ul32 cmd, cmdsize, path;
};
/// LC_UUID.
struct UuidCommand {
  ul32 cmd, cmdsize;
  u8 uuid[16];
};
/// LC_CODE_SIGNATURE, LC_FUNCTION_STARTS, LC_DYLD_CHAINED_FIXUPS, ...
struct LinkeditDataCommand {
  ul32 cmd, cmdsize, dataoff, datasize;
};
/// LC_VERSION_MIN_MACOSX and its siblings (versions as xxxx.yy.zz nibbles).
struct VersionMinCommand {
  ul32 cmd, cmdsize, version, sdk;
};
/// LC_BUILD_VERSION, followed by ntools build_tool_version entries.
struct BuildVersionCommand {
  ul32 cmd, cmdsize, platform, minos, sdk, ntools;
};

/// LC_SYMTAB: where the nlist_64 table and the string table are.
struct SymtabCommand {
  ul32 cmd, cmdsize, symoff, nsyms, stroff, strsize;
};
/// LC_DYLD_INFO / LC_DYLD_INFO_ONLY: the dyld opcode streams and exports trie.
struct DyldInfoCommand {
  ul32 cmd, cmdsize, rebase_off, rebase_size, bind_off, bind_size,
      weak_bind_off, weak_bind_size, lazy_bind_off, lazy_bind_size, export_off,
      export_size;
};
/// One entry of the LC_SYMTAB symbol table.
struct Nlist64 {
  ul32 n_strx;
  u8 n_type, n_sect;
  ul16 n_desc;
  ul64 n_value;
};
// n_type bits.
inline constexpr u8 kNStab = 0xe0;
inline constexpr u8 kNExt = 0x01;
inline constexpr u8 kNTypeMask = 0x0e;
inline constexpr u8 kNUndf = 0x0, kNAbs = 0x2, kNSect = 0xe, kNIndr = 0xa;
inline constexpr u8 kNPbud = 0xc;  // prebound undefined
// n_desc bits; an undefined symbol's library ordinal is n_desc's high byte.
inline constexpr u16 kNWeakRef = 0x0040;
inline constexpr u16 kNWeakDef = 0x0080;
// Library ordinals with a meaning of their own (two-level namespace).
inline constexpr u8 kSelfLibraryOrdinal = 0x00;
inline constexpr u8 kDynamicLookupOrdinal = 0xfe;
inline constexpr u8 kExecutableOrdinal = 0xff;
// Mach header flags.
inline constexpr u32 kMhTwoLevel = 0x80;
// Exports trie flags.
inline constexpr u64 kExportKindMask = 0x03;
inline constexpr u64 kExportKindAbsolute = 0x02;
inline constexpr u64 kExportWeakDefinition = 0x04;
inline constexpr u64 kExportReexport = 0x08;
inline constexpr u64 kExportStubAndResolver = 0x10;

static_assert(sizeof(SymtabCommand) == 24 && sizeof(DyldInfoCommand) == 48 &&
              sizeof(Nlist64) == 16);
static_assert(sizeof(FatHeader) == 8 && sizeof(FatArch) == 20 &&
              sizeof(FatArch64) == 32);
static_assert(sizeof(MachHeader) == 28 && sizeof(MachHeader64) == 32);
static_assert(sizeof(SegmentCommand64) == 72 && sizeof(Section64) == 80);
static_assert(sizeof(DylibCommand) == 24 && sizeof(RpathCommand) == 12);
static_assert(sizeof(UuidCommand) == 24 && sizeof(LinkeditDataCommand) == 16);
static_assert(sizeof(VersionMinCommand) == 16 &&
              sizeof(BuildVersionCommand) == 24);

}  // namespace libpkg::macho
