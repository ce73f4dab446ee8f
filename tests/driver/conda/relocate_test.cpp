// SPDX-License-Identifier: BSD-3-Clause
// conda::relocate_search_path: which entries become $ORIGIN-relative, which
// are dropped or kept, what is added, which tag is written.
#include "libpkg/conda/relocate.hpp"

#include <gtest/gtest.h>

#include "libpkg/base/error.hpp"

namespace {

using libpkg::conda::OutsideRpath;
using libpkg::conda::relocate_search_path;
using libpkg::conda::RelocateOptions;

RelocateOptions options() {
  RelocateOptions o;
  o.build_prefixes = {"/build/env_placehold", "/stage/prefix/"};
  return o;
}

TEST(CondaRelocate, InPrefixEntriesBecomeOriginRelative) {
  auto r = relocate_search_path(
      "bin/foo", "/build/env_placehold/lib:/build/env_placehold/lib/sub/",
      "RUNPATH", options());
  EXPECT_EQ(r.new_value, "$ORIGIN/../lib:$ORIGIN/../lib/sub");
  EXPECT_EQ(r.new_tag, "RPATH");
  EXPECT_TRUE(r.changed());
  EXPECT_TRUE(r.notes.empty());
}

TEST(CondaRelocate, EitherBuildPrefixCounts) {
  auto r = relocate_search_path("lib/python3.11/site-packages/torch/_C.so",
                                "/stage/prefix/lib", "RPATH", options());
  // build.sh's $ORIGIN/../../.. for $SP_DIR/torch/*.so
  EXPECT_EQ(r.new_value, "$ORIGIN/../../..");
}

TEST(CondaRelocate, PrefixRootAndSameDirectory) {
  auto r = relocate_search_path("lib/libx.so",
                                "/build/env_placehold:"
                                "/build/env_placehold/lib/../lib",
                                "RPATH", options());
  EXPECT_EQ(r.new_value, "$ORIGIN/..:$ORIGIN");
  auto top =
      relocate_search_path("x.so", "/build/env_placehold/lib", "", options());
  EXPECT_EQ(top.new_value, "$ORIGIN/lib");
}

TEST(CondaRelocate, OutsideEntriesDroppedWithANoteOrKept) {
  auto r = relocate_search_path(
      "bin/foo",
      "/usr/local/cuda/lib64:/build/env_placeholder/lib:rel::", "RPATH",
      options());
  // "/build/env_placeholder" only shares a string prefix: outside.
  EXPECT_EQ(r.new_value, "$ORIGIN/../lib");
  EXPECT_EQ(r.notes.size(), 5u);
  RelocateOptions keep = options();
  keep.outside = OutsideRpath::keep;
  auto k = relocate_search_path("bin/foo", "/usr/local/cuda/lib64:rel", "RPATH",
                                keep);
  EXPECT_EQ(k.new_value, "/usr/local/cuda/lib64:rel:$ORIGIN/../lib");
  EXPECT_EQ(k.notes.size(), 2u);
}

TEST(CondaRelocate, OriginEntriesKeptAndDeduplicated) {
  auto r = relocate_search_path(
      "lib/libtorch.so", "$ORIGIN:${ORIGIN}/x:$ORIGIN:/build/env_placehold/lib",
      "RPATH", options());
  EXPECT_EQ(r.new_value, "$ORIGIN:${ORIGIN}/x");
  EXPECT_TRUE(r.changed());
}

TEST(CondaRelocate, AlreadyRelocatedIsUnchanged) {
  auto r =
      relocate_search_path("bin/foo", "$ORIGIN/../lib", "RPATH", options());
  EXPECT_FALSE(r.changed());
}

TEST(CondaRelocate, TagChoices) {
  RelocateOptions o = options();
  o.tag = libpkg::elf::RpathTag::keep;
  EXPECT_EQ(
      relocate_search_path("bin/a", "$ORIGIN/../lib", "RUNPATH", o).new_tag,
      "RUNPATH");
  EXPECT_EQ(relocate_search_path("bin/a", "", "", o).new_tag, "RUNPATH");
  o.tag = libpkg::elf::RpathTag::runpath;
  auto r = relocate_search_path("bin/a", "$ORIGIN/../lib", "RPATH", o);
  EXPECT_EQ(r.new_tag, "RUNPATH");
  EXPECT_TRUE(r.changed());
}

TEST(CondaRelocate, NothingLeftRemovesTheSearchPath) {
  RelocateOptions o = options();
  o.add_dirs.clear();
  auto r = relocate_search_path("bin/a", "/opt/x", "RUNPATH", o);
  EXPECT_EQ(r.new_value, "");
  EXPECT_EQ(r.new_tag, "");
  EXPECT_TRUE(r.changed());
}

TEST(CondaRelocate, BadOptionsAreUsageErrors) {
  RelocateOptions o = options();
  o.build_prefixes = {"relative/prefix"};
  EXPECT_THROW(relocate_search_path("bin/a", "/x", "RPATH", o), libpkg::Error);
  o = options();
  o.add_dirs = {"../outside"};
  EXPECT_THROW(relocate_search_path("bin/a", "/x", "RPATH", o), libpkg::Error);
}

}  // namespace
