// SPDX-License-Identifier: BSD-3-Clause
// sniff_elf / sniff_elf_file: the one "is this ELF?" probe. Not ELF is an
// answer; a file that cannot be read is an error, never "not ELF".
#include "libpkg/elf/sniff.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cerrno>
#include <filesystem>
#include <string>
#include <vector>

#include "../base/temp_dir.hpp"
#include "../base/unprivileged.hpp"
#include "libpkg/base/error.hpp"

namespace libpkg::elf {
namespace {

using libpkg::testing::TempDir;
using libpkg::testing::write_file;

std::vector<u8> header(u8 cls, u8 data, u16 type, u16 machine) {
  std::vector<u8> h(20, 0);
  h[0] = 0x7f, h[1] = 'E', h[2] = 'L', h[3] = 'F';
  h[4] = cls, h[5] = data, h[6] = 1;
  const bool le = data == 1;
  auto put = [&](std::size_t at, u16 v) {
    h[at + (le ? 0 : 1)] = static_cast<u8>(v & 0xff);
    h[at + (le ? 1 : 0)] = static_cast<u8>(v >> 8);
  };
  put(16, type);
  put(18, machine);
  return h;
}

TEST(Sniff, DecodesBothByteOrders) {
  auto le = sniff_elf(header(2, 1, 3, 62));  // ELF64 LE ET_DYN x86-64
  ASSERT_TRUE(le && le->complete);
  EXPECT_TRUE(le->is_64 && le->is_le);
  EXPECT_EQ(le->type, 3);
  EXPECT_EQ(le->machine, 62);
  auto be = sniff_elf(header(1, 2, 2, 22));  // ELF32 BE ET_EXEC s390
  ASSERT_TRUE(be && be->complete);
  EXPECT_FALSE(be->is_64 || be->is_le);
  EXPECT_EQ(be->type, 2);
  EXPECT_EQ(be->machine, 22);
}

TEST(Sniff, MagicAloneIsElfButIncomplete) {
  std::vector<u8> magic = {0x7f, 'E', 'L', 'F'};
  auto id = sniff_elf(magic);
  ASSERT_TRUE(id);  // the parser, not the probe, says what is wrong
  EXPECT_FALSE(id->complete);
  auto bad_class = sniff_elf(header(9, 1, 3, 62));
  ASSERT_TRUE(bad_class);
  EXPECT_FALSE(bad_class->complete);
  EXPECT_FALSE(sniff_elf(std::vector<u8>{'#', '!', '/', 'b'}));
  EXPECT_FALSE(sniff_elf(std::vector<u8>{0x7f, 'E'}));
}

TEST(Sniff, FilesShortOtherAndFifo) {
  TempDir dir;
  write_file(dir / "script", "#!/bin/sh\n");
  write_file(dir / "empty", "");
  EXPECT_FALSE(sniff_elf_file(dir / "script"));
  EXPECT_FALSE(sniff_elf_file(dir / "empty"));
  ASSERT_EQ(::mkfifo((dir / "fifo.so").c_str(), 0600), 0);
  Result<std::optional<ElfIdent>> r = try_sniff_elf_file(dir / "fifo.so");
  ASSERT_FALSE(r);  // refused at once, not blocked on
  EXPECT_NE(r.error().message().find("a FIFO"), std::string::npos);
}

TEST(Sniff, UnreadableFileIsAnErrorNotNotElf) {
  TempDir dir;
  std::filesystem::permissions(dir.path(), std::filesystem::perms(0755));
  const std::vector<u8> h = header(2, 1, 3, 62);
  write_file(dir / "lib.so", std::string(h.begin(), h.end()), 0000);
  EXPECT_EQ(
      libpkg::testing::run_unprivileged([&]() -> std::string {
        Result<std::optional<ElfIdent>> r = try_sniff_elf_file(dir / "lib.so");
        if (r) return "an unreadable file was answered, not reported";
        if (r.error().code() != Errc::io || r.error().sys_errno() != EACCES)
          return std::string("wrong error: ") + r.error().what();
        try {
          sniff_elf_file(dir / "lib.so");
          return "sniff_elf_file did not throw";
        } catch (const Error& e) {
          if (e.code() != Errc::io) return "not io";
        }
        return "";
      }),
      "");
  // Root (or its owner with read permission) sees the ELF header.
  std::filesystem::permissions(dir / "lib.so", std::filesystem::perms(0644));
  auto id = sniff_elf_file(dir / "lib.so");
  ASSERT_TRUE(id && id->complete);
  EXPECT_EQ(id->machine, 62);
}

}  // namespace
}  // namespace libpkg::elf
