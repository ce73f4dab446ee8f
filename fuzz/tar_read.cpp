// SPDX-License-Identifier: BSD-3-Clause
// libFuzzer target for the tar reader under conda packages (and every
// compression libarchive detects for it): any byte string must iterate and
// read back, or fail with libpkg::Error naming the input. Small limits keep
// each input's work bounded. Anything else is a bug.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>

#include "libpkg/archive/tar.hpp"
#include "libpkg/base/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data,
                                      std::size_t size) {
  using namespace libpkg::archive;
  TarLimits limits;
  limits.max_entries = 1u << 12;
  limits.max_total_size = 64u << 20;
  limits.max_entry_size = 16u << 20;
  try {
    TarReader reader = TarReader::open_memory(
        std::span<const libpkg::u8>(data, size), "fuzz-input", limits);
    TarMember m;
    while (reader.next(m)) {
      std::uint64_t got = 0;
      if (m.kind == TarKind::file)
        reader.read_data(
            [&](std::span<const libpkg::u8> piece) { got += piece.size(); });
      if (m.kind == TarKind::file && got != m.size) std::abort();
    }
  } catch (const libpkg::Error& e) {
    if (e.file() != "fuzz-input") std::abort();
  }
  return 0;
}
