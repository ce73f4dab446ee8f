// SPDX-License-Identifier: BSD-3-Clause
// memoized_owners (libpkg/bundle/sbom.hpp): the OS package owners of the
// grafts, memoized in the chunk cache (archive/file_memo.hpp) under the
// files' and the package database's identities.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "libpkg/bundle/sbom.hpp"

namespace {

namespace fs = std::filesystem;
namespace bd = libpkg::bundle;
using libpkg::archive::ChunkCache;
using libpkg::archive::ChunkCacheOptions;

class OwnerMemo : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "owner-memo-XXXXXX");
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    status_ = dir_ / "status";
    diversions_ = dir_ / "diversions";  // absent until a test writes it
    lib_ = dir_ / "libx.so.1";
    write(status_, "Package: x\n");
    write(lib_, "ELF");
    fs::create_symlink(lib_.filename(), dir_ / "libx.so");
    // Files changed in the last two seconds are never memoized.
    std::this_thread::sleep_for(std::chrono::milliseconds(2100));
  }
  void TearDown() override { fs::remove_all(dir_); }

  static void write(const fs::path& p, const std::string& text) {
    std::ofstream(p, std::ios::trunc) << text;
  }
  std::shared_ptr<ChunkCache> cache() const {
    ChunkCacheOptions o;
    o.dir = dir_ / "cache";
    return std::make_shared<ChunkCache>(o);
  }
  // A lookup that counts its calls and says libx belongs to package x.
  bd::OwnerLookup counting() {
    return [this](const std::vector<fs::path>& files) {
      ++calls_;
      std::map<fs::path, bd::OsPackage> out;
      for (const auto& f : files)
        if (f.filename().string().starts_with("libx"))
          out[f] = {"libx1", "1.2-3", "amd64"};
      return out;
    };
  }
  bd::OwnerLookup memoized(ChunkCache* c) {
    return bd::memoized_owners(counting(), c, "test", {status_, diversions_});
  }

  fs::path dir_, status_, diversions_, lib_;
  int calls_ = 0;
};

void expect_libx(const std::map<fs::path, bd::OsPackage>& owners,
                 const fs::path& file) {
  ASSERT_EQ(owners.size(), 1u);
  const bd::OsPackage& p = owners.at(file);
  EXPECT_EQ(p.name, "libx1");
  EXPECT_EQ(p.version, "1.2-3");
  EXPECT_EQ(p.arch, "amd64");
  EXPECT_EQ(p.purl(), "pkg:deb/debian/libx1@1.2-3?arch=amd64");
  EXPECT_EQ(p.publisher, "Debian");
}

TEST_F(OwnerMemo, AskedOncePerCacheEvenAcrossProcesses) {
  auto c = cache();
  const std::vector<fs::path> files{dir_ / "libx.so", dir_ / "other.so"};
  expect_libx(memoized(c.get())(files), dir_ / "libx.so");
  expect_libx(memoized(c.get())(files), dir_ / "libx.so");
  EXPECT_EQ(calls_, 1);
  // Another ChunkCache on the directory (the next job of a nightly).
  expect_libx(memoized(cache().get())(files), dir_ / "libx.so");
  EXPECT_EQ(calls_, 1);
  // Other files asked: another answer.
  expect_libx(memoized(c.get())({dir_ / "libx.so"}), dir_ / "libx.so");
  EXPECT_EQ(calls_, 2);
}

TEST_F(OwnerMemo, ChangedDatabaseAsksAgain) {
  auto c = cache();
  const std::vector<fs::path> files{dir_ / "libx.so"};
  memoized(c.get())(files);
  // An install rewrites the status file: asked again, and not memoized
  // while it is younger than two seconds.
  write(status_, "Package: x\nPackage: y\n");
  memoized(c.get())(files);
  memoized(c.get())(files);
  EXPECT_EQ(calls_, 3);
}

TEST_F(OwnerMemo, DatabaseFileThatAppearsAsksAgain) {
  auto c = cache();
  const std::vector<fs::path> files{dir_ / "libx.so"};
  memoized(c.get())(files);
  write(diversions_, "/usr/lib/libx.so\n");
  memoized(c.get())(files);
  EXPECT_EQ(calls_, 2);
}

TEST_F(OwnerMemo, ChangedOrRepointedLibraryAsksAgain) {
  auto c = cache();
  const std::vector<fs::path> files{dir_ / "libx.so"};
  memoized(c.get())(files);
  // The symlink now resolves to another file (of the same content).
  write(dir_ / "libx.so.2", "ELF");
  fs::remove(dir_ / "libx.so");
  fs::create_symlink("libx.so.2", dir_ / "libx.so");
  memoized(c.get())(files);
  EXPECT_EQ(calls_, 2);
  // The library itself rewritten.
  write(dir_ / "libx.so.2", "ELF2");
  memoized(c.get())(files);
  EXPECT_EQ(calls_, 3);
}

TEST_F(OwnerMemo, ChangeDuringTheLookupIsNotStored) {
  auto c = cache();
  const std::vector<fs::path> files{dir_ / "libx.so"};
  bd::OwnerLookup racing = bd::memoized_owners(
      [&](const std::vector<fs::path>& asked) {
        write(status_, "Package: z\n");  // dpkg ran meanwhile
        return counting()(asked);
      },
      c.get(), "test", {status_, diversions_});
  expect_libx(racing(files), dir_ / "libx.so");
  EXPECT_EQ(calls_, 1);
  // Nothing was stored under the old state or the new one.
  std::this_thread::sleep_for(std::chrono::milliseconds(2100));
  memoized(c.get())(files);
  EXPECT_EQ(calls_, 2);
  memoized(c.get())(files);
  EXPECT_EQ(calls_, 2);
}

TEST_F(OwnerMemo, WithoutACacheAskedEveryTime) {
  const std::vector<fs::path> files{dir_ / "libx.so"};
  memoized(nullptr)(files);
  memoized(nullptr)(files);
  EXPECT_EQ(calls_, 2);
}

}  // namespace
