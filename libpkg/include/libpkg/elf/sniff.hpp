// SPDX-License-Identifier: BSD-3-Clause
// The one "is this an ELF file?" probe.
//
// Tree walkers (bundling, check_binary, conda relocation, the editor's
// search for a NEEDED library) ask this of every file. Not being ELF (too
// short, another magic) is an answer; failing to read the file (permission
// denied, EIO, a FIFO named like a library) is not, and is reported instead
// of passing the file over as "not ELF".
#pragma once

#include <filesystem>
#include <optional>
#include <span>

#include "libpkg/base/integers.hpp"
#include "libpkg/base/result.hpp"

namespace libpkg::elf {

/// The identification fields of an ELF header. A file with the ELF magic
/// is ELF even when the rest is damaged (the parser then says what is
/// wrong); `complete` is false when class, data encoding, e_type or
/// e_machine could not be read, and those fields are then meaningless.
struct ElfIdent {
  bool complete = false;
  bool is_64 = false;
  bool is_le = true;
  u16 type = 0;     // e_type
  u16 machine = 0;  // e_machine
};

/// Bytes a sniff reads: e_ident plus e_type and e_machine.
inline constexpr std::size_t kSniffBytes = 20;

/// The ident of `head` (the first bytes of a file), nullopt when it does
/// not start with the ELF magic.
std::optional<ElfIdent> sniff_elf(std::span<const u8> head);

/// The ident of the regular file `path`, nullopt when it is not ELF. Throws
/// Errc::io when the file cannot be opened or read, or is not a regular
/// file (never blocks on a FIFO).
std::optional<ElfIdent> sniff_elf_file(const std::filesystem::path& path);

/// sniff_elf_file's non-throwing form: the io Error is returned.
Result<std::optional<ElfIdent>> try_sniff_elf_file(
    const std::filesystem::path& path);

}  // namespace libpkg::elf
