// SPDX-License-Identifier: BSD-3-Clause
// Tar writer/reader/extractor unit tests: round trips, exact size
// prediction, zstd determinism across worker counts, hostile members.
#include "libpkg/archive/tar.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <zstd.h>

#include <fstream>
#include <random>

#include "../base/temp_dir.hpp"
#include "libpkg/base/error.hpp"

namespace libpkg::archive {
namespace {

namespace fs = std::filesystem;
using libpkg::testing::TempDir;

TarEntry file(std::string path, std::string text, unsigned mode = 0644) {
  TarEntry e;
  e.path = std::move(path);
  e.kind = TarKind::file;
  e.mode = mode;
  e.content = bytes_source(std::string_view(text), e.path);
  return e;
}

TarEntry symlink(std::string path, std::string target) {
  TarEntry e;
  e.path = std::move(path);
  e.kind = TarKind::symlink;
  e.mode = 0777;
  e.link_target = std::move(target);
  return e;
}

TarEntry directory(std::string path) {
  TarEntry e;
  e.path = std::move(path);
  e.kind = TarKind::directory;
  e.mode = 0755;
  return e;
}

std::vector<u8> to_bytes(const std::vector<TarEntry>& entries, i64 mtime = 0) {
  std::vector<u8> out;
  write_tar(entries, {mtime}, [&](std::span<const u8> b) {
    out.insert(out.end(), b.begin(), b.end());
  });
  return out;
}

std::string read_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

// Deterministic, moderately compressible bytes.
std::string pseudo_random_text(std::size_t n) {
  std::mt19937 rng(1234);
  std::string s(n, '\0');
  for (std::size_t i = 0; i < n; ++i) {
    s[i] = static_cast<char>('a' + rng() % 16);
  }
  return s;
}

TEST(TarWrite, SizeMatchesAndRoundTrips) {
  std::string long_name(150, 'n');
  std::vector<TarEntry> entries = {
      file("a/b.txt", "hello\n", 0755), directory("a/empty"),
      symlink("a/link", "b.txt"), file("long/" + long_name, "x"),
      file("big.bin", pseudo_random_text(300000))};
  std::vector<u8> bytes = to_bytes(entries, 1700000000);
  EXPECT_EQ(tar_size(entries, {1700000000}), bytes.size());
  EXPECT_EQ(bytes.size() % 512, 0u);

  TarReader reader = TarReader::open_memory(bytes, "mem.tar");
  TarMember m;
  std::vector<TarMember> seen;
  std::string big;
  while (reader.next(m)) {
    if (m.path == "big.bin") {
      reader.read_data([&](std::span<const u8> b) {
        big.append(reinterpret_cast<const char*>(b.data()), b.size());
      });
    }
    seen.push_back(m);
  }
  ASSERT_EQ(seen.size(), 5u);
  EXPECT_EQ(seen[0].path, "a/b.txt");
  EXPECT_EQ(seen[0].mode, 0755u);
  EXPECT_EQ(seen[0].mtime, 1700000000);
  EXPECT_EQ(seen[1].kind, TarKind::directory);
  EXPECT_EQ(seen[2].kind, TarKind::symlink);
  EXPECT_EQ(seen[2].link_target, "b.txt");
  EXPECT_EQ(seen[3].path, "long/" + long_name);
  EXPECT_EQ(big, pseudo_random_text(300000));
}

TEST(TarWrite, SameEntriesSameBytes) {
  auto make = [] {
    return std::vector<TarEntry>{file("x", "1"), file("y", "22")};
  };
  EXPECT_EQ(to_bytes(make(), 5), to_bytes(make(), 5));
  EXPECT_NE(to_bytes(make(), 5), to_bytes(make(), 6));
}

TEST(TarZst, IdenticalForAnyWorkerCountAndHasContentSize) {
  TempDir dir;
  // Several zstd jobs at level 3 (job size is a few MiB).
  std::vector<TarEntry> entries = {file("data", pseudo_random_text(24 << 20))};
  std::vector<std::string> outputs;
  for (unsigned threads : {1u, 2u, 4u}) {
    fs::path out = dir / ("t" + std::to_string(threads) + ".tar.zst");
    u64 size = write_tar_zst(out, entries, {0}, {3, threads, true});
    EXPECT_EQ(size, tar_size(entries));
    outputs.push_back(read_text(out));
  }
  EXPECT_EQ(outputs[0], outputs[1]);
  EXPECT_EQ(outputs[0], outputs[2]);
  unsigned long long content =
      ZSTD_getFrameContentSize(outputs[0].data(), outputs[0].size());
  EXPECT_EQ(content, tar_size(entries));

  // threads = 0 means one worker, not zstd's single-threaded mode.
  fs::path zero = dir / "t0.tar.zst";
  write_tar_zst(zero, entries, {0}, {3, 0, true});
  EXPECT_EQ(read_text(zero), outputs[0]);

  TarReader reader = TarReader::open_file(dir / "t2.tar.zst");
  TarMember m;
  ASSERT_TRUE(reader.next(m));
  EXPECT_EQ(m.size, u64{24} << 20);
}

// The streaming form writes what the file form writes; a smaller overlap
// changes the bytes but not the content, and stays independent of the
// worker count; the output stays within zstd_bound().
TEST(TarZst, StreamedOverlapLogIdenticalForAnyWorkerCount) {
  TempDir dir;
  std::vector<TarEntry> entries = {file("data", pseudo_random_text(24 << 20)),
                                   file("tail", "end\n")};
  const u64 size = tar_size(entries, {7});
  auto streamed = [&](ZstdOptions z, u64 announced) {
    std::string out;
    write_tar_zst(
        entries, {7}, z, announced,
        [&](std::span<const u8> b) {
          out.append(reinterpret_cast<const char*>(b.data()), b.size());
        },
        "mem.tar.zst");
    EXPECT_LE(out.size(), zstd_bound(size));
    return out;
  };
  const fs::path file_out = dir / "f.tar.zst";
  write_tar_zst(file_out, entries, {7}, {3, 2, true});
  EXPECT_EQ(streamed({3, 2, true}, size), read_text(file_out));

  const std::string one = streamed({3, 1, true, 3}, size);
  EXPECT_EQ(streamed({3, 2, true, 3}, size), one);
  EXPECT_NE(one, read_text(file_out));
  std::vector<u8> tar(tar_size(entries, {7}));
  ASSERT_EQ(ZSTD_decompress(tar.data(), tar.size(), one.data(), one.size()),
            tar.size());
  std::vector<u8> expected;
  write_tar(entries, {7}, [&](std::span<const u8> b) {
    expected.insert(expected.end(), b.begin(), b.end());
  });
  EXPECT_TRUE(tar == expected);

  // Progress: every 4 MiB of tar, then once at the end with the total.
  std::vector<std::pair<u64, u64>> calls;
  ZstdOptions reporting{3, 2, true, 3};
  reporting.progress = [&](u64 done, u64 total) {
    calls.emplace_back(done, total);
  };
  EXPECT_EQ(streamed(reporting, size), one);
  ASSERT_GE(calls.size(), 6u);
  for (std::size_t i = 1; i < calls.size(); ++i) {
    EXPECT_GE(calls[i].first, calls[i - 1].first);
    EXPECT_EQ(calls[i].second, tar.size());
  }
  EXPECT_EQ(calls.back().first, tar.size());

  EXPECT_THROW(streamed({3, 1, true, 10}, size), Error);
  EXPECT_THROW(streamed({3, 1, true, -1}, size), Error);
  // A tar size that is not the entries' is refused, not silently pledged.
  EXPECT_THROW(streamed({3, 1, true}, size + 512), Error);
}

TEST(TarBz2, ReadsBack) {
  TempDir dir;
  write_tar_bz2(dir / "x.tar.bz2", {file("f", "content")}, {0}, 9);
  TarReader reader = TarReader::open_file(dir / "x.tar.bz2");
  TarMember m;
  ASSERT_TRUE(reader.next(m));
  std::string text;
  reader.read_data([&](std::span<const u8> b) {
    text.append(reinterpret_cast<const char*>(b.data()), b.size());
  });
  EXPECT_EQ(text, "content");
  EXPECT_FALSE(reader.next(m));
  EXPECT_THROW(write_tar_bz2(dir / "y.tar.bz2", {}, {0}, 10), Error);
}

TEST(TarRead, MissingFileIsAnIoError) {
  TempDir dir;
  try {
    TarReader::open_file(dir / "absent.tar.bz2");
    FAIL() << "opened a missing file";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::io);
    EXPECT_NE(std::string(e.what()).find("absent.tar.bz2: cannot open"),
              std::string::npos)
        << e.what();
  }
}

TEST(TarRead, CorruptAndLimits) {
  std::vector<u8> bytes = to_bytes({file("a", "1"), file("b", "2")});
  std::vector<u8> garbage(1024, 0x41);
  EXPECT_THROW(
      {
        TarReader r = TarReader::open_memory(garbage, "junk");
        TarMember m;
        r.next(m);
      },
      Error);
  TarLimits limits;
  limits.max_entries = 1;
  TarReader r = TarReader::open_memory(bytes, "two", limits);
  TarMember m;
  EXPECT_TRUE(r.next(m));
  EXPECT_THROW(r.next(m), Error);
  limits = {};
  limits.max_total_size = 1;
  TarReader r2 = TarReader::open_memory(bytes, "two", limits);
  EXPECT_TRUE(r2.next(m));
  EXPECT_THROW(r2.next(m), Error);
}

// Refusals name the member by index and path (and both values).
TEST(TarRead, MessagesNameTheMember) {
  auto refusal = [](const std::vector<u8>& bytes, const TarLimits& limits,
                    bool read_data) -> std::string {
    try {
      TarReader r = TarReader::open_memory(bytes, "t.tar", limits);
      TarMember m;
      while (r.next(m))
        if (read_data) r.read_data([](std::span<const u8>) {});
    } catch (const Error& e) {
      EXPECT_EQ(e.file(), "t.tar");
      return e.message();
    }
    return "no error";
  };
  std::vector<u8> bytes =
      to_bytes({file("a", "1"), file("lib/b.so", std::string(600, 'x'))});
  TarLimits per_member;
  per_member.max_entry_size = 100;
  EXPECT_EQ(refusal(bytes, per_member, false),
            "member 2 (lib/b.so): size 600 bytes exceeds the per-member limit "
            "of 100 bytes");
  TarLimits total;
  total.max_total_size = 300;
  EXPECT_EQ(refusal(bytes, total, false),
            "member 2 (lib/b.so): members total 601 bytes, more than the "
            "limit of 300 bytes");
  TarLimits few;
  few.max_entries = 1;
  EXPECT_EQ(refusal(bytes, few, false),
            "member 2: more than the limit of 1 members");
  // Cut inside the second member: libarchive notices while reading its
  // header; the message says which member and what came before.
  std::vector<u8> cut(bytes.begin(), bytes.begin() + 1024 + 100);
  std::string message = refusal(cut, {}, true);
  EXPECT_EQ(
      message.rfind("member 2: reading its header (after member 1 (a))", 0), 0u)
      << message;
}

class ExtractTar : public ::testing::Test {
 protected:
  // Extracts `entries` into dir/"target"; returns the error message or "".
  std::string run(const std::vector<TarEntry>& entries) {
    bytes_ = to_bytes(entries);
    TarReader reader = TarReader::open_memory(bytes_, "evil.tar");
    try {
      extract_tar(reader, dir_ / "target");
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Errc::format) << e.what();
      return e.what();
    }
    return "";
  }
  TempDir dir_;
  std::vector<u8> bytes_;
};

TEST_F(ExtractTar, GoodTree) {
  EXPECT_EQ(run({file("d/f", "x", 0750), symlink("d/l", "f"),
                 symlink("d/up", "../d/f"), directory("e"), file("./g", "y")}),
            "");
  EXPECT_EQ(read_text(dir_ / "target/d/f"), "x");
  struct stat st {};
  ASSERT_EQ(::stat((dir_ / "target/d/f").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0750u);
  EXPECT_EQ(fs::read_symlink(dir_ / "target/d/l"), "f");
  EXPECT_TRUE(fs::is_directory(dir_ / "target/e"));
  EXPECT_EQ(read_text(dir_ / "target/g"), "y");
}

TEST_F(ExtractTar, DirectoriesNeverWorldWritable) {
  TarEntry sticky = directory("t");
  sticky.mode = 01777;
  TarEntry open = directory("w");
  open.mode = 0777;
  EXPECT_EQ(run({sticky, open, file("t/f", "x")}), "");
  struct stat st {};
  ASSERT_EQ(::stat((dir_ / "target/t").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0775u);
  ASSERT_EQ(::stat((dir_ / "target/w").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0775u);
}

TEST_F(ExtractTar, RefusesHostileMembers) {
  fs::create_directories(dir_ / "outside");
  EXPECT_NE(run({file("../x", "x")}), "");
  EXPECT_NE(run({file("a/../../x", "x")}), "");
  EXPECT_NE(run({file("/abs", "x")}), "");
  EXPECT_NE(run({symlink("esc", (dir_ / "outside").string())}), "");
  EXPECT_NE(run({symlink("esc", "..")}), "");
  EXPECT_NE(run({symlink("a/esc", "../..")}), "");
  // Chains: each link looks inside on its own but l2 would climb out.
  EXPECT_NE(run({symlink("a/l1", ".."), symlink("l2", "a/l1/..")}), "");
  EXPECT_FALSE(fs::exists(dir_ / "x"));
  EXPECT_TRUE(fs::is_empty(dir_ / "outside"));
}

TEST_F(ExtractTar, NeverWritesThroughSymlinks) {
  // A pre-existing symlink in the target pointing outside, and a member
  // symlink to an inside directory followed by a file through it.
  fs::create_directories(dir_ / "outside");
  fs::create_directories(dir_ / "target");
  fs::create_directory_symlink(dir_ / "outside", dir_ / "target/pre");
  EXPECT_NE(run({file("pre/pwned", "x")}), "");
  EXPECT_NE(
      run({directory("real"), symlink("ln", "real"), file("ln/through", "x")}),
      "");
  EXPECT_TRUE(fs::is_empty(dir_ / "outside"));
  EXPECT_FALSE(fs::exists(dir_ / "target/real/through"));
}

TEST_F(ExtractTar, RefusesOverwrite) {
  EXPECT_NE(run({file("f", "1"), file("f", "2")}), "");
  EXPECT_EQ(read_text(dir_ / "target/f"), "1");
}

}  // namespace
}  // namespace libpkg::archive
