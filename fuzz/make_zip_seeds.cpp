// SPDX-License-Identifier: BSD-3-Clause
// Writes a seed corpus for the zip_read fuzz target from the reader tests'
// in-memory builder (tests/archive/reader_zip_builder.hpp): stored and
// deflated members, data descriptors, ZIP64 extra fields and end records,
// comments, symlinks and directories.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "reader_zip_builder.hpp"

using namespace reader_testing;

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s DIR\n", argv[0]);
    return 2;
  }
  std::filesystem::path dir = argv[1];
  std::filesystem::create_directories(dir);
  int n = 0;
  auto write = [&](const std::string& name, const Built& built) {
    std::ofstream(dir / name, std::ios::binary)
        .write(reinterpret_cast<const char*>(built.bytes.data()),
               static_cast<std::streamsize>(built.bytes.size()));
    ++n;
  };
  auto member = [](std::string name, std::string data, std::uint16_t method) {
    Member m;
    m.name = std::move(name);
    m.data = to_bytes(data);
    m.method = method;
    return m;
  };
  std::string text;
  for (int i = 0; i < 40; ++i) text += "line " + std::to_string(i) + "\n";
  write("plain", build_zip({member("a.txt", text, 8),
                            member("dir/b.bin", "stored", 0)}));
  Member dd = member("dd", text, 8);
  dd.data_descriptor = true;
  Member dd0 = member("dd0", "x", 0);
  dd0.data_descriptor = true;
  dd0.descriptor_signature = false;
  write("descriptor", build_zip({dd, dd0}));
  Member z = member("z64", text, 8);
  z.zip64 = true;
  write("zip64", build_zip({z, member("small", "s", 0)},
                           {.comment = "comment", .zip64_end = true}));
  Member d = member("pkg/", "", 0);
  d.external_attr = 040755u << 16;
  Member l = member("pkg/link", "../pkg/x", 0);
  l.external_attr = 0120777u << 16;
  Member x = member("pkg/x", "x", 8);
  x.external_attr = 0100755u << 16;
  write("tree", build_zip({d, l, x, member("caf\xc3\xa9", "u", 0)}));
  write("empty", build_zip({}));
  std::printf("wrote %d seeds to %s\n", n, dir.c_str());
  return 0;
}
