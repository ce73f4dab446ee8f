// SPDX-License-Identifier: BSD-3-Clause
#include <gtest/gtest.h>

#include "libpkg/bundle/repair.hpp"

namespace bd = libpkg::bundle;

namespace {

const std::string kSha =
    "0123abcd89ef0123abcd89ef0123abcd89ef0123abcd89ef0123abcd89ef0123";

TEST(HashedName, SplitsAtTheFirstDot) {
  EXPECT_EQ(bd::hashed_name("libz.so.1", kSha), "libz-0123abcd.so.1");
  EXPECT_EQ(bd::hashed_name("libz.so.1.2.13", kSha), "libz-0123abcd.so.1.2.13");
  // CUDA names with a version in the stem part keep it after the hash.
  EXPECT_EQ(bd::hashed_name("libcudart.so.11.0", kSha),
            "libcudart-0123abcd.so.11.0");
  EXPECT_EQ(bd::hashed_name("libgomp.so.1", kSha), "libgomp-0123abcd.so.1");
}

TEST(HashedName, NameWithoutDot) {
  EXPECT_EQ(bd::hashed_name("plugin", kSha), "plugin-0123abcd");
}

TEST(HashedName, IdempotentOnAGraftedName) {
  const std::string once = bd::hashed_name("libfoo.so.2", kSha);
  EXPECT_EQ(bd::hashed_name(once, kSha), once);
  // A different hash is a different library: it gets its own suffix.
  const std::string other(64, 'f');
  EXPECT_EQ(bd::hashed_name(once, other), "libfoo-0123abcd-ffffffff.so.2");
}

TEST(OriginRelative, FromTopLevelAndNestedMembers) {
  EXPECT_EQ(bd::origin_relative("_ext.so", "foo.libs"), "$ORIGIN/foo.libs");
  EXPECT_EQ(bd::origin_relative("foo/_ext.so", "foo.libs"),
            "$ORIGIN/../foo.libs");
  EXPECT_EQ(bd::origin_relative("foo/sub/_ext.so", "foo.libs"),
            "$ORIGIN/../../foo.libs");
  EXPECT_EQ(bd::origin_relative("torch/_C.so", "torch/lib"), "$ORIGIN/lib");
  EXPECT_EQ(bd::origin_relative("torch/lib/libtorch.so", "torch/lib"),
            "$ORIGIN");
  EXPECT_EQ(bd::origin_relative("foo.libs/libbar-12345678.so.1", "foo.libs"),
            "$ORIGIN");
}

TEST(KeepNames, DefaultsCoverLibrariesDlopenedByName) {
  const auto keep = bd::default_keep_names();
  EXPECT_NE(std::find(keep.begin(), keep.end(), "libnvrtc-builtins*"),
            keep.end());
  EXPECT_NE(std::find(keep.begin(), keep.end(), "libcudnn*"), keep.end());
  EXPECT_NE(std::find(keep.begin(), keep.end(), "libcublas*"), keep.end());
}

}  // namespace
