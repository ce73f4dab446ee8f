// SPDX-License-Identifier: BSD-3-Clause
#include "libpkg/elf/sniff.hpp"

#include <cstring>

#include "libpkg/base/fd.hpp"
#include "libpkg/elf/format.hpp"

namespace libpkg::elf {

std::optional<ElfIdent> sniff_elf(std::span<const u8> head) {
  if (head.size() < sizeof kElfMagic ||
      std::memcmp(head.data(), kElfMagic, sizeof kElfMagic) != 0)
    return std::nullopt;
  ElfIdent id;
  if (head.size() < kSniffBytes) return id;
  const u8 cls = head[EI_CLASS];
  const u8 data = head[EI_DATA];
  if ((cls != ELFCLASS32 && cls != ELFCLASS64) ||
      (data != ELFDATA2LSB && data != ELFDATA2MSB))
    return id;
  id.complete = true;
  id.is_64 = cls == ELFCLASS64;
  id.is_le = data == ELFDATA2LSB;
  auto half = [&](std::size_t at) {
    return id.is_le ? static_cast<u16>(head[at] | (head[at + 1] << 8))
                    : static_cast<u16>((head[at] << 8) | head[at + 1]);
  };
  id.type = half(16);
  id.machine = half(18);
  return id;
}

std::optional<ElfIdent> sniff_elf_file(const std::filesystem::path& path) {
  return sniff_elf(read_prefix(path, kSniffBytes));
}

Result<std::optional<ElfIdent>> try_sniff_elf_file(
    const std::filesystem::path& path) {
  return attempt({Errc::io}, [&] { return sniff_elf_file(path); });
}

}  // namespace libpkg::elf
