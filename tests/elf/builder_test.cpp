// SPDX-License-Identifier: BSD-3-Clause
// The image builder itself, checked against binutils' readelf (an
// independent reader) so that the other tests rest on well-formed fixtures.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "test_support.hpp"

namespace libpkg::elf::testing {
namespace {

std::string run(const std::string& command) {
  std::string out;
  FILE* p = ::popen(command.c_str(), "r");
  if (p == nullptr) return out;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), p)) > 0) out.append(buf, n);
  ::pclose(p);
  return out;
}

bool have_readelf() {
  return std::system("readelf --version >/dev/null 2>&1") == 0;
}

template <typename E>
class BuilderTest : public ::testing::Test {
 protected:
  std::string write(const std::vector<u8>& image) {
    path_ = std::filesystem::temp_directory_path() /
            ("libpkg-builder-" + std::to_string(::getpid()) + ".so");
    std::ofstream(path_, std::ios::binary)
        .write(reinterpret_cast<const char*>(image.data()),
               static_cast<std::streamsize>(image.size()));
    return path_.string();
  }
  void TearDown() override {
    if (!path_.empty()) std::filesystem::remove(path_);
  }
  std::filesystem::path path_;
};
TYPED_TEST_SUITE(BuilderTest, AllElfTypes, ElfTypeNames);

TYPED_TEST(BuilderTest, ReadelfAgrees) {
  if (!have_readelf()) GTEST_FAIL() << "readelf not installed (binutils)";
  Layout l;
  auto image = build_elf<TypeParam>(full_spec(), &l);
  std::string file = this->write(image);

  // readelf complains on stderr about anything it finds odd.
  std::string errors = run("readelf -a -W " + file + " 2>&1 >/dev/null");
  EXPECT_EQ(errors, "");

  std::string d = run("readelf -d -W " + file);
  EXPECT_NE(d.find("Shared library: [libm.so.6]"), std::string::npos) << d;
  EXPECT_NE(d.find("Shared library: [libc.so.6]"), std::string::npos) << d;
  EXPECT_NE(d.find("Library soname: [libdemo.so.1]"), std::string::npos) << d;
  EXPECT_NE(d.find("Library runpath: [$ORIGIN/../lib]"), std::string::npos)
      << d;

  std::string syms = run("readelf --dyn-syms -W " + file);
  EXPECT_NE(syms.find("printf@GLIBC_2.2.5"), std::string::npos) << syms;
  EXPECT_NE(syms.find("exp@GLIBC_2.29"), std::string::npos) << syms;
  EXPECT_NE(syms.find("demo_run@@DEMO_2.0"), std::string::npos) << syms;
  EXPECT_NE(syms.find("demo_old@DEMO_1.0"), std::string::npos) << syms;
  EXPECT_NE(syms.find("contains 10 entries"), std::string::npos) << syms;

  std::string notes = run("readelf -n -W " + file);
  EXPECT_NE(notes.find("deadbeef0123456789abcdef0011223344556677"),
            std::string::npos)
      << notes;
  EXPECT_NE(notes.find("x86 ISA needed: x86-64-baseline, x86-64-v2"),
            std::string::npos)
      << notes;

  std::string seg = run("readelf -l -W " + file);
  EXPECT_NE(
      seg.find("[Requesting program interpreter: /lib64/ld-linux-x86-64.so.2]"),
      std::string::npos)
      << seg;
}

TYPED_TEST(BuilderTest, ReadelfAgreesWithoutSectionHeaders) {
  if (!have_readelf()) GTEST_FAIL() << "readelf not installed (binutils)";
  ElfSpec spec = full_spec();
  spec.section_headers = false;
  std::string file = this->write(build_elf<TypeParam>(spec));
  std::string d = run("readelf -d -W " + file + " 2>&1");
  EXPECT_NE(d.find("Shared library: [libc.so.6]"), std::string::npos) << d;
  EXPECT_EQ(d.find("Warning"), std::string::npos) << d;
}

TEST(Builder, HashFunctions) {
  // Reference values from the gABI and the GNU hash description.
  EXPECT_EQ(sysv_hash(""), 0u);
  EXPECT_EQ(sysv_hash("printf"), 0x077905a6u);
  EXPECT_EQ(gnu_hash(""), 0x00001505u);
  EXPECT_EQ(gnu_hash("printf"), 0x156b2bb8u);
}

TEST(Builder, LayoutIsConsistent) {
  Layout l;
  auto image = build_elf<Elf64LE>(full_spec(), &l);
  EXPECT_EQ(image.size(), l.size);
  EXPECT_EQ(l.phoff, 64u);
  EXPECT_EQ(l.dynsym_count, 10u);
  EXPECT_GT(l.rw_offset, l.dynstr);
  EXPECT_EQ(l.vaddr(l.dynamic), Layout::kBase + Layout::kRwBias + l.dynamic);
  EXPECT_EQ(l.phdr_of(PT_LOAD, 1), l.phoff + 3 * sizeof(Phdr<Elf64LE>));
}

}  // namespace
}  // namespace libpkg::elf::testing
