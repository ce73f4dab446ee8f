// SPDX-License-Identifier: BSD-3-Clause
// MappedFile: what it maps, what it refuses, and what it records.
#include "libpkg/base/mapped_file.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cerrno>
#include <string>

#include "libpkg/base/error.hpp"
#include "temp_dir.hpp"
#include "unprivileged.hpp"

namespace libpkg {
namespace {

using testing::TempDir;
using testing::write_file;

TEST(MappedFile, MapsContents) {
  TempDir dir;
  write_file(dir / "a", "hello world");
  MappedFile f = MappedFile::open(dir / "a");
  EXPECT_EQ(f.size(), 11u);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(f.data()), f.size()),
            "hello world");
  EXPECT_EQ(f.name(), (dir / "a").string());
  ByteView v = f.view();
  EXPECT_EQ(v.name(), f.name());
  EXPECT_EQ(v.size(), 11u);
  ByteView s = f.slice(6, 5, "word");
  EXPECT_EQ(s.base(), 6u);
  EXPECT_EQ(s.data()[0], 'w');
}

// A FIFO is refused without blocking in open(2) (no writer ever appears
// here: a blocking open would hang the test).
TEST(MappedFile, RefusesFifoWithoutBlocking) {
  TempDir dir;
  ASSERT_EQ(::mkfifo((dir / "fifo").c_str(), 0600), 0);
  try {
    MappedFile::open(dir / "fifo");
    FAIL() << "a FIFO was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.file(), (dir / "fifo").string());
    EXPECT_NE(e.message().find("not a regular file (a FIFO)"),
              std::string::npos)
        << e.message();
  }
}

TEST(MappedFile, EmptyFile) {
  TempDir dir;
  write_file(dir / "empty", "");
  MappedFile f = MappedFile::open(dir / "empty");
  EXPECT_EQ(f.size(), 0u);
  EXPECT_EQ(f.view().size(), 0u);
  EXPECT_THROW(f.view().range(0, 1, "x"), Error);
}

TEST(MappedFile, MissingFileIsIoError) {
  TempDir dir;
  try {
    MappedFile::open(dir / "nope");
    FAIL() << "no exception";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::io);
    EXPECT_EQ(e.file(), (dir / "nope").string());
    EXPECT_NE(e.message().find("No such file"), std::string::npos) << e.what();
  }
}

TEST(MappedFile, DirectoryIsRefused) {
  TempDir dir;
  try {
    MappedFile::open(dir.path());
    FAIL() << "no exception";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::io);
    EXPECT_EQ(e.file(), dir.path().string());
    EXPECT_NE(e.message().find("not a regular file"), std::string::npos);
  }
}

TEST(MappedFile, UnreadableFileIsIoError) {
  // Root reads a mode-000 file: the open runs as nobody in a child.
  TempDir dir;
  std::filesystem::permissions(dir.path(), std::filesystem::perms(0755));
  write_file(dir / "secret", "x", 0000);
  EXPECT_EQ(testing::run_unprivileged([&]() -> std::string {
              try {
                MappedFile::open(dir / "secret");
                return "no exception";
              } catch (const Error& e) {
                if (e.code() != Errc::io)
                  return "not io: " + std::string(e.what());
                if (e.sys_errno() != EACCES)
                  return "errno " + std::to_string(e.sys_errno()) + ": " +
                         e.what();
              }
              return "";
            }),
            "");
}

TEST(MappedFile, ModeIsCaptured) {
  TempDir dir;
  write_file(dir / "exe", "x", 0755);
  write_file(dir / "ro", "x", 0444);
  write_file(dir / "odd", "x", 04711);
  EXPECT_EQ(MappedFile::open(dir / "exe").mode(), 0755u);
  EXPECT_EQ(MappedFile::open(dir / "ro").mode(), 0444u);
  EXPECT_EQ(MappedFile::open(dir / "odd").mode(), 04711u);
}

TEST(MappedFile, MoveTransfersOwnership) {
  TempDir dir;
  write_file(dir / "a", "abc", 0600);
  MappedFile a = MappedFile::open(dir / "a");
  const u8* data = a.data();
  MappedFile b(std::move(a));
  EXPECT_EQ(b.data(), data);
  EXPECT_EQ(b.size(), 3u);
  EXPECT_EQ(b.mode(), 0600u);
  EXPECT_EQ(a.data(), nullptr);  // NOLINT(bugprone-use-after-move)
  EXPECT_EQ(a.size(), 0u);       // NOLINT(bugprone-use-after-move)

  write_file(dir / "c", "defg");
  MappedFile c = MappedFile::open(dir / "c");
  c = std::move(b);
  EXPECT_EQ(c.size(), 3u);
  EXPECT_EQ(c.data()[2], 'c');
  MappedFile& same = c;
  c = std::move(same);  // self-move is harmless
  EXPECT_EQ(c.size(), 3u);
}

TEST(MappedFile, MapIsASnapshotOfTheName) {
  // The map stays valid after the file is unlinked.
  TempDir dir;
  write_file(dir / "gone", "still here");
  MappedFile f = MappedFile::open(dir / "gone");
  std::filesystem::remove(dir / "gone");
  EXPECT_EQ(f.data()[0], 's');
}

}  // namespace
}  // namespace libpkg
