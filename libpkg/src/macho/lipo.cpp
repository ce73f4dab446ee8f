// SPDX-License-Identifier: BSD-3-Clause
// Fat file writer with llvm-lipo's layout, so `pkgtool macho lipo -create`
// output is byte-identical to `llvm-lipo -create` (tests/macho/lipo.sh).
#include "libpkg/macho/lipo.hpp"

#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <bit>

#include "libpkg/base/atomic_file.hpp"
#include "libpkg/base/error.hpp"
#include "libpkg/base/fd.hpp"
#include "libpkg/base/result.hpp"
#include "libpkg/macho/format.hpp"

namespace libpkg::macho {

u32 lipo_alignment(const Slice& slice) {
  // llvm-lipo's table: the page size of the CPU (4 KiB for Intel and
  // PowerPC, 16 KiB for ARM), whatever the file's segments say.
  switch (slice.cputype()) {
    case kCpuTypeX86:
    case kCpuTypeX86_64:
    case kCpuTypePowerPC:
    case kCpuTypePowerPC64:
      return 12;
    case kCpuTypeArm:
    case kCpuTypeArm64:
    case kCpuTypeArm64_32:
      return 14;
    default:
      break;
  }
  // Other CPUs: the smallest alignment of a segment's vmaddr.
  if (!slice.parsed()) {
    if (slice.fat_align() != 0) return slice.fat_align();
    throw Error(Errc::unsupported, slice.where(),
                "only 64-bit little-endian thin files of this CPU type can be "
                "put in a fat file");
  }
  if (slice.filetype() == kMhObject)
    throw Error(Errc::unsupported, slice.where(),
                "object files of this CPU type cannot be put in a fat file");
  u32 min = kMaxFatAlign;
  for (const auto& seg : slice.segments())
    min = std::min<u32>(min, static_cast<u32>(std::countr_zero(seg.vmaddr)));
  return std::max<u32>(2, min);
}

std::vector<FatMember> plan_fat(const std::vector<const MachOFile*>& inputs) {
  std::vector<FatMember> members;
  for (const MachOFile* f : inputs)
    for (const Slice& s : f->slices()) {
      for (const auto& m : members)
        if (m.slice->cputype() == s.cputype() &&
            m.slice->cpusubtype() == s.cpusubtype())
          throw Error(Errc::usage, s.where(),
                      fmt::format("{} and {} have the same architecture {} "
                                  "and cannot be in one fat file",
                                  m.slice->where(), s.where(), s.arch()));
      members.push_back({&s, lipo_alignment(s), 0});
    }
  if (members.empty()) throw Error(Errc::usage, "", "no input file");
  // llvm-lipo's order: by alignment, and arm64 last among equals (so that
  // older tools reading only the first matching slice pick the others).
  std::stable_sort(members.begin(), members.end(),
                   [](const FatMember& a, const FatMember& b) {
                     if (a.align != b.align) return a.align < b.align;
                     return a.slice->cputype() != kCpuTypeArm64 &&
                            b.slice->cputype() == kCpuTypeArm64;
                   });
  u64 offset = sizeof(FatHeader) + members.size() * sizeof(FatArch);
  for (auto& m : members) {
    m.offset = align_up(offset, u64{1} << m.align);
    offset = m.offset + m.slice->size();
  }
  if (offset > 0xffffffffu)
    throw Error(Errc::unsupported, inputs.front()->name(),
                "the fat file would exceed 4 GiB (FAT_MAGIC_64 output is not "
                "written)");
  return members;
}

std::vector<u8> fat_header_bytes(const std::vector<FatMember>& members) {
  std::vector<u8> head(sizeof(FatHeader) + members.size() * sizeof(FatArch));
  auto* h = reinterpret_cast<FatHeader*>(head.data());
  h->magic = kFatMagic;
  h->nfat_arch = static_cast<u32>(members.size());
  auto* arch = reinterpret_cast<FatArch*>(head.data() + sizeof(FatHeader));
  for (size_t i = 0; i < members.size(); ++i) {
    const Slice& s = *members[i].slice;
    arch[i].cputype = s.cputype();
    arch[i].cpusubtype = s.cpusubtype();
    arch[i].offset = static_cast<u32>(members[i].offset);
    arch[i].size = static_cast<u32>(s.size());
    arch[i].align = members[i].align;
  }
  return head;
}

u64 fat_size(const std::vector<FatMember>& members) {
  u64 end = 0;
  for (const auto& m : members) end = std::max(end, m.offset + m.slice->size());
  return end;
}

void write_fat(const std::vector<const MachOFile*>& inputs,
               const std::filesystem::path& output) {
  std::vector<FatMember> members = plan_fat(inputs);
  const MappedFile* first = inputs.front()->mapped();
  AtomicFile out =
      AtomicFile::create(output, first ? first->mode() & 07777 : 0755);
  out.pwrite(0, fat_header_bytes(members));
  // Slices of mapped inputs are copied inside the kernel (copy_file_range:
  // no page faults on the mapping, no user-space buffer), from the file the
  // reader mapped when it still has the mapped size; others are written
  // from their bytes.
  for (const MachOFile* f : inputs) {
    Fd fd;
    if (const MappedFile* map = f->mapped()) {
      Result<Fd> opened = try_open_regular(f->name());
      struct stat st {};
      if (opened && ::fstat(opened.value().get(), &st) == 0 &&
          static_cast<u64>(st.st_size) == map->size())
        fd = std::move(opened.value());
    }
    for (const auto& m : members) {
      const bool ours =
          std::any_of(f->slices().begin(), f->slices().end(),
                      [&](const Slice& s) { return &s == m.slice; });
      if (!ours) continue;  // a slice of another input
      if (fd)
        out.copy_from(fd.get(), m.slice->offset(), m.slice->size(), m.offset);
      else
        out.pwrite(m.offset,
                   m.slice->bytes().range(0, m.slice->size(), "slice"));
    }
  }
  out.commit();
}

void write_thin(const MachOFile& file, const std::string& arch,
                const std::filesystem::path& output) {
  if (!file.is_fat())
    throw Error(Errc::usage, file.name(),
                "a thin file has no slice to extract (-thin needs a fat file)");
  for (const Slice& s : file.slices()) {
    if (s.arch() != arch) continue;
    const MappedFile* in = file.mapped();
    AtomicFile out = AtomicFile::create(output, in ? in->mode() & 07777 : 0755);
    out.write(s.bytes().range(0, s.size(), "slice"));
    out.commit();
    return;
  }
  throw Error(Errc::usage, file.name(),
              fmt::format("no {} slice in the fat file", arch));
}

}  // namespace libpkg::macho
