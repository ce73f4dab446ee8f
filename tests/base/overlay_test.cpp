// SPDX-License-Identifier: BSD-3-Clause
// Overlay: patch normalisation, streaming of the output, and the three ways
// of writing it (new path, patched in place, atomic replacement).
#include "libpkg/base/overlay.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <utime.h>

#include <random>
#include <string>
#include <vector>

#include "libpkg/base/error.hpp"
#include "temp_dir.hpp"

namespace libpkg {
namespace {

using testing::as_bytes;
using testing::list_dir;
using testing::read_file;
using testing::stat_of;
using testing::TempDir;
using testing::write_file;

std::string output_of(const Overlay& o, std::string_view input) {
  std::string out;
  o.for_each_chunk(as_bytes(input), [&](std::span<const u8> chunk) {
    out.append(reinterpret_cast<const char*>(chunk.data()), chunk.size());
  });
  return out;
}

std::string patch_text(const Patch& p) {
  return {reinterpret_cast<const char*>(p.bytes.data()), p.bytes.size()};
}

TEST(Overlay, EmptyOverlayIsIdentity) {
  std::string in = "0123456789";
  Overlay o(in.size());
  EXPECT_EQ(o.input_size(), 10u);
  EXPECT_EQ(o.size(), 10u);
  EXPECT_FALSE(o.grows());
  EXPECT_TRUE(o.patches().empty());
  EXPECT_TRUE(o.is_identity(as_bytes(in)));
  EXPECT_EQ(output_of(o, in), in);
}

TEST(Overlay, WithoutUnchangedKeepsOnlyWhatDiffers) {
  const std::string in = "0123456789abcdefghijklmnopqrstuvwxyz";
  Overlay o(in.size());
  o.write(0, as_bytes("0123"));                 // all equal: dropped
  o.write(6, as_bytes("6X89abcdefghijklmYo"));  // 15 equal bytes between
  o.write(30, as_bytes("uvwZZZ!!"));            // and 2 past the end
  const Overlay t = o.without_unchanged(as_bytes(in), 15);
  EXPECT_EQ(t.size(), o.size());
  EXPECT_EQ(t.input_size(), o.input_size());
  EXPECT_EQ(output_of(t, in), output_of(o, in));
  ASSERT_EQ(t.patches().size(), 3u);
  EXPECT_EQ(t.patches()[0].offset, 7u);
  EXPECT_EQ(patch_text(t.patches()[0]), "X");
  EXPECT_EQ(t.patches()[1].offset, 23u);
  EXPECT_EQ(patch_text(t.patches()[1]), "Y");
  EXPECT_EQ(t.patches()[2].offset, 33u);
  EXPECT_EQ(patch_text(t.patches()[2]), "ZZZ!!");
  EXPECT_EQ(t.size(), 38u);
  // Equal runs shorter than the gap stay inside one patch.
  const Overlay joined = o.without_unchanged(as_bytes(in), 16);
  ASSERT_EQ(joined.patches().size(), 2u);
  EXPECT_EQ(patch_text(joined.patches()[0]), "X89abcdefghijklmY");
  EXPECT_EQ(output_of(joined, in), output_of(o, in));
  // An overlay that changes nothing has no patch left.
  Overlay same(in.size());
  same.write(3, as_bytes("3456"));
  EXPECT_TRUE(same.without_unchanged(as_bytes(in)).patches().empty());
}

TEST(Overlay, WithoutUnchangedKeepsATruncation) {
  const std::string in = "0123456789";
  Overlay o(in.size());
  o.write(6, as_bytes("6Q89"));
  o.resize(8);  // cuts the patch's last byte and the input's
  const Overlay t = o.without_unchanged(as_bytes(in));
  EXPECT_EQ(t.size(), 8u);
  EXPECT_EQ(output_of(t, in), "0123456Q");
  EXPECT_EQ(output_of(t, in), output_of(o, in));
}

TEST(Overlay, EmptyWriteIsIgnored) {
  Overlay o(10);
  o.write(3, {});
  o.write(100, {});
  EXPECT_TRUE(o.patches().empty());
  EXPECT_EQ(o.size(), 10u);
}

TEST(Overlay, LaterWriteWinsInside) {
  std::string in = "0123456789";
  Overlay o(in.size());
  o.write(1, as_bytes("AAAAAA"));
  o.write(3, as_bytes("b"));
  ASSERT_EQ(o.patches().size(), 1u);
  EXPECT_EQ(o.patches()[0].offset, 1u);
  EXPECT_EQ(patch_text(o.patches()[0]), "AAbAAA");
  EXPECT_EQ(output_of(o, in), "0AAbAAA789");
}

TEST(Overlay, LaterWriteWinsCoveringAndPartial) {
  std::string in = "0123456789";
  Overlay o(in.size());
  o.write(4, as_bytes("xy"));
  o.write(2, as_bytes("ABCDEF"));  // covers the first one entirely
  EXPECT_EQ(output_of(o, in), "01ABCDEF89");
  o.write(0, as_bytes("ppp"));  // overlaps the start of the second
  o.write(7, as_bytes("qqq"));  // overlaps its end
  EXPECT_EQ(output_of(o, in), "pppBCDEqqq");
  ASSERT_EQ(o.patches().size(), 1u);
  EXPECT_EQ(patch_text(o.patches()[0]), "pppBCDEqqq");
}

TEST(Overlay, EarlierWriteSurvivesWhereNotOverwritten) {
  std::string in = "..........";
  Overlay o(in.size());
  o.write(2, as_bytes("abc"));
  o.write(3, as_bytes("X"));
  o.write(3, as_bytes("Y"));  // the last write at the same place wins
  EXPECT_EQ(output_of(o, in), "..aYc.....");
}

TEST(Overlay, AdjacentPatchesMerge) {
  std::string in = "0123456789";
  Overlay o(in.size());
  o.write(6, as_bytes("gh"));
  o.write(2, as_bytes("cd"));
  o.write(4, as_bytes("ef"));
  ASSERT_EQ(o.patches().size(), 1u);
  EXPECT_EQ(o.patches()[0].offset, 2u);
  EXPECT_EQ(patch_text(o.patches()[0]), "cdefgh");
}

TEST(Overlay, DisjointPatchesStaySortedAndSeparate) {
  std::string in = "0123456789";
  Overlay o(in.size());
  o.write(7, as_bytes("Z"));
  o.write(1, as_bytes("A"));
  o.write(4, as_bytes("M"));
  const auto& p = o.patches();
  ASSERT_EQ(p.size(), 3u);
  EXPECT_EQ(p[0].offset, 1u);
  EXPECT_EQ(p[1].offset, 4u);
  EXPECT_EQ(p[2].offset, 7u);
  EXPECT_EQ(output_of(o, in), "0A23M56Z89");
  // Writing more after reading the patches renormalises.
  o.write(2, as_bytes("BC"));
  ASSERT_EQ(o.patches().size(), 2u);
  EXPECT_EQ(patch_text(o.patches()[0]), "ABCM");
}

TEST(Overlay, IsIdentity) {
  std::string in = "0123456789";
  Overlay same(in.size());
  same.write(3, as_bytes("345"));
  EXPECT_TRUE(same.is_identity(as_bytes(in)));

  Overlay changed(in.size());
  changed.write(3, as_bytes("3X5"));
  EXPECT_FALSE(changed.is_identity(as_bytes(in)));

  Overlay changed_then_restored(in.size());
  changed_then_restored.write(3, as_bytes("XXX"));
  changed_then_restored.write(3, as_bytes("345"));
  EXPECT_TRUE(changed_then_restored.is_identity(as_bytes(in)));

  Overlay grown(in.size());
  grown.resize(11);
  EXPECT_FALSE(grown.is_identity(as_bytes(in)));

  Overlay shrunk(in.size());
  shrunk.resize(9);
  EXPECT_FALSE(shrunk.is_identity(as_bytes(in)));
}

// A patch past the end that resize() cuts off again changes no output byte,
// so the overlay is an identity (write_overlay must then leave the file
// alone).
TEST(Overlay, IsIdentityAfterResizeBack) {
  std::string in = "0123456789";
  Overlay o(in.size());
  o.write(12, as_bytes("grown"));
  o.resize(in.size());
  ASSERT_EQ(output_of(o, in), in);
  EXPECT_TRUE(o.is_identity(as_bytes(in)));
}

TEST(Overlay, GrowthWithZeroFilledGap) {
  std::string in = "abcd";
  Overlay o(in.size());
  o.write(10, as_bytes("ZZ"));
  EXPECT_TRUE(o.grows());
  EXPECT_EQ(o.size(), 12u);
  EXPECT_EQ(output_of(o, in), std::string("abcd\0\0\0\0\0\0ZZ", 12));
}

TEST(Overlay, GrowthStraddlingTheEnd) {
  std::string in = "abcd";
  Overlay o(in.size());
  o.write(2, as_bytes("XYZW"));
  EXPECT_EQ(o.size(), 6u);
  EXPECT_EQ(output_of(o, in), "abXYZW");
}

TEST(Overlay, LargeGapIsStreamedInBoundedChunks) {
  std::string in = "ab";
  Overlay o(in.size());
  o.write(100000, as_bytes("!"));
  size_t biggest = 0, total = 0;
  bool all_zero = true;
  o.for_each_chunk(as_bytes(in), [&](std::span<const u8> c) {
    biggest = std::max(biggest, c.size());
    total += c.size();
    if (total <= 100000 && total > 2)
      for (u8 b : c) all_zero = all_zero && b == 0;
  });
  EXPECT_EQ(total, 100001u);
  EXPECT_LE(biggest, 65536u);
  EXPECT_TRUE(all_zero);
  std::string out = output_of(o, in);
  EXPECT_EQ(out.substr(0, 2), "ab");
  EXPECT_EQ(out.back(), '!');
  EXPECT_EQ(out.find_first_not_of('\0', 2), 100000u);
}

TEST(Overlay, UnchangedRangesAreViewsIntoTheInput) {
  std::string in = "0123456789";
  Overlay o(in.size());
  o.write(5, as_bytes("X"));
  std::vector<const u8*> starts;
  o.for_each_chunk(as_bytes(in),
                   [&](std::span<const u8> c) { starts.push_back(c.data()); });
  ASSERT_EQ(starts.size(), 3u);
  EXPECT_EQ(starts[0], reinterpret_cast<const u8*>(in.data()));
  EXPECT_EQ(starts[2], reinterpret_cast<const u8*>(in.data()) + 6);
}

TEST(Overlay, ResizeTruncatesInputAndPatches) {
  std::string in = "0123456789";
  Overlay o(in.size());
  o.write(2, as_bytes("AB"));
  o.write(8, as_bytes("YZ"));
  o.resize(3);
  EXPECT_EQ(output_of(o, in), "01A");
  o.resize(0);
  EXPECT_EQ(output_of(o, in), "");
}

TEST(Overlay, ResizeZeroExtends) {
  std::string in = "abc";
  Overlay o(in.size());
  o.resize(6);
  EXPECT_EQ(output_of(o, in), std::string("abc\0\0\0", 6));
}

// Random writes checked against a plain byte-vector model.
TEST(Overlay, MatchesNaiveModel) {
  std::mt19937 rng(12345);
  for (int round = 0; round < 500; ++round) {
    size_t n = rng() % 64;
    std::string in(n, '\0');
    for (char& c : in) c = static_cast<char>('a' + rng() % 26);
    std::string model = in;
    Overlay o(n);
    int writes = static_cast<int>(rng() % 8);
    for (int w = 0; w < writes; ++w) {
      size_t off = rng() % (n + 16);
      std::string bytes(1 + rng() % 12, '\0');
      for (char& c : bytes) c = static_cast<char>('A' + rng() % 26);
      o.write(off, as_bytes(bytes));
      if (model.size() < off + bytes.size())
        model.resize(off + bytes.size(), '\0');
      model.replace(off, bytes.size(), bytes);
    }
    bool resized = rng() % 4 == 0;
    if (resized) {
      size_t sz = rng() % (n + 20);
      o.resize(sz);
      model.resize(sz, '\0');
    }
    ASSERT_EQ(output_of(o, in), model) << "round " << round;
    ASSERT_EQ(o.size(), model.size());
    // (Patches cut off by resize() are covered by IsIdentityAfterResizeBack.)
    if (!resized) {
      EXPECT_EQ(o.is_identity(as_bytes(in)), model == in) << "round " << round;
    }
    // Normalised patches: sorted, non-overlapping, never adjacent.
    const auto& p = o.patches();
    for (size_t i = 1; i < p.size(); ++i)
      ASSERT_GT(p[i].offset, p[i - 1].offset + p[i - 1].bytes.size());
  }
}

// ---- write_overlay
// -----------------------------------------------------------

class WriteOverlayTest : public ::testing::Test {
 protected:
  void SetUp() override {
    input_ = dir_ / "lib.so";
    write_file(input_, "0123456789abcdef", 0750);
    // An old mtime, so that any rewrite is visible.
    struct utimbuf times {
      1000000000, 1000000000
    };
    ASSERT_EQ(::utime(input_.c_str(), &times), 0);
  }

  TempDir dir_;
  std::filesystem::path input_;
};

TEST_F(WriteOverlayTest, ToNewPath) {
  MappedFile in = MappedFile::open(input_);
  Overlay o(in.size());
  o.write(4, as_bytes("XY"));
  o.write(20, as_bytes("!"));
  auto out = dir_ / "out.so";
  WriteResult r = write_overlay(in, o, out, WriteMode::atomic);
  EXPECT_TRUE(r.changed);
  EXPECT_FALSE(r.in_place);
  EXPECT_EQ(r.bytes_written, 3u);
  EXPECT_EQ(read_file(out), std::string("0123XY6789abcdef\0\0\0\0!", 21));
  EXPECT_EQ(stat_of(out).st_mode & 07777, 0750u);
  EXPECT_EQ(read_file(input_), "0123456789abcdef");
  EXPECT_EQ(list_dir(dir_.path()),
            (std::vector<std::string>{"lib.so", "out.so"}));
}

TEST_F(WriteOverlayTest, ToNewPathShrinking) {
  MappedFile in = MappedFile::open(input_);
  Overlay o(in.size());
  o.write(1, as_bytes("Q"));
  o.resize(5);
  auto out = dir_ / "out.so";
  write_overlay(in, o, out, WriteMode::patch_in_place);
  EXPECT_EQ(read_file(out), "0Q234");
}

TEST_F(WriteOverlayTest, IdentityToNewPathStillWritesTheCopy) {
  MappedFile in = MappedFile::open(input_);
  Overlay o(in.size());
  auto out = dir_ / "copy.so";
  WriteResult r = write_overlay(in, o, out, WriteMode::atomic);
  EXPECT_FALSE(r.changed);
  EXPECT_EQ(read_file(out), "0123456789abcdef");
  EXPECT_EQ(stat_of(out).st_mode & 07777, 0750u);
}

TEST_F(WriteOverlayTest, PatchInPlaceWritesOnlyThePatches) {
  ino_t ino = stat_of(input_).st_ino;
  MappedFile in = MappedFile::open(input_);
  Overlay o(in.size());
  o.write(0, as_bytes("AB"));
  o.write(10, as_bytes("C"));
  WriteResult r = write_overlay(in, o, input_, WriteMode::patch_in_place);
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(r.in_place);
  EXPECT_EQ(r.bytes_written, 3u);
  EXPECT_EQ(read_file(input_), "AB23456789Cbcdef");
  EXPECT_EQ(stat_of(input_).st_ino, ino);
  EXPECT_EQ(stat_of(input_).st_mode & 07777, 0750u);
  EXPECT_EQ(list_dir(dir_.path()), std::vector<std::string>{"lib.so"});
}

TEST_F(WriteOverlayTest, PatchInPlaceThroughAnotherPathToTheSameFile) {
  std::filesystem::create_hard_link(input_, dir_ / "alias.so");
  ino_t ino = stat_of(input_).st_ino;
  MappedFile in = MappedFile::open(input_);
  Overlay o(in.size());
  o.write(1, as_bytes("Z"));
  WriteResult r =
      write_overlay(in, o, dir_ / "alias.so", WriteMode::patch_in_place);
  EXPECT_TRUE(r.in_place);
  EXPECT_EQ(read_file(input_), "0Z23456789abcdef");
  EXPECT_EQ(stat_of(dir_ / "alias.so").st_ino, ino);
}

TEST_F(WriteOverlayTest, PatchInPlaceFallsBackToAtomicWhenGrowing) {
  ino_t ino = stat_of(input_).st_ino;
  MappedFile in = MappedFile::open(input_);
  Overlay o(in.size());
  o.write(16, as_bytes("++"));
  WriteResult r = write_overlay(in, o, input_, WriteMode::patch_in_place);
  EXPECT_TRUE(r.changed);
  EXPECT_FALSE(r.in_place);
  EXPECT_EQ(read_file(input_), "0123456789abcdef++");
  EXPECT_NE(stat_of(input_).st_ino, ino);
  EXPECT_EQ(stat_of(input_).st_mode & 07777, 0750u);
  EXPECT_EQ(list_dir(dir_.path()), std::vector<std::string>{"lib.so"});
}

TEST_F(WriteOverlayTest, PatchInPlaceFallsBackToAtomicWhenShrinking) {
  MappedFile in = MappedFile::open(input_);
  Overlay o(in.size());
  o.resize(4);
  WriteResult r = write_overlay(in, o, input_, WriteMode::patch_in_place);
  EXPECT_FALSE(r.in_place);
  EXPECT_EQ(read_file(input_), "0123");
}

TEST_F(WriteOverlayTest, AtomicInPlaceReplacesTheInode) {
  ino_t ino = stat_of(input_).st_ino;
  MappedFile in = MappedFile::open(input_);
  Overlay o(in.size());
  o.write(15, as_bytes("F"));
  WriteResult r = write_overlay(in, o, input_, WriteMode::atomic);
  EXPECT_TRUE(r.changed);
  EXPECT_FALSE(r.in_place);
  EXPECT_EQ(read_file(input_), "0123456789abcdeF");
  EXPECT_NE(stat_of(input_).st_ino, ino);
  EXPECT_EQ(stat_of(input_).st_mode & 07777, 0750u);
  // The old map still shows the old bytes (it maps the old inode).
  EXPECT_EQ(in.data()[15], 'f');
  EXPECT_EQ(list_dir(dir_.path()), std::vector<std::string>{"lib.so"});
}

TEST_F(WriteOverlayTest, IdentityInPlaceTouchesNothing) {
  for (WriteMode mode : {WriteMode::atomic, WriteMode::patch_in_place}) {
    struct stat before = stat_of(input_);
    MappedFile in = MappedFile::open(input_);
    Overlay o(in.size());
    o.write(3, as_bytes("345"));  // same bytes as the input
    WriteResult r = write_overlay(in, o, input_, mode);
    EXPECT_FALSE(r.changed);
    EXPECT_EQ(r.bytes_written, 0u);
    struct stat after = stat_of(input_);
    EXPECT_EQ(after.st_ino, before.st_ino);
    EXPECT_EQ(after.st_mtime, before.st_mtime);
    EXPECT_EQ(after.st_mtime, 1000000000);
    EXPECT_EQ(list_dir(dir_.path()), std::vector<std::string>{"lib.so"});
  }
}

TEST_F(WriteOverlayTest, UnwritableDestinationIsIoError) {
  MappedFile in = MappedFile::open(input_);
  Overlay o(in.size());
  o.write(0, as_bytes("x"));
  try {
    write_overlay(in, o, dir_ / "missing-dir" / "out", WriteMode::atomic);
    FAIL() << "no exception";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::io);
  }
  EXPECT_EQ(read_file(input_), "0123456789abcdef");
}

// The input is copied from the file the overlay was planned on: when
// another file has been renamed over its name since it was mapped, nothing
// is written and the error says why (it used to copy the new file's bytes
// under the old file's patches).
TEST_F(WriteOverlayTest, InputReplacedSinceMappedIsRefused) {
  MappedFile in = MappedFile::open(input_);
  Overlay o(in.size());
  o.write(20, as_bytes("!"));  // grows: copied, not patched in place
  write_file(dir_ / "other", "ANOTHER FILE 0123", 0750);
  ASSERT_EQ(::rename((dir_ / "other").c_str(), input_.c_str()), 0);
  auto out = dir_ / "out.so";
  try {
    write_overlay(in, o, out, WriteMode::atomic);
    ADD_FAILURE() << "the replaced input was copied";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::io);
    EXPECT_NE(e.message().find("changed while being edited"), std::string::npos)
        << e.what();
  }
  EXPECT_FALSE(std::filesystem::exists(out));
}

}  // namespace
}  // namespace libpkg
