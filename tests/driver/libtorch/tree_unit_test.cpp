// SPDX-License-Identifier: BSD-3-Clause
// Unit tests of the pieces under the libtorch driver that need no compiler:
// stage_tree (hard links, symlinks, skipped entries), the debuglink CRC
// (the check value of CRC-32/ISO-HDLC), and plan_tree_bundle's input
// validation.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>

#include "libpkg/base/error.hpp"
#include "libpkg/base/scratch_dir.hpp"
#include "libpkg/bundle/tree.hpp"
#include "libpkg/cppdist/debug_split.hpp"

namespace fs = std::filesystem;
using namespace libpkg;

namespace {

void write(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << text;
}

struct stat stat_of(const fs::path& p) {
  struct stat st {};
  EXPECT_EQ(::lstat(p.c_str(), &st), 0) << p;
  return st;
}

}  // namespace

TEST(StageTree, HardLinksFilesCopiesSymlinksSkipsEntries) {
  ScratchDir dir = ScratchDir::in_temp();
  const fs::path in = dir.path() / "in", out = dir.path() / "out";
  write(in / "lib/libx.so.1.0", "x");
  fs::create_symlink("libx.so.1.0", in / "lib/libx.so.1");
  write(in / "include/x.h", "h");
  write(in / "python/x/__init__.py", "");
  bundle::stage_tree(in, out, {"python"});

  EXPECT_EQ(stat_of(out / "lib/libx.so.1.0").st_ino,
            stat_of(in / "lib/libx.so.1.0").st_ino);
  EXPECT_TRUE(fs::is_symlink(out / "lib/libx.so.1"));
  EXPECT_EQ(fs::read_symlink(out / "lib/libx.so.1"), "libx.so.1.0");
  EXPECT_TRUE(fs::exists(out / "include/x.h"));
  EXPECT_FALSE(fs::exists(out / "python"));

  // Only: a wheel's package directory contributes just the layout.
  const fs::path only = dir.path() / "only";
  bundle::stage_tree(in, only, {}, {"lib"});
  EXPECT_TRUE(fs::exists(only / "lib/libx.so.1.0"));
  EXPECT_FALSE(fs::exists(only / "include"));
}

TEST(StageTree, RefusesNonEmptyStaging) {
  ScratchDir dir = ScratchDir::in_temp();
  write(dir.path() / "in/lib/a", "a");
  write(dir.path() / "out/junk", "j");
  EXPECT_THROW(bundle::stage_tree(dir.path() / "in", dir.path() / "out"),
               Error);
}

TEST(DebugSplit, Crc32IsTheDebuglinkCrc) {
  ScratchDir dir = ScratchDir::in_temp();
  write(dir.path() / "check", "123456789");
  // The standard check value of CRC-32/ISO-HDLC (zlib, gdb's debuglink).
  EXPECT_EQ(cppdist::file_crc32(dir.path() / "check"), 0xCBF43926u);
  write(dir.path() / "empty", "");
  EXPECT_EQ(cppdist::file_crc32(dir.path() / "empty"), 0u);
}

TEST(DebugSplit, NoMatchingLibraryIsNotFound) {
  ScratchDir dir = ScratchDir::in_temp();
  write(dir.path() / "lib/libother.so", "x");
  try {
    cppdist::split_debug_info(dir.path() / "lib", dir.path() / "debug");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::not_found);
    EXPECT_NE(e.message().find("libtorch_cpu.so"), std::string::npos);
  }
}

TEST(TreeBundle, TreeWithoutLibIsUsage) {
  ScratchDir dir = ScratchDir::in_temp();
  write(dir.path() / "include/x.h", "h");
  try {
    bundle::plan_tree_bundle(dir.path());
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::usage);
  }
}

TEST(TreeBundle, EmptyLibPlansNothing) {
  ScratchDir dir = ScratchDir::in_temp();
  fs::create_directories(dir.path() / "lib");
  write(dir.path() / "lib/readme.txt", "not an ELF file");
  bundle::TreeBundlePlan plan = bundle::plan_tree_bundle(dir.path());
  EXPECT_EQ(plan.elf_files, 0u);
  EXPECT_TRUE(plan.grafts.empty());
  EXPECT_TRUE(plan.edits.empty());
}

TEST(TreeBundle, MissingRequestedLibraryIsNotFoundUnlessOptional) {
  ScratchDir dir = ScratchDir::in_temp();
  fs::create_directories(dir.path() / "lib");
  bundle::TreeBundleOptions o;
  o.include.push_back({"libdefinitely-not-here.so.7", "test", false, true});
  EXPECT_NO_THROW(bundle::plan_tree_bundle(dir.path(), o));
  o.include.back().optional = false;
  try {
    bundle::plan_tree_bundle(dir.path(), o);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::not_found);
  }
}
