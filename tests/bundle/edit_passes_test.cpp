// SPDX-License-Identifier: BSD-3-Clause
// A repair reads the members it edits sequentially (docs/archives.md,
// "Trust"), and a member view keeps only the ranges asked for: a read behind
// the inflater's position starts from the last resume point before it. The
// editor reads the section headers and their names, which GNU ld puts
// behind .dynamic, behind all the code. The analysis keeps that tail in its
// one pass, so planning the edit over the analysis' view decodes nothing
// more (it decoded the member twice more before), and that pass, from the
// start to the end, gives the member's SHA-256 for the RECORD check.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "../base/temp_dir.hpp"
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

// A wheel holding bigpkg/libbig.so: 24 MiB of .rodata (three 8 MiB chunks)
// puts .dynamic, the section headers and their names far into the member;
// `symbols` exported functions with long (C++-like) names make .dynstr
// large (in front of the code) and, unstripped, .symtab and .strtab (behind
// .dynamic).
struct BigWheel {
  // Owns the directory: removed even when an assertion ends the test early.
  std::unique_ptr<libpkg::testing::TempDir> tmp;
  fs::path dir, lib, wheel;
};

BigWheel big_wheel(int symbols) {
  BigWheel w;
  w.tmp = std::make_unique<libpkg::testing::TempDir>();
  w.dir = w.tmp->path();
  std::string blob(24u << 20, '\0');
  for (std::size_t i = 0; i < blob.size(); ++i)
    blob[i] = static_cast<char>((i * 2654435761u) >> 24 & 0x0f);
  write(w.dir / "blob.bin", blob);
  write(w.dir / "big.c",
        "__asm__(\".section .rodata.blob,\\\"a\\\"\\n.incbin \\\"" +
            (w.dir / "blob.bin").string() +
            "\\\"\\n.text\\n\");\nint big_value(void) { return 41; }\n");
  std::string asm_text = ".text\n";
  for (int i = 0; i < symbols; ++i) {
    const std::string name = "_ZN2at6native" +
                             std::string(120, static_cast<char>('a' + i % 26)) +
                             std::to_string(i) + "ERKNS_6TensorE";
    asm_text += ".globl " + name + "\n.type " + name + ",@function\n" + name +
                ":\nret\n";
  }
  write(w.dir / "syms.s", asm_text);
  const fs::path tree = w.dir / "tree";
  w.lib = tree / "bigpkg/libbig.so";
  fs::create_directories(w.lib.parent_path());
  const std::string cc =
      "cc -shared -fPIC -Wl,-soname,libbig.so "
      "-Wl,--enable-new-dtags,-rpath,/nonexistent/build -o " +
      w.lib.string() + " " + (w.dir / "big.c").string() +
      (symbols > 0 ? " " + (w.dir / "syms.s").string() : "");
  if (std::system(cc.c_str()) != 0) throw std::runtime_error(cc);
  write(tree / "bigpkg-1.0.dist-info/METADATA",
        "Metadata-Version: 2.1\nName: bigpkg\nVersion: 1.0\n");
  write(tree / "bigpkg-1.0.dist-info/WHEEL",
        "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: false\n"
        "Tag: py3-none-linux_x86_64\n");
  w.wheel = wheel::pack(tree, w.dir / "dist").path;
  return w;
}

bundle::WheelAnalysis analyze(const BigWheel& w) {
  bundle::AnalyzeOptions options;
  options.scratch_parent = w.dir;
  options.libc = deps::Libc::glibc;  // libbig needs nothing from libc
  return bundle::analyze_wheel(w.wheel, options);
}

elf::EditPlan plan_rpath(const bundle::PackageBinary& b) {
  elf::EditOptions edit;
  edit.rpath_op = elf::RpathOp::set;
  edit.rpath = "$ORIGIN";
  return elf::plan_edit(elf::ElfFile(b.view->view(b.file.string()), b.view),
                        edit);
}

// `a` found libbig.so alone, and its view's pass from the start to the end
// gave the member's SHA-256 (the RECORD check takes it instead of a pass of
// its own).
void expect_libbig_hashed(const bundle::WheelAnalysis& a, const BigWheel& w) {
  ASSERT_EQ(a.binaries.size(), 1u);
  ASSERT_TRUE(a.binaries[0].view);
  const std::optional<std::array<u8, 32>> digest = a.binaries[0].view->digest();
  ASSERT_TRUE(digest.has_value());
  EXPECT_EQ(*digest, Sha256::of_file(w.lib));
}

TEST(EditPasses, PlanningTheEditDecodesTheMemberNoFurther) {
  const BigWheel w = big_wheel(0);
  const bundle::WheelAnalysis a = analyze(w);
  ASSERT_NO_FATAL_FAILURE(expect_libbig_hashed(a, w));
  const bundle::PackageBinary& b = a.binaries[0];
  // One pass from the start to the end, no more.
  const u64 after_analysis = b.view->decoded();
  EXPECT_EQ(after_analysis, fs::file_size(w.lib));

  const elf::EditPlan plan = plan_rpath(b);
  EXPECT_FALSE(plan.overlay.patches().empty());
  EXPECT_EQ(b.view->decoded(), after_analysis);
}

// The tables the analysis and the editor read that the one pass could not
// keep (a .dynstr of 15 MB in front, the section names behind an unstripped
// 18 MB .symtab/.strtab) are read behind the inflater: each such read
// decodes from the last resume point before it (every 8 MiB), not from the
// member's start (which decoded this library three times more).
TEST(EditPasses, TablesReadBehindThePassCostAtMostAResumeStepEach) {
  const BigWheel w = big_wheel(110000);
  const bundle::WheelAnalysis a = analyze(w);
  ASSERT_NO_FATAL_FAILURE(expect_libbig_hashed(a, w));
  const bundle::PackageBinary& b = a.binaries[0];
  const u64 size = fs::file_size(w.lib);
  const elf::EditPlan plan = plan_rpath(b);
  EXPECT_FALSE(plan.overlay.patches().empty());
  // One pass, what is kept (decoded once more when read behind the pass)
  // and up to 8 MiB before each of the few ranges read behind it (the
  // section headers, their names, .dynstr), where starting over decoded
  // the member three times more.
  EXPECT_LE(b.view->decoded(), size + b.view->inflated() + (24u << 20))
      << "inflated " << b.view->inflated();
}

}  // namespace
