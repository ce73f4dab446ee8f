// SPDX-License-Identifier: BSD-3-Clause
// Universal (fat) files laid out as llvm-lipo lays them out: `lipo -create`
// and `-thin` on top of the reader. (wheel fuse needs the same layout.)
#pragma once

#include <filesystem>
#include <vector>

#include "libpkg/macho/view.hpp"

namespace libpkg::macho {

/// The log2 alignment llvm-lipo gives `slice` in a fat file: 12 for Intel
/// and PowerPC, 14 for ARM; for other CPUs the smallest number of trailing
/// zero bits of a segment's vmaddr, clamped to [2, 15] (object files and
/// 32-bit/big-endian slices of other CPUs are refused).
u32 lipo_alignment(const Slice& slice);

/// One slice's place in a fat file: its log2 alignment and file offset.
struct FatMember {
  const Slice* slice = nullptr;
  u32 align = 0;   // log2
  u64 offset = 0;  // in the fat file
};

/// llvm-lipo's order and offsets for the slices of `inputs` (every slice of
/// each file): sorted by alignment, arm64 last among equals, each at the
/// next multiple of its alignment after the fat header and the previous
/// slice. Throws Error(Errc::usage) naming both slices of one architecture,
/// Errc::unsupported when the fat file would pass 4 GiB.
std::vector<FatMember> plan_fat(const std::vector<const MachOFile*>& inputs);

/// The fat header and fat_arch table (FAT_MAGIC, big-endian) of `members`:
/// the file is these bytes, then each slice at its offset, zeros between.
std::vector<u8> fat_header_bytes(const std::vector<FatMember>& members);

/// The size of the fat file of `members` (the end of its last slice).
u64 fat_size(const std::vector<FatMember>& members);

/// Writes the fat file of `inputs` to `output` (temp file + rename), with the
/// mode of the first input.
void write_fat(const std::vector<const MachOFile*>& inputs,
               const std::filesystem::path& output);

/// Writes the bytes of `file`'s slice for `arch` to `output`. A thin input is
/// refused, as llvm-lipo refuses it, and so is a missing arch (Errc::usage).
void write_thin(const MachOFile& file, const std::string& arch,
                const std::filesystem::path& output);

}  // namespace libpkg::macho
