// What an ARM (EM_ARM) ELF file says about its ABI: the EABI version and
// float ABI from e_flags, and the CPU architecture from the .ARM.attributes
// section (the "aeabi" Tag_CPU_arch). Private to deps/.
#pragma once

#include <optional>
#include <string>

#include "libpkg/elf/view.hpp"

namespace libpkg::deps::detail {

struct ArmAbi {
  unsigned eabi_version = 0;  // e_flags >> 24 (5 for current toolchains)
  bool hard_float = false;    // EF_ARM_ABI_FLOAT_HARD
  bool soft_float = false;    // EF_ARM_ABI_FLOAT_SOFT
  // Tag_CPU_arch (10 = ARMv7, 14 = ARMv8); nullopt without the attribute.
  std::optional<unsigned> cpu_arch;
};

ArmAbi arm_abi(const elf::ElfFile& elf);

// "ARMv5TE", "ARMv6", "ARMv7" for a Tag_CPU_arch value.
std::string arm_cpu_arch_name(unsigned cpu_arch);

// Why an ARM file is not armv7l ("" when it is): armv7l means EABI5,
// hard-float, ARMv7 or later (what every manylinux/musllinux armv7l
// system runs).
std::string armv7l_problem(const ArmAbi& abi);

}  // namespace libpkg::deps::detail
