// SPDX-License-Identifier: BSD-3-Clause
// Path-list splitting, dynamic string token expansion, FoundVia names.
#include <gtest/gtest.h>

#include "libpkg/deps/resolve.hpp"

namespace libpkg::deps {
namespace {

using V = std::vector<std::string>;

TEST(SplitPathList, KeepsEmptyEntries) {
  EXPECT_EQ(split_path_list(""), V{""});
  EXPECT_EQ(split_path_list("/a"), V{"/a"});
  EXPECT_EQ(split_path_list("/a:/b"), (V{"/a", "/b"}));
  EXPECT_EQ(split_path_list(":/a:"), (V{"", "/a", ""}));
  EXPECT_EQ(split_path_list("/a::/b"), (V{"/a", "", "/b"}));
  EXPECT_EQ(split_path_list("$ORIGIN/../lib:/x y"),
            (V{"$ORIGIN/../lib", "/x y"}));
}

TEST(ExpandDst, OriginBracedAndUnbraced) {
  EXPECT_EQ(expand_dst("$ORIGIN", "/o", "lib64", "x86_64"), "/o");
  EXPECT_EQ(expand_dst("$ORIGIN/../lib", "/o/bin", "lib64", "x86_64"),
            "/o/bin/../lib");
  EXPECT_EQ(expand_dst("${ORIGIN}/lib", "/o", "lib64", "x86_64"), "/o/lib");
  EXPECT_EQ(expand_dst("a/$ORIGIN:b", "/o", "", ""), "a//o:b");
  EXPECT_EQ(expand_dst("$ORIGIN$ORIGIN", "/o", "", ""), "/o/o");
}

TEST(ExpandDst, LibAndPlatform) {
  EXPECT_EQ(expand_dst("/usr/$LIB/$PLATFORM", "/o", "lib64", "x86_64"),
            "/usr/lib64/x86_64");
  EXPECT_EQ(expand_dst("/usr/${LIB}x/${PLATFORM}", "/o", "lib", "i686"),
            "/usr/libx/i686");
}

TEST(ExpandDst, NonTokensStayLiteral) {
  // An identifier character after the name makes it another (unknown)
  // token, as in glibc's is_dst.
  EXPECT_EQ(expand_dst("$ORIGINAL", "/o", "l", "p"), "$ORIGINAL");
  EXPECT_EQ(expand_dst("$LIBRARY/$PLATFORM_X", "/o", "l", "p"),
            "$LIBRARY/$PLATFORM_X");
  EXPECT_EQ(expand_dst("$FOO/x", "/o", "l", "p"), "$FOO/x");
  EXPECT_EQ(expand_dst("${ORIGIN", "/o", "l", "p"), "${ORIGIN");
  EXPECT_EQ(expand_dst("${FOO}", "/o", "l", "p"), "${FOO}");
  EXPECT_EQ(expand_dst("x$", "/o", "l", "p"), "x$");
  EXPECT_EQ(expand_dst("$", "/o", "l", "p"), "$");
  EXPECT_EQ(expand_dst("", "/o", "l", "p"), "");
  // A token name is case-sensitive.
  EXPECT_EQ(expand_dst("$origin", "/o", "l", "p"), "$origin");
}

TEST(FoundVia, Names) {
  EXPECT_STREQ(found_via_name(FoundVia::rpath), "rpath");
  EXPECT_STREQ(found_via_name(FoundVia::inherited_rpath), "inherited_rpath");
  EXPECT_STREQ(found_via_name(FoundVia::ld_library_path), "ld_library_path");
  EXPECT_STREQ(found_via_name(FoundVia::extra_path), "extra_path");
  EXPECT_STREQ(found_via_name(FoundVia::runpath), "runpath");
  EXPECT_STREQ(found_via_name(FoundVia::ld_so_conf), "ld_so_conf");
  EXPECT_STREQ(found_via_name(FoundVia::default_dir), "default_dir");
  EXPECT_STREQ(found_via_name(FoundVia::path), "path");
  EXPECT_STREQ(found_via_name(FoundVia::not_found), "not_found");
}

}  // namespace
}  // namespace libpkg::deps
