// SPDX-License-Identifier: BSD-3-Clause
// A scratch directory tree for resolver tests: files written at test time,
// removed afterwards.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "../elf/elf_builder.hpp"

namespace libpkg::deps::testing {

class TestRoot {
 public:
  TestRoot() {
    std::string tmpl =
        (std::filesystem::temp_directory_path() / "libpkg-deps.XXXXXX")
            .string();
    if (!::mkdtemp(tmpl.data())) std::abort();
    dir_ = tmpl;
  }
  ~TestRoot() {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  TestRoot(const TestRoot&) = delete;
  TestRoot& operator=(const TestRoot&) = delete;

  const std::filesystem::path& dir() const { return dir_; }
  // The absolute path of `rel` inside the root.
  std::string at(const std::string& rel) const { return (dir_ / rel).string(); }

  void write(const std::string& rel, const std::string& text) const {
    auto p = dir_ / rel;
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << text;
  }
  void write_bytes(const std::string& rel, const std::vector<u8>& bytes) const {
    auto p = dir_ / rel;
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary)
        .write(reinterpret_cast<const char*>(bytes.data()),
               static_cast<std::streamsize>(bytes.size()));
  }
  void mkdir(const std::string& rel) const {
    std::filesystem::create_directories(dir_ / rel);
  }
  // A small x86_64 (or other) shared object / executable image.
  void elf(const std::string& rel, elf::testing::ElfSpec spec,
           bool is_64 = true, bool is_le = true) const {
    write_bytes(rel, elf::testing::build_elf(is_64, is_le, spec));
  }

 private:
  std::filesystem::path dir_;
};

}  // namespace libpkg::deps::testing
