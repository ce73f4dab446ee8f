// SPDX-License-Identifier: BSD-3-Clause
// Prints the DT_NEEDED entries of each file named on the command line, using
// nothing but libpkg's installed public headers.
#include <cstdio>
#include <string>

#include "libpkg/base/error.hpp"
#include "libpkg/elf/view.hpp"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s FILE...\n", argv[0]);
    return 2;
  }
  try {
    for (int i = 1; i < argc; ++i) {
      libpkg::elf::ElfFile elf = libpkg::elf::ElfFile::open(argv[i]);
      for (std::string_view lib : elf.needed())
        std::printf("%s: %.*s\n", argv[i], static_cast<int>(lib.size()),
                    lib.data());
    }
  } catch (const libpkg::Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return e.exit_code();
  }
  return 0;
}
