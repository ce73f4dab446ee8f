// SPDX-License-Identifier: BSD-3-Clause
// Wheel file names: parse/format tables, escaping, local versions, rejects.
#include "libpkg/wheel/name.hpp"

#include <gtest/gtest.h>

#include "libpkg/base/error.hpp"

using libpkg::Errc;
using libpkg::Error;
using libpkg::wheel::WheelName;
using libpkg::wheel::WheelTag;
namespace wh = libpkg::wheel;

namespace {

struct NameCase {
  const char* file;
  const char* distribution;
  const char* version;
  const char* build;  // nullptr: none
  const char* python;
  const char* abi;
  const char* platform;
  const char* formatted;  // canonical format()
};

const NameCase kNames[] = {
    {"demo-1.0-py3-none-any.whl", "demo", "1.0", nullptr, "py3", "none", "any",
     "demo-1.0-py3-none-any.whl"},
    {"torch-2.5.0+cu124-cp311-cp311-linux_x86_64.whl", "torch", "2.5.0+cu124",
     nullptr, "cp311", "cp311", "linux_x86_64",
     "torch-2.5.0+cu124-cp311-cp311-linux_x86_64.whl"},
    // Compressed tag sets are sorted and deduplicated.
    {"six-1.16.0-py3.py2-none-any.whl", "six", "1.16.0", nullptr, "py2.py3",
     "none", "any", "six-1.16.0-py2.py3-none-any.whl"},
    {"x-1-cp39.cp310.cp39-abi3-manylinux_2_17_x86_64.manylinux2014_x86_64.whl",
     "x", "1", nullptr, "cp310.cp39", "abi3",
     "manylinux2014_x86_64.manylinux_2_17_x86_64",
     "x-1-cp310.cp39-abi3-manylinux2014_x86_64.manylinux_2_17_x86_64.whl"},
    // Build tags.
    {"pkg-1.0-1-py3-none-any.whl", "pkg", "1.0", "1", "py3", "none", "any",
     "pkg-1.0-1-py3-none-any.whl"},
    {"pkg-1.0-20240101abc-py3-none-any.whl", "pkg", "1.0", "20240101abc", "py3",
     "none", "any", "pkg-1.0-20240101abc-py3-none-any.whl"},
    // Legacy names (mixed case, dots) are accepted as spelled.
    {"Foo.Bar-0.1-py2.py3-none-any.whl", "Foo.Bar", "0.1", nullptr, "py2.py3",
     "none", "any", "Foo.Bar-0.1-py2.py3-none-any.whl"},
    {"zope.interface-6.0-cp311-cp311-win_amd64.whl", "zope.interface", "6.0",
     nullptr, "cp311", "cp311", "win_amd64",
     "zope.interface-6.0-cp311-cp311-win_amd64.whl"},
    // PEP 440 spellings, escaped '-' in a local version.
    {"a-1.0.post1.dev2-py3-none-any.whl", "a", "1.0.post1.dev2", nullptr, "py3",
     "none", "any", "a-1.0.post1.dev2-py3-none-any.whl"},
    {"a-1!2.0rc1+local_1.x-py3-none-any.whl", "a", "1!2.0rc1+local_1.x",
     nullptr, "py3", "none", "any", "a-1!2.0rc1+local_1.x-py3-none-any.whl"},
    // A path: only the last component counts.
    {"/tmp/dist/demo-1.0-py3-none-any.whl", "demo", "1.0", nullptr, "py3",
     "none", "any", "demo-1.0-py3-none-any.whl"},
};

TEST(WheelName, ParsesAndFormatsTable) {
  for (const auto& c : kNames) {
    SCOPED_TRACE(c.file);
    WheelName n = WheelName::parse(c.file);
    EXPECT_EQ(n.distribution, c.distribution);
    EXPECT_EQ(n.version, c.version);
    if (c.build)
      EXPECT_EQ(n.build, std::optional<std::string>(c.build));
    else
      EXPECT_FALSE(n.build.has_value());
    EXPECT_EQ(n.python_tag(), c.python);
    EXPECT_EQ(n.abi_tag(), c.abi);
    EXPECT_EQ(n.platform_tag(), c.platform);
    EXPECT_EQ(n.format(), c.formatted);
    // format() is a fixed point of parse().
    EXPECT_EQ(WheelName::parse(n.format()), n);
  }
}

TEST(WheelName, TagSetsAreOrderInsensitive) {
  EXPECT_EQ(WheelName::parse("x-1-cp39.cp310-none-any.whl"),
            WheelName::parse("x-1-cp310.cp39-none-any.whl"));
}

TEST(WheelName, RejectsWithReasons) {
  struct Reject {
    const char* file;
    const char* reason;
  };
  const Reject rejects[] = {
      {"demo-1.0-py3-none-any.zip", "does not end in .whl"},
      {".whl", "does not end in .whl"},
      {"demo-1.0-py3-none.whl", "found 4"},
      {"demo-1.0-1-2-py3-none-any.whl", "found 7"},
      {"-1.0-py3-none-any.whl", "empty distribution"},
      {"demo--py3-none-any.whl", "empty version"},
      {"demo-1.0--py3-none-any.whl", "empty build tag"},
      {"demo-1.0-py3--any.whl", "empty abi tag"},
      {"demo-1.0-py3-none-.whl", "empty platform tag"},
      {"demo-1.0-abc-py3-none-any.whl", "invalid build tag"},
      {"demo-1.0-py3..py2-none-any.whl", "empty tag"},
      {"demo-one-py3-none-any.whl", "invalid PEP 440 version"},
      {"de mo-1.0-py3-none-any.whl", "invalid distribution name"},
      {"de__mo-1.0-py3-none-any.whl", "invalid distribution name"},
      {"..-1.0-py3-none-any.whl", "invalid distribution name"},
      {".-1.0-py3-none-any.whl", "invalid distribution name"},
      {"_demo-1.0-py3-none-any.whl", "invalid distribution name"},
      {"demo.-1.0-py3-none-any.whl", "invalid distribution name"},
      {"demo-1.0-py3-none-an$y.whl", "invalid character"},
  };
  for (const auto& r : rejects) {
    SCOPED_TRACE(r.file);
    try {
      WheelName::parse(r.file);
      ADD_FAILURE() << "accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Errc::format);
      EXPECT_NE(std::string(e.what()).find(r.reason), std::string::npos)
          << e.what();
    }
  }
}

TEST(WheelName, Escaping) {
  EXPECT_EQ(wh::escape_distribution("Foo.Bar-baz__Qux"), "foo_bar_baz_qux");
  EXPECT_EQ(wh::escape_distribution("a-_.-b"), "a_b");
  EXPECT_EQ(wh::canonicalize_name("Foo.Bar_baz"), "foo-bar-baz");
  EXPECT_EQ(wh::escape_version("1.0+local-1"), "1.0+local_1");
}

TEST(WheelName, Versions) {
  for (const char* ok :
       {"1", "1.0", "v1.0", "1.0a1", "1.0-alpha-1", "1.0.rc1", "1.0c1", "1.0-1",
        "1.0_post_2", "1.0.dev0", "2!1.0", "1.0+abc.5", "1.0+CU124", "1.0PRE1"})
    EXPECT_TRUE(wh::is_valid_version(ok)) << ok;
  for (const char* bad :
       {"", "one", "1.0+", "1.0+a..b", "1..0", ".1", "1.0x", "1.0+a+b"})
    EXPECT_FALSE(wh::is_valid_version(bad)) << bad;
}

TEST(WheelName, LocalVersion) {
  WheelName n =
      WheelName::parse("torchlike-1.0.0+cu124-cp311-cp311-linux_x86_64.whl");
  EXPECT_EQ(n.local_version(), "cu124");
  WheelName s = n.without_local_version();
  EXPECT_EQ(s.version, "1.0.0");
  EXPECT_EQ(s.local_version(), "");
  EXPECT_EQ(s.format(), "torchlike-1.0.0-cp311-cp311-linux_x86_64.whl");
  EXPECT_EQ(s.dist_info_dir(), "torchlike-1.0.0.dist-info");
  EXPECT_EQ(WheelName::parse("a-1.0-py3-none-any.whl").local_version(), "");
}

TEST(WheelName, TagsAreTheProductOfTheSets) {
  WheelName n = WheelName::parse("x-1-py2.py3-none-linux_x86_64.any.whl");
  std::vector<WheelTag> expected = {{"py2", "none", "any"},
                                    {"py2", "none", "linux_x86_64"},
                                    {"py3", "none", "any"},
                                    {"py3", "none", "linux_x86_64"}};
  EXPECT_EQ(n.tags(), expected);
}

TEST(WheelName, SplitTagSet) {
  EXPECT_EQ(wh::split_tag_set("b.a.b"), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(wh::join_tag_set({"cp39", "cp310", "cp39"}), "cp310.cp39");
  EXPECT_THROW(wh::split_tag_set(""), Error);
  EXPECT_THROW(wh::split_tag_set("a."), Error);
  EXPECT_THROW(wh::split_tag_set("a-b"), Error);
}

TEST(WheelName, BuildTags) {
  EXPECT_TRUE(wh::is_valid_build_tag("1"));
  EXPECT_TRUE(wh::is_valid_build_tag("123abc"));
  EXPECT_FALSE(wh::is_valid_build_tag(""));
  EXPECT_FALSE(wh::is_valid_build_tag("abc"));
  EXPECT_FALSE(wh::is_valid_build_tag("1-2"));
}

}  // namespace
