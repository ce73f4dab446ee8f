// SPDX-License-Identifier: BSD-3-Clause
// A repair reads the members it edits sequentially (docs/archives.md,
// "Trust"), and a member view keeps only the ranges asked for: a read behind
// the inflater's position starts the member over. The editor reads the
// section headers and their names, which GNU ld puts behind .dynamic, behind
// all the code. The analysis keeps that tail in its one pass, so planning
// the edit over the analysis' view decodes nothing more (it decoded the
// member twice more before), and that pass, from the start to the end,
// gives the member's SHA-256 for the RECORD check.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "libpkg/base/sha256.hpp"
#include "libpkg/bundle/analyze.hpp"
#include "libpkg/elf/editor.hpp"
#include "libpkg/elf/view.hpp"
#include "libpkg/wheel/wheel.hpp"

namespace {

namespace fs = std::filesystem;
using namespace libpkg;

void write(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary | std::ios::trunc) << text;
}

TEST(EditPasses, PlanningTheEditDecodesTheMemberNoFurther) {
  std::string pattern = (fs::temp_directory_path() / "edit-passes-XXXXXX");
  ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
  const fs::path dir = pattern;
  // 24 MiB of .rodata (three 8 MiB chunks) puts .dynamic, the section
  // headers and their names far into the member.
  std::string blob(24u << 20, '\0');
  for (std::size_t i = 0; i < blob.size(); ++i)
    blob[i] = static_cast<char>((i * 2654435761u) >> 24 & 0x0f);
  write(dir / "blob.bin", blob);
  write(dir / "big.c",
        "__asm__(\".section .rodata.blob,\\\"a\\\"\\n.incbin \\\"" +
            (dir / "blob.bin").string() +
            "\\\"\\n.text\\n\");\nint big_value(void) { return 41; }\n");
  const fs::path tree = dir / "tree";
  const fs::path lib = tree / "bigpkg/libbig.so";
  fs::create_directories(lib.parent_path());
  const std::string cc =
      "cc -shared -fPIC -Wl,-soname,libbig.so "
      "-Wl,--enable-new-dtags,-rpath,/nonexistent/build -o " +
      lib.string() + " " + (dir / "big.c").string();
  ASSERT_EQ(std::system(cc.c_str()), 0) << cc;
  write(tree / "bigpkg-1.0.dist-info/METADATA",
        "Metadata-Version: 2.1\nName: bigpkg\nVersion: 1.0\n");
  write(tree / "bigpkg-1.0.dist-info/WHEEL",
        "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: false\n"
        "Tag: py3-none-linux_x86_64\n");
  const fs::path wheel = wheel::pack(tree, dir / "dist").path;

  bundle::AnalyzeOptions options;
  options.scratch_parent = dir;
  options.libc = deps::Libc::glibc;  // libbig needs nothing from libc
  const bundle::WheelAnalysis a = bundle::analyze_wheel(wheel, options);
  ASSERT_EQ(a.binaries.size(), 1u);
  const bundle::PackageBinary& b = a.binaries[0];
  ASSERT_TRUE(b.view);
  const u64 size = fs::file_size(lib);
  // One pass from the start to the end, no more: it also gives the
  // member's SHA-256, which the RECORD check takes instead of a second one.
  const u64 after_analysis = b.view->decoded();
  EXPECT_EQ(after_analysis, size);
  const std::optional<std::array<u8, 32>> digest = b.view->digest();
  ASSERT_TRUE(digest.has_value());
  EXPECT_EQ(*digest, Sha256::of_file(lib));

  elf::EditOptions edit;
  edit.rpath_op = elf::RpathOp::set;
  edit.rpath = "$ORIGIN";
  const elf::EditPlan plan =
      elf::plan_edit(elf::ElfFile(b.view->view(b.file.string()), b.view), edit);
  EXPECT_FALSE(plan.overlay.patches().empty());
  EXPECT_EQ(b.view->decoded(), after_analysis);
  fs::remove_all(dir);
}

}  // namespace
