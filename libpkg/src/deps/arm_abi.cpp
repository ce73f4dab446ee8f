// SPDX-License-Identifier: BSD-3-Clause
// ARM e_flags and build attributes (ELF for the ARM Architecture, and the
// "Addenda to the ABI: build attributes"): enough to tell armv7l
// (EABI5 hard-float ARMv7) from armel (soft-float) and ARMv6 builds.
#include "deps/arm_abi.hpp"

#include <fmt/format.h>

#include <span>

namespace libpkg::deps::detail {

namespace {

constexpr u32 kEfArmAbiFloatSoft = 0x200;
constexpr u32 kEfArmAbiFloatHard = 0x400;
constexpr u32 kSectionArmAttributes = 0x70000003;  // SHT_ARM_ATTRIBUTES
constexpr unsigned kTagFile = 1;
constexpr unsigned kTagCpuArch = 6;
constexpr unsigned kTagCompatibility = 32;

u32 load_u32(std::span<const u8> b, std::size_t at, bool le) {
  u32 v = 0;
  for (std::size_t i = 0; i < 4; ++i) {
    const u8 byte = b[at + (le ? 3 - i : i)];
    v = (v << 8) | byte;
  }
  return v;
}

// Reads an unsigned LEB128 at `*at` (advanced); nullopt past `end`.
std::optional<unsigned> uleb(std::span<const u8> b, std::size_t* at,
                             std::size_t end) {
  unsigned value = 0, shift = 0;
  while (*at < end) {
    const u8 byte = b[(*at)++];
    if (shift < 32) value |= static_cast<unsigned>(byte & 0x7f) << shift;
    shift += 7;
    if (!(byte & 0x80)) return value;
  }
  return std::nullopt;
}

// Skips a NUL-terminated string; false past `end`.
bool skip_string(std::span<const u8> b, std::size_t* at, std::size_t end) {
  while (*at < end)
    if (b[(*at)++] == 0) return true;
  return false;
}

// Tag_CPU_arch of the file-scope "aeabi" attributes. Malformed data ends the
// scan (the attribute is then unknown, not an error: the loader ignores the
// section).
std::optional<unsigned> cpu_arch(const elf::ElfFile& elf) {
  std::optional<elf::SectionHeader> sh = elf.section(".ARM.attributes");
  if (!sh || sh->type != kSectionArmAttributes ||
      !elf.bytes().contains(sh->offset, sh->size) || sh->size < 1)
    return std::nullopt;
  std::span<const u8> b =
      elf.bytes().range(sh->offset, sh->size, ".ARM.attributes");
  const bool le = elf.is_little_endian();
  if (b[0] != 'A') return std::nullopt;
  std::size_t at = 1;
  while (at + 4 <= b.size()) {
    const u32 length = load_u32(b, at, le);
    if (length < 4 || length > b.size() - at) return std::nullopt;
    const std::size_t sub_end = at + length;
    std::size_t p = at + 4;
    const std::size_t vendor = p;
    if (!skip_string(b, &p, sub_end)) return std::nullopt;
    const std::string_view name(reinterpret_cast<const char*>(&b[vendor]),
                                p - vendor - 1);
    while (name == "aeabi" && p + 5 <= sub_end) {
      const unsigned tag = b[p];
      const u32 size = load_u32(b, p + 1, le);
      if (size < 5 || size > sub_end - p) return std::nullopt;
      const std::size_t end = p + size;
      std::size_t q = p + 5;
      if (tag == kTagFile) {
        while (q < end) {
          auto attr = uleb(b, &q, end);
          if (!attr) return std::nullopt;
          // Tags 4, 5 (CPU names) and odd tags above 32 are strings;
          // Tag_compatibility is a number then a string; the rest numbers.
          if (*attr == 4 || *attr == 5 ||
              (*attr > kTagCompatibility && *attr % 2)) {
            if (!skip_string(b, &q, end)) return std::nullopt;
          } else {
            auto value = uleb(b, &q, end);
            if (!value) return std::nullopt;
            if (*attr == kTagCpuArch) return *value;
            if (*attr == kTagCompatibility && !skip_string(b, &q, end))
              return std::nullopt;
          }
        }
      }
      p = end;
    }
    at = sub_end;
  }
  return std::nullopt;
}

}  // namespace

ArmAbi arm_abi(const elf::ElfFile& elf) {
  ArmAbi abi;
  // e_flags follows e_entry, e_phoff, e_shoff: offset 36 in ELFCLASS32.
  const std::size_t offset = elf.is_64() ? 48 : 36;
  if (!elf.bytes().contains(offset, 4)) return abi;
  const u32 flags = load_u32(elf.bytes().range(0, offset + 4, "ELF header"),
                             offset, elf.is_little_endian());
  abi.eabi_version = flags >> 24;
  abi.hard_float = flags & kEfArmAbiFloatHard;
  abi.soft_float = flags & kEfArmAbiFloatSoft;
  abi.cpu_arch = cpu_arch(elf);
  return abi;
}

std::string arm_cpu_arch_name(unsigned cpu_arch) {
  static constexpr const char* kNames[] = {
      "pre-ARMv4", "ARMv4",   "ARMv4T",   "ARMv5T",   "ARMv5TE",
      "ARMv5TEJ",  "ARMv6",   "ARMv6KZ",  "ARMv6T2",  "ARMv6K",
      "ARMv7",     "ARMv6-M", "ARMv6S-M", "ARMv7E-M", "ARMv8"};
  if (cpu_arch < std::size(kNames)) return kNames[cpu_arch];
  return fmt::format("ARM architecture {}", cpu_arch);
}

std::string armv7l_problem(const ArmAbi& abi) {
  if (abi.eabi_version != 5)
    return fmt::format(
        "ARM EABI version {} (e_flags): armv7l wheels are EABI5 hard-float, "
        "no policy applies",
        abi.eabi_version);
  if (!abi.hard_float)
    return "ARM soft-float (EABI5 without EF_ARM_ABI_FLOAT_HARD in e_flags, "
           "an armel build): armv7l wheels are hard-float, no policy applies";
  // 10 = ARMv7; 11..13 are M-profile microcontroller cores.
  if (abi.cpu_arch &&
      (*abi.cpu_arch < 10 || (*abi.cpu_arch >= 11 && *abi.cpu_arch <= 13)))
    return fmt::format(
        "built for {} (Tag_CPU_arch in .ARM.attributes): armv7l wheels are "
        "ARMv7 or later, no policy applies",
        arm_cpu_arch_name(*abi.cpu_arch));
  return "";
}

}  // namespace libpkg::deps::detail
