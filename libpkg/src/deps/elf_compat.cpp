// Which libraries a loader accepts for an object, and what platform an ELF
// file is for.
#include <fmt/format.h>

#include <string>

#include "deps/arm_abi.hpp"
#include "libpkg/deps/resolve.hpp"
#include "libpkg/elf/format.hpp"

namespace libpkg::deps {

namespace {

const char* class_name(bool is_64) {
  return is_64 ? "ELFCLASS64" : "ELFCLASS32";
}
const char* order_name(bool le) { return le ? "little-endian" : "big-endian"; }

// ld.so accepts SYSV objects and GNU ones (the latter mark objects using
// GNU extensions such as IFUNC or unique symbols): they are one ABI.
bool linux_osabi(u8 osabi) {
  return osabi == elf::ELFOSABI_SYSV || osabi == elf::ELFOSABI_GNU;
}

}  // namespace

bool compatible(const elf::ElfFile& requester, const elf::ElfFile& candidate,
                std::string* why) {
  std::string reason;
  if (candidate.is_64() != requester.is_64()) {
    reason = fmt::format("{}, need {}", class_name(candidate.is_64()),
                         class_name(requester.is_64()));
  } else if (candidate.is_little_endian() != requester.is_little_endian()) {
    reason =
        fmt::format("{}, need {}", order_name(candidate.is_little_endian()),
                    order_name(requester.is_little_endian()));
  } else if (candidate.machine() != requester.machine()) {
    reason = fmt::format("machine {}, need {}", candidate.machine_name(),
                         requester.machine_name());
  } else if (candidate.osabi() != requester.osabi() &&
             !(linux_osabi(candidate.osabi()) &&
               linux_osabi(requester.osabi()))) {
    reason =
        fmt::format("OS/ABI {}, need {}", candidate.osabi(), requester.osabi());
  } else {
    return true;
  }
  if (why) *why = std::move(reason);
  return false;
}

std::string policy_arch(const elf::ElfFile& elf) {
  switch (elf.machine()) {
    case elf::EM_X86_64:
      return elf.is_64() ? "x86_64" : "";  // x32 has no policy
    case elf::EM_386:
      return "i686";
    case elf::EM_AARCH64:
      return elf.is_64() ? "aarch64" : "";
    case elf::EM_PPC64:
      return elf.is_little_endian() ? "ppc64le" : "ppc64";
    case elf::EM_S390:
      return elf.is_64() ? "s390x" : "";
    case elf::EM_ARM:
      return detail::armv7l_problem(detail::arm_abi(elf)).empty() ? "armv7l"
                                                                  : "";
    case elf::EM_RISCV:
      return elf.is_64() ? "riscv64" : "";
    case elf::EM_LOONGARCH:
      return elf.is_64() ? "loongarch64" : "";
    default:
      return "";
  }
}

std::string unsupported_machine(const elf::ElfFile& elf) {
  if (elf.machine() == elf::EM_ARM) {
    std::string problem = detail::armv7l_problem(detail::arm_abi(elf));
    if (!problem.empty()) return problem;
  }
  return fmt::format("machine {} ({}, {}): no platform policy covers it",
                     elf.machine_name(), class_name(elf.is_64()),
                     order_name(elf.is_little_endian()));
}

}  // namespace libpkg::deps
