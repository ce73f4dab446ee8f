// SPDX-License-Identifier: BSD-3-Clause
// On-disk layouts used by the code-signature code (private to the layer).
//
// The signature blobs are big-endian (Apple's cs_blobs.h); the Mach-O header
// and load commands are in the slice's order, little-endian for every slice
// we sign (arm64, x86_64). Only the few load commands the signature depends
// on are declared here: the Mach-O reader owns the rest.
#pragma once

#include "libpkg/base/integers.hpp"

namespace libpkg::macho::cs {

struct SuperBlobHeader {
  ub32 magic;
  ub32 length;
  ub32 count;
};
static_assert(sizeof(SuperBlobHeader) == 12);

struct BlobIndex {
  ub32 type;
  ub32 offset;
};
static_assert(sizeof(BlobIndex) == 8);

struct GenericBlob {
  ub32 magic;
  ub32 length;
};

// CodeDirectory up to version 0x20400 (exec segment); older versions end
// earlier (sizes below), newer ones append fields we carry along unchanged.
struct CodeDirectoryHeader {
  ub32 magic;
  ub32 length;
  ub32 version;
  ub32 flags;
  ub32 hashOffset;
  ub32 identOffset;
  ub32 nSpecialSlots;
  ub32 nCodeSlots;
  ub32 codeLimit;
  u8 hashSize;
  u8 hashType;
  u8 platform;
  u8 pageSize;
  ub32 spare2;
  ub32 scatterOffset;  // 0x20100
  ub32 teamOffset;     // 0x20200
  ub32 spare3;         // 0x20300
  ub64 codeLimit64;
  ub64 execSegBase;  // 0x20400
  ub64 execSegLimit;
  ub64 execSegFlags;
};
static_assert(sizeof(CodeDirectoryHeader) == 88);

inline constexpr u64 kCdSizeEarliest = 44;
inline constexpr u64 kCdSizeScatter = 48;
inline constexpr u64 kCdSizeTeam = 52;
inline constexpr u64 kCdSizeCodeLimit64 = 64;
inline constexpr u64 kCdSizeExecSeg = 88;

// The header bytes a CodeDirectory of `version` has.
inline u64 cd_header_size(u32 version) {
  if (version >= 0x20400) return kCdSizeExecSeg;
  if (version >= 0x20300) return kCdSizeCodeLimit64;
  if (version >= 0x20200) return kCdSizeTeam;
  if (version >= 0x20100) return kCdSizeScatter;
  return kCdSizeEarliest;
}

// Mach-O (little-endian 64-bit slices).
inline constexpr u32 kMhMagic64 = 0xfeedfacf;
inline constexpr u32 kMhExecute = 2;
inline constexpr u32 kLcSegment64 = 0x19;
inline constexpr u32 kLcCodeSignature = 0x1d;
inline constexpr u32 kCpuTypeArm64 = 0x0100000c;

struct MachHeader64 {
  ul32 magic;
  ul32 cputype;
  ul32 cpusubtype;
  ul32 filetype;
  ul32 ncmds;
  ul32 sizeofcmds;
  ul32 flags;
  ul32 reserved;
};
static_assert(sizeof(MachHeader64) == 32);

struct LoadCommand {
  ul32 cmd;
  ul32 cmdsize;
};

struct SegmentCommand64 {
  ul32 cmd;
  ul32 cmdsize;
  char segname[16];
  ul64 vmaddr;
  ul64 vmsize;
  ul64 fileoff;
  ul64 filesize;
  ul32 maxprot;
  ul32 initprot;
  ul32 nsects;
  ul32 flags;
};
static_assert(sizeof(SegmentCommand64) == 72);

struct Section64 {
  char sectname[16];
  char segname[16];
  ul64 addr;
  ul64 size;
  ul32 offset;
  ul32 align;
  ul32 reloff;
  ul32 nreloc;
  ul32 flags;
  ul32 reserved1;
  ul32 reserved2;
  ul32 reserved3;
};
static_assert(sizeof(Section64) == 80);

struct LinkeditDataCommand {
  ul32 cmd;
  ul32 cmdsize;
  ul32 dataoff;
  ul32 datasize;
};
static_assert(sizeof(LinkeditDataCommand) == 16);

}  // namespace libpkg::macho::cs
