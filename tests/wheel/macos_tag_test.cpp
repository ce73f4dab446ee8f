// SPDX-License-Identifier: BSD-3-Clause
// The macOS platform tag from per-slice minos values: a table of cases
// (delocate-wheel's results), the deployment target as floor and ceiling,
// and the file name / WHEEL Tag lines rewritten together.
#include "libpkg/wheel/macos_tag.hpp"

#include <gtest/gtest.h>

#include "libpkg/base/error.hpp"
#include "libpkg/wheel/metadata.hpp"

using libpkg::Errc;
using libpkg::Error;
namespace wh = libpkg::wheel;
using wh::MacosBinary;
using wh::MacosVersion;

namespace {

MacosVersion v(const char* text) { return MacosVersion::parse(text); }

struct TagCase {
  const char* what;
  std::vector<MacosBinary> binaries;
  const char* target;    // nullptr: none
  const char* expected;  // platform tags joined with '.'
};

std::string joined(const std::vector<std::string>& tags) {
  std::string out;
  for (const auto& t : tags) out += (out.empty() ? "" : ".") + t;
  return out;
}

const std::vector<TagCase>& tag_cases() {
  static const std::vector<TagCase> cases = {
      {"max minos per arch",
       {{"a.so", "x86_64", v("10.9")}, {"b.dylib", "x86_64", v("10.13")}},
       nullptr,
       "macosx_10_13_x86_64"},
      {"arm64 alone",
       {{"a.so", "arm64", v("11.0")}},
       nullptr,
       "macosx_11_0_arm64"},
      {"macOS >= 11 uses minor 0",
       {{"a.so", "arm64", v("13.4")}},
       nullptr,
       "macosx_13_0_arm64"},
      {"12.3 rounds down to 12_0 among others",
       {{"a.so", "arm64", v("12.3")}, {"b.so", "arm64", v("11.0")}},
       nullptr,
       "macosx_12_0_arm64"},
      {"arm64 never below 11.0",
       {{"a.so", "arm64", v("10.15")}},
       nullptr,
       "macosx_11_0_arm64"},
      {"arm64e counts as arm64",
       {{"a.so", "arm64e", v("12.0")}},
       nullptr,
       "macosx_12_0_arm64"},
      {"universal2: arm64 at 11.0, x86_64 older",
       {{"a.so", "x86_64", v("10.9")}, {"a.so", "arm64", v("11.0")}},
       nullptr,
       "macosx_10_9_universal2"},
      {"universal2: equal versions",
       {{"a.so", "x86_64", v("12.0")}, {"a.so", "arm64", v("12.0")}},
       nullptr,
       "macosx_12_0_universal2"},
      {"universal2: equal after minor 0",
       {{"a.so", "x86_64", v("12.1")}, {"a.so", "arm64", v("12.4")}},
       nullptr,
       "macosx_12_0_universal2"},
      {"universal2: arm64 11.0, x86_64 newer",
       {{"a.so", "x86_64", v("12.0")}, {"a.so", "arm64", v("11.0")}},
       nullptr,
       "macosx_12_0_universal2"},
      {"two tags: arm64 newer than 11.0 and different",
       {{"a.so", "x86_64", v("10.15")}, {"b.so", "arm64", v("12.0")}},
       nullptr,
       "macosx_10_15_x86_64.macosx_12_0_arm64"},
      {"target is a floor",
       {{"a.so", "x86_64", v("10.9")}},
       "10.15",
       "macosx_10_15_x86_64"},
      {"target floor and arm64 floor",
       {{"a.so", "x86_64", v("10.9")}, {"a.so", "arm64", v("11.0")}},
       "10.15",
       "macosx_10_15_universal2"},
      {"target 10.15 on arm64 gives 11.0",
       {{"a.so", "arm64", v("11.0")}},
       "10.15",
       "macosx_11_0_arm64"},
      {"target 12.0 floors arm64 too",
       {{"a.so", "arm64", v("11.0")}},
       "12.0",
       "macosx_12_0_arm64"},
      {"target 11.3 is tag 11_0, file 11.5 fits",
       {{"a.so", "arm64", v("11.5")}},
       "11.3",
       "macosx_11_0_arm64"},
      {"other archs get their own tag",
       {{"a.so", "i386", v("10.6")}, {"a.so", "x86_64", v("10.9")}},
       nullptr,
       "macosx_10_6_i386.macosx_10_9_x86_64"},
  };
  return cases;
}

TEST(MacosTag, TableOfCases) {
  for (const TagCase& c : tag_cases()) {
    SCOPED_TRACE(c.what);
    wh::MacosTagOptions options;
    if (c.target) options.target = v(c.target);
    auto result = wh::compute_macos_platform_tags(c.binaries, options, "w.whl");
    EXPECT_EQ(joined(result.platform_tags), c.expected);
  }
}

TEST(MacosTag, ArchVersionsAfterFloors) {
  auto result = wh::compute_macos_platform_tags(
      {{"a.so", "x86_64", v("10.9")}, {"a.so", "arm64", v("10.9")}},
      {.target = v("10.13")}, "w.whl");
  EXPECT_EQ(result.arch_versions.at("x86_64"), v("10.13"));
  EXPECT_EQ(result.arch_versions.at("arm64"), v("11.0"));
}

TEST(MacosTag, FilesAboveTargetAreListed) {
  try {
    wh::compute_macos_platform_tags({{"pkg/a.so", "x86_64", v("11.0")},
                                     {"pkg/b.so", "x86_64", v("10.9")},
                                     {"pkg/c.dylib", "arm64", v("12.1")}},
                                    {.target = v("10.15")}, "w.whl");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::format);
    EXPECT_EQ(e.file(), "w.whl");
    EXPECT_EQ(e.message(),
              "2 files need a newer macOS than the deployment target 10.15: "
              "pkg/a.so (x86_64 11.0), pkg/c.dylib (arm64 12.1)");
  }
}

TEST(MacosTag, Arm64At11UnderTarget1015IsNotTooNew) {
  // arm64's ceiling is max(target, 11.0): an 11.0 arm64 slice fits 10.15.
  EXPECT_NO_THROW(wh::compute_macos_platform_tags(
      {{"a.so", "arm64", v("11.0")}}, {.target = v("10.15")}, "w.whl"));
  EXPECT_NO_THROW(wh::compute_macos_platform_tags(
      {{"a.so", "arm64", v("11.0")}}, {.target = v("10.9")}, "w.whl"));
  EXPECT_THROW(wh::compute_macos_platform_tags({{"a.so", "arm64", v("12.0")}},
                                               {.target = v("10.15")}, "w.whl"),
               Error);
}

TEST(MacosTag, NoBinariesIsAnError) {
  EXPECT_THROW(wh::compute_macos_platform_tags({}, {}, "w.whl"), Error);
}

TEST(MacosVersion, Parse) {
  EXPECT_EQ(v("10.15"), (MacosVersion{10, 15}));
  EXPECT_EQ(v("13"), (MacosVersion{13, 0}));
  EXPECT_EQ(v("10.9.5"), (MacosVersion{10, 9}));
  EXPECT_EQ(v("11.3").tag_part(), "11_0");
  EXPECT_EQ(v("10.9").tag_part(), "10_9");
  for (const char* bad :
       {"", "x", "10.", ".9", "10.9.", "10_15", "0.1", "1.2.3.4"})
    EXPECT_THROW(MacosVersion::parse(bad, "--target"), Error) << bad;
}

TEST(MacosTag, NameAndWheelTagLinesAgree) {
  auto name =
      wh::WheelName::parse("torch-2.5.0-cp311-none-macosx_10_9_x86_64.whl");
  auto tagged = wh::with_platform_tags(
      name, {"macosx_12_0_arm64", "macosx_10_15_x86_64"});
  EXPECT_EQ(tagged.format(),
            "torch-2.5.0-cp311-none-macosx_10_15_x86_64.macosx_12_0_arm64.whl");
  const std::string wheel =
      "Wheel-Version: 1.0\nGenerator: bdist_wheel (0.43.0)\n"
      "Root-Is-Purelib: false\nTag: cp311-none-macosx_10_9_x86_64\n"
      "Build: 1\n";
  std::string out = wh::retag_wheel_text(wheel, tagged, "WHEEL");
  EXPECT_EQ(out,
            "Wheel-Version: 1.0\nGenerator: bdist_wheel (0.43.0)\n"
            "Root-Is-Purelib: false\n"
            "Tag: cp311-none-macosx_10_15_x86_64\n"
            "Tag: cp311-none-macosx_12_0_arm64\nBuild: 1\n\n");
  auto reparsed = wh::WheelFile::parse(out, "WHEEL");
  EXPECT_EQ(reparsed.tags(), tagged.tags());
  EXPECT_TRUE(wh::is_macos_platform_tag("macosx_11_0_arm64"));
  EXPECT_FALSE(wh::is_macos_platform_tag("manylinux_2_28_x86_64"));
}

}  // namespace
