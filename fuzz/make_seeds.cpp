// SPDX-License-Identifier: BSD-3-Clause
// Writes a seed corpus for the ELF fuzz target: the images the unit tests
// build (tests/elf/elf_builder.hpp) in all four class/byte orders, with
// and without section headers and with each hash style.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "elf_builder.hpp"

using namespace libpkg::elf;
using namespace libpkg::elf::testing;

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s DIR\n", argv[0]);
    return 2;
  }
  std::filesystem::path dir = argv[1];
  std::filesystem::create_directories(dir);
  int n = 0;
  auto write = [&](const std::string& name,
                   const std::vector<libpkg::u8>& image) {
    std::ofstream(dir / name, std::ios::binary)
        .write(reinterpret_cast<const char*>(image.data()),
               static_cast<std::streamsize>(image.size()));
    ++n;
  };
  for (bool is_64 : {false, true}) {
    for (bool is_le : {true, false}) {
      std::string tag =
          std::string(is_64 ? "64" : "32") + (is_le ? "le" : "be");
      ElfSpec full = full_spec();
      write("full-" + tag, build_elf(is_64, is_le, full));
      for (HashStyle h : {HashStyle::none, HashStyle::sysv, HashStyle::gnu}) {
        ElfSpec s = full_spec();
        s.section_headers = false;
        s.hash = h;
        write("noshdr-hash" + std::to_string(static_cast<int>(h)) + "-" + tag,
              build_elf(is_64, is_le, s));
      }
      ElfSpec minimal;
      minimal.needed = {"libc.so.6"};
      minimal.rpath = "/opt/lib";
      write("minimal-" + tag, build_elf(is_64, is_le, minimal));
      ElfSpec exec;
      exec.type = ET_EXEC;
      exec.dynamic = false;
      write("static-" + tag, build_elf(is_64, is_le, exec));
    }
  }
  std::printf("wrote %d seeds to %s\n", n, dir.c_str());
  return 0;
}
