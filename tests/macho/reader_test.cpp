// SPDX-License-Identifier: BSD-3-Clause
// The Mach-O reader on in-memory images: facts read back, and every bounds
// problem reported with the file, the slice's arch, the structure and both
// values.
#include <gtest/gtest.h>

#include "libpkg/macho/view.hpp"
#include "macho_builder.hpp"

namespace macho_test {
namespace {

MachOFile parse(const std::vector<u8>& img) {
  return MachOFile::parse(ByteView(img, "lib.dylib"));
}

std::string error_of(const std::vector<u8>& img) {
  try {
    const auto f = parse(img);
    for (const auto& s : f.slices())
      if (s.parsed()) (void)s.free_padding();
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

Builder typical() {
  Builder b;
  b.id("@rpath/liba.dylib")
      .dylib("/usr/lib/libSystem.B.dylib")
      .dylib("@rpath/libw.dylib", kLcLoadWeakDylib)
      .dylib("@rpath/libr.dylib", kLcReexportDylib)
      .dylib("@rpath/libu.dylib", kLcLoadUpwardDylib)
      .rpath("@loader_path")
      .rpath("/opt/x");
  return b;
}

TEST(MachoReader, ReadsThinSlice) {
  auto img = typical().build();
  auto f = parse(img);
  ASSERT_EQ(f.slices().size(), 1u);
  const auto& s = f.slices()[0];
  EXPECT_FALSE(f.is_fat());
  EXPECT_EQ(s.arch(), "arm64");
  EXPECT_EQ(s.where(), "lib.dylib (arm64)");
  EXPECT_EQ(filetype_name(s.filetype()), "dylib");
  EXPECT_EQ(s.id().value(), "@rpath/liba.dylib");
  auto d = s.dylibs();
  ASSERT_EQ(d.size(), 4u);
  EXPECT_EQ(d[1].name, "@rpath/libw.dylib");
  EXPECT_EQ(d[1].kind, DylibKind::weak);
  EXPECT_EQ(d[2].kind, DylibKind::reexport);
  EXPECT_EQ(d[3].kind, DylibKind::upward);
  EXPECT_EQ(d[3].ordinal, 4u);
  auto r = s.rpaths();
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[1].path, "/opt/x");
  EXPECT_EQ(s.first_content_offset(), 0x400u);
  EXPECT_EQ(s.free_padding(), 0x400u - s.load_commands_end());
  EXPECT_FALSE(s.code_signature());
  EXPECT_EQ(s.fixup_format(), FixupFormat::none);
}

TEST(MachoReader, FatSlicesAndThirtyTwoBitListed) {
  Builder arm = typical();
  Builder x86 = typical();
  x86.cputype = kCpuTypeX86_64;
  std::vector<u8> i386(0x100, 0);
  auto* h = reinterpret_cast<MachHeader*>(i386.data());
  h->magic = kMhMagic;
  h->cputype = kCpuTypeX86;
  for (bool wide : {false, true}) {
    auto img = fat({{x86.build(), kCpuTypeX86_64, 0x1000},
                    {arm.build(), kCpuTypeArm64, 0x2000},
                    {i386, kCpuTypeX86, 0x3000}},
                   wide);
    auto f = parse(img);
    ASSERT_EQ(f.slices().size(), 3u);
    EXPECT_TRUE(f.is_fat());
    EXPECT_EQ(f.slices()[1].arch(), "arm64");
    EXPECT_EQ(f.slices()[1].offset(), 0x2000u);
    EXPECT_EQ(f.slices()[1].rpaths().size(), 2u);
    EXPECT_EQ(f.slices()[2].arch(), "i386");
    EXPECT_FALSE(f.slices()[2].parsed());
    EXPECT_THROW(f.slices()[2].commands(), Error);
  }
}

TEST(MachoReader, NotMachOAndTruncated) {
  std::vector<u8> elf = {0x7f, 'E', 'L', 'F', 2, 1, 1, 0};
  EXPECT_NE(error_of(elf).find("lib.dylib: not a Mach-O file"),
            std::string::npos);
  EXPECT_NE(error_of({0xcf, 0xfa}).find("truncated"), std::string::npos);
  auto img = typical().build();
  img.resize(20);
  EXPECT_NE(error_of(img).find("lib.dylib (arm64): truncated: mach header"),
            std::string::npos)
      << error_of(img);
}

TEST(MachoReader, SizeofcmdsPastSlice) {
  auto img = typical().build();
  reinterpret_cast<MachHeader64*>(img.data())->sizeofcmds = 0x2000;
  EXPECT_NE(error_of(img).find("lib.dylib (arm64): sizeofcmds 0x2000 past "
                               "the end of the slice"),
            std::string::npos)
      << error_of(img);
}

TEST(MachoReader, CmdsizePastSizeofcmds) {
  auto img = typical().build();
  auto* h = reinterpret_cast<MachHeader64*>(img.data());
  size_t last = command_offset(img, h->ncmds - 1);
  reinterpret_cast<LoadCommand*>(img.data() + last)->cmdsize = 0x100;
  EXPECT_NE(error_of(img).find("load command 7 (LC_RPATH): cmdsize 0x100 "
                               "extends past sizeofcmds"),
            std::string::npos)
      << error_of(img);
}

TEST(MachoReader, StringOffsetPastCmdsize) {
  auto img = typical().build();
  size_t at = command_offset(img, 6);
  reinterpret_cast<RpathCommand*>(img.data() + at)->path = 0x40;
  EXPECT_NE(error_of(img).find("lib.dylib (arm64): load command 6 "
                               "(LC_RPATH): path offset 0x40 past cmdsize "
                               "0x20"),
            std::string::npos)
      << error_of(img);
  // Not NUL-terminated inside the command.
  img = typical().build();
  at = command_offset(img, 1);
  auto* d = reinterpret_cast<DylibCommand*>(img.data() + at);
  std::memset(img.data() + at + 24, 'x', d->cmdsize - 24);
  EXPECT_NE(error_of(img).find("load command 1 (LC_ID_DYLIB): name at offset "
                               "0x18 is not NUL-terminated"),
            std::string::npos)
      << error_of(img);
}

TEST(MachoReader, NcmdsTooLargeAndSectionPastEnd) {
  auto img = typical().build();
  reinterpret_cast<MachHeader64*>(img.data())->ncmds = 0x10000000;
  EXPECT_NE(error_of(img).find("ncmds 268435456 cannot fit"),
            std::string::npos);
  img = typical().build();
  auto* sec =
      reinterpret_cast<Section64*>(img.data() + 32 + sizeof(SegmentCommand64));
  sec->offset = 0xfff8;
  EXPECT_NE(error_of(img).find("load command 0 (LC_SEGMENT_64): section "
                               "__text file range 0xfff8+0x10 past the end"),
            std::string::npos)
      << error_of(img);
}

TEST(MachoReader, LinkeditRangePastEnd) {
  auto b = typical();
  b.code_signature(0xf00, 0x200);
  auto img = b.build();
  EXPECT_NE(error_of(img).find("(LC_CODE_SIGNATURE): data 0xf00+0x200 past "
                               "the end of the slice (0x1000)"),
            std::string::npos)
      << error_of(img);
}

TEST(MachoReader, FatErrors) {
  auto arm = typical().build();
  auto x86b = typical();
  x86b.cputype = kCpuTypeX86_64;
  auto x86 = x86b.build();
  // Overlapping slices.
  auto img = fat({{x86, kCpuTypeX86_64, 0x1000}, {arm, kCpuTypeArm64, 0x1800}});
  EXPECT_NE(error_of(img).find("lib.dylib (arm64): fat slice at 0x1800 "
                               "overlaps the x86_64 slice 0x1000+0x1000"),
            std::string::npos)
      << error_of(img);
  // A slice past the end of the file.
  img = fat({{arm, kCpuTypeArm64, 0x1000}});
  img.resize(0x1800);
  EXPECT_NE(error_of(img).find("lib.dylib (arm64): fat_arch 0: slice "
                               "0x1000+0x1000 past the end of the file"),
            std::string::npos)
      << error_of(img);
  // nfat_arch larger than the file.
  img = fat({{arm, kCpuTypeArm64, 0x1000}});
  reinterpret_cast<FatHeader*>(img.data())->nfat_arch = 0x10000000;
  EXPECT_NE(error_of(img).find("fat header: 268435456 architectures"),
            std::string::npos);
}

}  // namespace
}  // namespace macho_test
