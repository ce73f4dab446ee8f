// SPDX-License-Identifier: BSD-3-Clause
// parse_ld_so_conf on configuration trees written under a temporary root.
#include <gtest/gtest.h>

#include "libpkg/deps/resolve.hpp"
#include "test_root.hpp"

namespace libpkg::deps {
namespace {

using testing::TestRoot;
using V = std::vector<std::string>;

TEST(LdSoConf, DirectoriesCommentsAndBlanks) {
  TestRoot r;
  r.write("etc/ld.so.conf",
          "# a comment\n"
          "\n"
          "   /usr/local/lib   \n"
          "/opt/a/lib/ # trailing comment\n"
          "\t/opt/b//\n"
          "/usr/local/lib\n"    // repeated: once only
          "hwcap 0 nosegneg\n"  // ignored
          "HWCAP 1 /foo\n"      // any case, as ldconfig
          "relative/dir\n"      // relative: not searched
          "/opt/c\r\n");        // CRLF file
  auto dirs = parse_ld_so_conf(r.at("etc/ld.so.conf"), r.dir());
  EXPECT_EQ(dirs, (V{r.at("usr/local/lib"), r.at("opt/a/lib"), r.at("opt/b"),
                     r.at("opt/c")}));
}

TEST(LdSoConf, RootSlashLeavesPathsAlone) {
  TestRoot r;
  r.write("ld.so.conf", "/usr/lib/x\n/lib\n");
  EXPECT_EQ(parse_ld_so_conf(r.at("ld.so.conf"), "/"),
            (V{"/usr/lib/x", "/lib"}));
}

TEST(LdSoConf, IncludeGlobsSortedAndUnderRoot) {
  TestRoot r;
  r.write("etc/ld.so.conf",
          "/first\n"
          "include /etc/ld.so.conf.d/*.conf\n"
          "/last\n");
  r.write("etc/ld.so.conf.d/b.conf", "/b\n");
  r.write("etc/ld.so.conf.d/a.conf", "/a1\n/a2\n");
  r.write("etc/ld.so.conf.d/c.conf.disabled", "/never\n");
  r.write("etc/ld.so.conf.d/10-x.conf", "# only a comment\n");
  auto dirs = parse_ld_so_conf(r.at("etc/ld.so.conf"), r.dir());
  EXPECT_EQ(dirs, (V{r.at("first"), r.at("a1"), r.at("a2"), r.at("b"),
                     r.at("last")}));
}

TEST(LdSoConf, RelativeIncludeIsRelativeToTheIncludingFile) {
  TestRoot r;
  r.write("etc/ld.so.conf", "include conf.d/*.conf\n");
  r.write("etc/conf.d/x.conf", "/x\ninclude sub/*.conf\n");
  r.write("etc/conf.d/sub/y.conf", "/y\n");
  // Not relative to the current directory nor to the root.
  r.write("conf.d/z.conf", "/wrong\n");
  auto dirs = parse_ld_so_conf(r.at("etc/ld.so.conf"), r.dir());
  EXPECT_EQ(dirs, (V{r.at("x"), r.at("y")}));
}

TEST(LdSoConf, DotDotNeverLeavesTheRoot) {
  // As inside a chroot: ".." stops at the root, for directories, absolute
  // and relative includes alike (a tree's configuration must not make the
  // search read files outside it; found by the ld_so_conf fuzz target).
  TestRoot r, outside;
  outside.write("evil.conf", "/evil\n");
  std::string up = "../../../../../../../../../../../../../../../..";
  std::string escape = up + outside.dir().string() + "/*.conf";
  r.write("etc/ld.so.conf",
          "include " + escape + "\n" +                  // relative
              "include /" + escape + "\n" +             // absolute
              "/../../../../../../../../../../opt/x\n"  // a directory
              "/opt/./y/../z\n");
  auto dirs = parse_ld_so_conf(r.at("etc/ld.so.conf"), r.dir());
  EXPECT_EQ(dirs, (V{r.at("opt/x"), r.at("opt/z")}));
  // The same configuration inside the root is still found there.
  r.write(outside.dir().string().substr(1) + "/in.conf", "/inside\n");
  dirs = parse_ld_so_conf(r.at("etc/ld.so.conf"), r.dir());
  EXPECT_EQ(dirs, (V{r.at("inside"), r.at("opt/x"), r.at("opt/z")}));
}

TEST(LdSoConf, SeveralPatternsOnOneIncludeLine) {
  TestRoot r;
  r.write("etc/ld.so.conf", "include\t/etc/p/*.conf   /etc/q/*.conf\n");
  r.write("etc/p/1.conf", "/p\n");
  r.write("etc/q/1.conf", "/q\n");
  EXPECT_EQ(parse_ld_so_conf(r.at("etc/ld.so.conf"), r.dir()),
            (V{r.at("p"), r.at("q")}));
}

TEST(LdSoConf, MissingFilesAreIgnored) {
  TestRoot r;
  EXPECT_TRUE(parse_ld_so_conf(r.at("etc/ld.so.conf"), r.dir()).empty());
  r.write("etc/ld.so.conf",
          "include /etc/nothing/*.conf\n"
          "include /etc/absent.conf\n"
          "/kept\n");
  EXPECT_EQ(parse_ld_so_conf(r.at("etc/ld.so.conf"), r.dir()),
            (V{r.at("kept")}));
}

TEST(LdSoConf, IncludeCyclesAreBroken) {
  TestRoot r;
  r.write("etc/ld.so.conf", "/top\ninclude a.conf\n");
  r.write("etc/a.conf", "/a\ninclude b.conf\n");
  r.write("etc/b.conf", "/b\ninclude a.conf\ninclude /etc/ld.so.conf\n");
  EXPECT_EQ(parse_ld_so_conf(r.at("etc/ld.so.conf"), r.dir()),
            (V{r.at("top"), r.at("a"), r.at("b")}));
  // Self-inclusion.
  r.write("etc/self.conf", "include self.conf\n/s\n");
  EXPECT_EQ(parse_ld_so_conf(r.at("etc/self.conf"), r.dir()), (V{r.at("s")}));
}

TEST(LdSoConf, IncludeWordNeedsABlank) {
  TestRoot r;
  // "includes" or "include" alone are directory names (relative, dropped),
  // not include directives.
  r.write("etc/ld.so.conf", "include\n/includes\n");
  EXPECT_EQ(parse_ld_so_conf(r.at("etc/ld.so.conf"), r.dir()),
            (V{r.at("includes")}));
}

}  // namespace
}  // namespace libpkg::deps
