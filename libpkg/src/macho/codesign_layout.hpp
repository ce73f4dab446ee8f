// SPDX-License-Identifier: BSD-3-Clause
// The load-command facts the signature code needs from a 64-bit thin slice,
// with the offsets of the commands it may patch. Private: the Mach-O reader
// will provide these; this walker stays small on purpose.
#pragma once

#include <optional>

#include "libpkg/base/bytes.hpp"
#include "libpkg/macho/codesign.hpp"

namespace libpkg::macho::cs {

struct SliceCommands {
  SliceLayout layout;
  u32 cputype = 0;
  u64 commands_end = 0;            // 32 + sizeofcmds
  u64 first_content = 0;           // lowest file offset of section/segment data
  std::optional<u64> codesig_cmd;  // offset of LC_CODE_SIGNATURE
  std::optional<u64> linkedit_cmd;  // offset of __LINKEDIT's segment command
  u64 linkedit_fileoff = 0;
  u64 linkedit_filesize = 0;
};

SliceCommands walk_slice(const ByteView& slice);

}  // namespace libpkg::macho::cs
