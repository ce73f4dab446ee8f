// SPDX-License-Identifier: BSD-3-Clause
// The load-command editor on in-memory images: install_name_tool's
// operations, order, duplicates, the padding preflight and no-op edits.
#include "libpkg/macho/editor.hpp"

#include <gtest/gtest.h>

#include "macho_builder.hpp"

namespace macho_test {
namespace {

// Applies a plan's overlay to a copy of the image.
std::vector<u8> apply_plan(const std::vector<u8>& img, const EditPlan& plan) {
  std::vector<u8> out;
  plan.overlay.for_each_chunk(img, [&](std::span<const u8> c) {
    out.insert(out.end(), c.begin(), c.end());
  });
  return out;
}

struct Edited {
  std::vector<u8> bytes;
  EditPlan plan;
};

Edited edit(const std::vector<u8>& img, const EditOptions& o) {
  auto f = MachOFile::parse(ByteView(img, "lib.dylib"));
  auto plan = plan_edit(f, o);
  auto out = apply_plan(img, plan);
  return {std::move(out), std::move(plan)};
}

// The images built here are not signable (no __LINKEDIT; the fat test's
// signature is zeros): the editor's model is tested without signing, and
// signing on edit on real lld-linked files (tests/macho/edit_sign.sh).
EditOptions no_sign() {
  EditOptions o;
  o.sign = false;
  return o;
}

Builder typical() {
  Builder b;
  b.id("@rpath/liba.dylib")
      .dylib("/opt/x/libb.dylib")
      .dylib("@rpath/libw.dylib", kLcLoadWeakDylib)
      .dylib("/opt/x/libb.dylib", kLcReexportDylib)
      .rpath("/build/lib")
      .rpath("/opt/x");
  return b;
}

TEST(MachoEditor, IdChangeAndRpathsKeepOrder) {
  auto img = typical().build();
  EditOptions o = no_sign();
  o.id = "@rpath/libnew.dylib";
  o.changes = {{"/opt/x/libb.dylib", "@rpath/libb.dylib"}};
  o.rename_rpaths = {{"/opt/x", "@loader_path/../lib"}};
  o.delete_rpaths = {"/build/lib"};
  o.add_rpaths = {"@loader_path"};
  auto e = edit(img, o);
  auto f = MachOFile::parse(ByteView(e.bytes, "out"));
  const auto& s = f.slices()[0];
  EXPECT_EQ(s.id().value(), "@rpath/libnew.dylib");
  auto d = s.dylibs();
  ASSERT_EQ(d.size(), 3u);
  EXPECT_EQ(d[0].name, "@rpath/libb.dylib");
  EXPECT_EQ(d[1].name, "@rpath/libw.dylib");
  EXPECT_EQ(d[1].kind, DylibKind::weak);
  EXPECT_EQ(d[2].name, "@rpath/libb.dylib");
  EXPECT_EQ(d[2].kind, DylibKind::reexport);
  auto r = s.rpaths();
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].path, "@loader_path/../lib");
  EXPECT_EQ(r[1].path, "@loader_path");
  // Sections never move.
  EXPECT_EQ(s.first_content_offset(), 0x400u);
  EXPECT_EQ(std::memcmp(e.bytes.data() + 0x400, img.data() + 0x400,
                        img.size() - 0x400),
            0);
  ASSERT_EQ(e.plan.slices.size(), 1u);
  EXPECT_TRUE(e.plan.slices[0].changed);
  ASSERT_EQ(e.plan.slices[0].changed_ranges.size(), 1u);
  EXPECT_LT(e.plan.slices[0].changed_ranges[0].offset +
                e.plan.slices[0].changed_ranges[0].size,
            0x400u);
}

TEST(MachoEditor, PrependAndDeleteAll) {
  auto img = typical().build();
  EditOptions o = no_sign();
  o.delete_all_rpaths = true;
  o.prepend_rpaths = {"/p1", "/p2"};
  auto e = edit(img, o);
  auto f = MachOFile::parse(ByteView(e.bytes, "out"));
  const auto& s = f.slices()[0];
  auto r = s.rpaths();
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].path, "/p2");
  EXPECT_EQ(r[0].command_index, 0u);
  EXPECT_EQ(r[1].path, "/p1");
}

TEST(MachoEditor, NoDuplicateRpathAndMissingOnes) {
  auto img = typical().build();
  auto f = MachOFile::parse(ByteView(img, "lib.dylib"));
  EditOptions add;
  add.add_rpaths = {"/opt/x"};
  EXPECT_THROW(plan_edit(f, add), Error);
  EditOptions ren;
  ren.rename_rpaths = {{"/build/lib", "/opt/x"}};
  EXPECT_THROW(plan_edit(f, ren), Error);
  EditOptions del;
  del.delete_rpaths = {"/nope"};
  try {
    plan_edit(f, del);
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(),
                 "lib.dylib (arm64): no LC_RPATH load command with path: "
                 "/nope");
  }
  EditOptions twice;
  twice.add_rpaths = {"/a", "/a"};
  EXPECT_THROW(plan_edit(f, twice), Error);
}

TEST(MachoEditor, PaddingPreflightNamesNeededAndFree) {
  Builder b = typical();
  b.text_offset = 0x1b8;  // load commands end at 0x1a8 (16 bytes free)
  auto img = b.build();
  auto f = MachOFile::parse(ByteView(img, "lib.dylib"));
  ASSERT_EQ(f.slices()[0].free_padding(), 0x10u);
  EditOptions o = no_sign();
  o.add_rpaths = {"@loader_path/../../some/longer/path"};
  try {
    plan_edit(f, o);
    FAIL();
  } catch (const Error& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("lib.dylib (arm64): the edited load commands need"),
              std::string::npos)
        << msg;
    EXPECT_NE(msg.find("0x30 more"), std::string::npos) << msg;
    EXPECT_NE(msg.find("only 0x10 bytes of header padding are free"),
              std::string::npos)
        << msg;
  }
  // A short one fits exactly in the 16 bytes.
  o.add_rpaths = {"/a"};
  EXPECT_NO_THROW(plan_edit(f, o));
}

TEST(MachoEditor, NoOpIsIdentity) {
  auto img = typical().build();
  EditOptions o = no_sign();
  o.changes = {{"/not/there.dylib", "/x"}};
  o.rename_rpaths = {{"/opt/x", "/opt/x"}};
  o.id = "@rpath/liba.dylib";
  auto e = edit(img, o);
  EXPECT_FALSE(e.plan.changed());
  EXPECT_TRUE(e.plan.overlay.is_identity(img));
  EXPECT_EQ(e.bytes, img);
}

TEST(MachoEditor, ShrinkingZeroesStaleBytes) {
  auto img = typical().build();
  EditOptions o = no_sign();
  o.delete_all_rpaths = true;
  auto e = edit(img, o);
  auto f = MachOFile::parse(ByteView(e.bytes, "out"));
  const auto& s = f.slices()[0];
  EXPECT_TRUE(s.rpaths().empty());
  for (u64 i = s.load_commands_end(); i < 0x400; ++i)
    ASSERT_EQ(e.bytes[i], 0) << i;
}

TEST(MachoEditor, FatPerArchAndSignatureReport) {
  Builder arm = typical();
  arm.code_signature(0xf00, 0x100);
  Builder x86 = typical();
  x86.cputype = kCpuTypeX86_64;
  auto img = fat({{x86.build(), kCpuTypeX86_64, 0x1000},
                  {arm.build(), kCpuTypeArm64, 0x2000}});
  EditOptions o = no_sign();
  o.add_rpaths = {"@loader_path"};
  o.archs = {"arm64"};
  auto e = edit(img, o);
  ASSERT_EQ(e.plan.slices.size(), 2u);
  EXPECT_FALSE(e.plan.slices[0].edited);
  EXPECT_FALSE(e.plan.slices[0].changed);
  EXPECT_TRUE(e.plan.slices[1].changed);
  ASSERT_TRUE(e.plan.slices[1].code_signature);
  EXPECT_EQ(e.plan.slices[1].code_signature->dataoff, 0xf00u);
  // Changed ranges are file offsets inside the arm64 slice.
  for (const auto& r : e.plan.slices[1].changed_ranges) {
    EXPECT_GE(r.offset, 0x2000u);
    EXPECT_LT(r.offset + r.size, 0x2400u);
  }
  auto f = MachOFile::parse(ByteView(e.bytes, "out"));
  EXPECT_EQ(f.slices()[0].rpaths().size(), 2u);
  EXPECT_EQ(f.slices()[1].rpaths().size(), 3u);
  // x86_64 bytes untouched.
  EXPECT_EQ(std::memcmp(e.bytes.data(), img.data(), 0x2000), 0);

  EditOptions bad;
  bad.archs = {"ppc"};
  bad.add_rpaths = {"/x"};
  auto fin = MachOFile::parse(ByteView(img, "lib.dylib"));
  EXPECT_THROW(plan_edit(fin, bad), Error);
}

TEST(MachoEditor, OnlyThirtyTwoBitSlicesIsRefused) {
  std::vector<u8> i386(0x100, 0);
  auto* h = reinterpret_cast<MachHeader*>(i386.data());
  h->magic = kMhMagic;
  h->cputype = kCpuTypeX86;
  auto f = MachOFile::parse(ByteView(i386, "old.dylib"));
  EditOptions o = no_sign();
  o.add_rpaths = {"/x"};
  try {
    plan_edit(f, o);
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(),
                 "old.dylib: no 64-bit little-endian slice to edit (32-bit "
                 "and PowerPC slices are listed, not edited)");
  }
  // With nothing asked, there is nothing to refuse.
  EXPECT_FALSE(plan_edit(f, EditOptions{}).changed());
}

}  // namespace
}  // namespace macho_test
