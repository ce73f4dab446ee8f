// SPDX-License-Identifier: BSD-3-Clause
// WHEEL and METADATA parsing and surgical rewriting.
#include "libpkg/wheel/metadata.hpp"

#include <gtest/gtest.h>

#include "libpkg/base/error.hpp"

using libpkg::Error;
using namespace libpkg::wheel;

namespace {

const char* kWheel =
    "Wheel-Version: 1.0\n"
    "Generator: bdist_wheel (0.38.4)\n"
    "Root-Is-Purelib: false\n"
    "X-Custom: keep me\n"
    "Tag: cp311-cp311-linux_x86_64\n"
    "Build: 3\n"
    "\n";

TEST(WheelFile, ParsesFields) {
  auto wf = WheelFile::parse(kWheel, "WHEEL");
  EXPECT_EQ(wf.wheel_version(), "1.0");
  EXPECT_EQ(wf.generator(), "bdist_wheel (0.38.4)");
  EXPECT_EQ(wf.root_is_purelib(), false);
  EXPECT_EQ(wf.build(), "3");
  ASSERT_EQ(wf.tags().size(), 1u);
  EXPECT_EQ(wf.tags()[0].str(), "cp311-cp311-linux_x86_64");
  EXPECT_EQ(wf.fields().get("x-custom"), "keep me");  // case-insensitive
}

TEST(WheelFile, RoundTripsUnchanged) {
  EXPECT_EQ(WheelFile::parse(kWheel, "WHEEL").format(), kWheel);
}

TEST(WheelFile, SetTagsKeepsOtherFieldsAndOrder) {
  auto wf = WheelFile::parse(kWheel, "WHEEL");
  wf.set_tags({{"cp311", "cp311", "manylinux2014_x86_64"},
               {"cp311", "cp311", "manylinux_2_17_x86_64"}});
  wf.set_build(std::nullopt);
  EXPECT_EQ(wf.format(),
            "Wheel-Version: 1.0\n"
            "Generator: bdist_wheel (0.38.4)\n"
            "Root-Is-Purelib: false\n"
            "X-Custom: keep me\n"
            "Tag: cp311-cp311-manylinux2014_x86_64\n"
            "Tag: cp311-cp311-manylinux_2_17_x86_64\n"
            "\n");
  EXPECT_EQ(wf.platform_tags(),
            (std::vector<std::string>{"manylinux2014_x86_64",
                                      "manylinux_2_17_x86_64"}));
  wf.set_build("7");
  EXPECT_NE(wf.format().find("Build: 7\n"), std::string::npos);
}

TEST(WheelFile, MakeWritesBdistWheelLayout) {
  auto wf = WheelFile::make("libpkg", true, {{"py3", "none", "any"}}, "1");
  EXPECT_EQ(wf.format(),
            "Wheel-Version: 1.0\nGenerator: libpkg\nRoot-Is-Purelib: true\n"
            "Build: 1\nTag: py3-none-any\n\n");
}

TEST(WheelFile, RejectsMalformed) {
  EXPECT_THROW(WheelFile::parse("no colon here\n", "WHEEL"), Error);
  EXPECT_THROW(WheelFile::parse("Tag: a-b\n", "WHEEL").tags(), Error);
  EXPECT_THROW(WheelFile::parse("Tag: a-b-c-d\n", "WHEEL").tags(), Error);
  EXPECT_THROW(WheelFile::parse("Tag: a--c\n", "WHEEL").tags(), Error);
}

const char* kMetadata =
    "Metadata-Version: 2.1\r\n"
    "Name: torchlike\r\n"
    "Version:   1.0.0+cu124\r\n"
    "Summary: a test\r\n"
    "Description-Content-Type: text/plain\r\n"
    "\r\n"
    "Version: 9.9 (this is the body, not a header)\r\n";

TEST(Metadata, ReadsNameAndVersion) {
  auto md = read_core_metadata(kMetadata, "METADATA");
  EXPECT_EQ(md.name, "torchlike");
  EXPECT_EQ(md.version, "1.0.0+cu124");
  EXPECT_THROW(read_core_metadata("Name: x\n\nVersion: 1\n", "M"), Error);
}

TEST(Metadata, RewritesOnlyTheVersionLine) {
  std::string out = rewrite_metadata_version(kMetadata, "1.0.0", "METADATA");
  EXPECT_EQ(out,
            "Metadata-Version: 2.1\r\n"
            "Name: torchlike\r\n"
            "Version: 1.0.0\r\n"
            "Summary: a test\r\n"
            "Description-Content-Type: text/plain\r\n"
            "\r\n"
            "Version: 9.9 (this is the body, not a header)\r\n");
  EXPECT_THROW(rewrite_metadata_version("Name: x\n", "1", "M"), Error);
}

TEST(HeaderFields, ContinuationLinesFold) {
  auto h = HeaderFields::parse("A: one\n  two\nB: x\n", "f");
  EXPECT_EQ(h.get("A"), "one\ntwo");
  EXPECT_EQ(h.format(), "A: one\n        two\nB: x\n\n");
  EXPECT_THROW(HeaderFields::parse("  lead\n", "f"), Error);
}

}  // namespace
