// SPDX-License-Identifier: BSD-3-Clause
// The nightly's file readers: a log's tail read backwards (against a naive
// reference over many line layouts, across 64 KiB block edges, with the
// bytes read counted), and artifacts opened below the nightly directory
// without following a symlink anywhere on the way (both the openat2 path
// and the per-component fallback).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <string>

#include "libpkg/base/error.hpp"
#include "libpkg/base/scratch_dir.hpp"
#include "libpkg/nightly/control.hpp"
#include "nightly/open_beneath.hpp"

namespace nl = libpkg::nightly;
namespace fs = std::filesystem;

namespace {

// The last `lines` lines of `text` the plain way (a last line without '\n'
// counts; 0 means all).
std::string reference_tail(const std::string& text, std::size_t lines) {
  if (lines == 0) return text;
  std::size_t end = text.size();
  if (end > 0 && text[end - 1] == '\n') --end;
  std::size_t seen = 0;
  for (std::size_t i = end; i > 0; --i)
    if (text[i - 1] == '\n' && ++seen == lines) return text.substr(i);
  return text;
}

std::string tail_of(const fs::path& file, std::size_t lines,
                    std::uint64_t* read = nullptr) {
  int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  EXPECT_GE(fd, 0);
  struct stat st {};
  ::fstat(fd, &st);
  auto size = static_cast<std::uint64_t>(st.st_size);
  std::uint64_t start = nl::tail_start(fd, size, lines, file.string(), read);
  std::string tail(static_cast<std::size_t>(size - start), '\0');
  EXPECT_EQ(::pread(fd, tail.data(), tail.size(), static_cast<off_t>(start)),
            static_cast<ssize_t>(tail.size()));
  ::close(fd);
  return tail;
}

void write(const fs::path& file, const std::string& text) {
  std::ofstream(file, std::ios::binary) << text;
}

}  // namespace

TEST(NightlyTail, SmallCases) {
  auto dir = libpkg::ScratchDir::in_temp("nightly-tail-");
  auto file = dir.path() / "log";
  struct Case {
    std::string text;
    std::size_t lines;
    std::string want;
  } cases[] = {
      {"", 3, ""},
      {"a\nb\nc\n", 2, "b\nc\n"},
      {"a\nb\nc\n", 0, "a\nb\nc\n"},
      {"a\nb\nc\n", 9, "a\nb\nc\n"},
      {"a\nb\nc", 1, "c"},  // no newline at the end: still a line
      {"a\nb\nc", 2, "b\nc"},
      {"a\r\nb\r\nc\r\n", 2, "b\r\nc\r\n"},  // CRLF lines
      {"\n\n\n", 2, "\n\n"},
      {"only", 1, "only"},
      {"x\n", 1, "x\n"},
  };
  for (const auto& c : cases) {
    write(file, c.text);
    EXPECT_EQ(tail_of(file, c.lines), c.want) << c.text << " / " << c.lines;
    EXPECT_EQ(nl::tail_lines(file, c.lines), c.want);
  }
}

TEST(NightlyTail, MatchesTheReferenceAcrossBlockEdges) {
  auto dir = libpkg::ScratchDir::in_temp("nightly-tail-");
  auto file = dir.path() / "log";
  std::mt19937 rng(20261127);
  for (int round = 0; round < 40; ++round) {
    // Lines of 0 to 100k bytes, so some span one or more 64 KiB blocks.
    std::string text;
    int n = static_cast<int>(rng() % 30);
    for (int i = 0; i < n; ++i) {
      std::size_t len = rng() % 4 == 0 ? rng() % 100000 : rng() % 200;
      text.append(len, static_cast<char>('a' + i % 26));
      if (i + 1 < n || rng() % 2) text += rng() % 3 == 0 ? "\r\n" : "\n";
    }
    write(file, text);
    for (std::size_t lines : {0, 1, 2, 3, 7, 29, 31, 100})
      ASSERT_EQ(tail_of(file, lines), reference_tail(text, lines))
          << "round " << round << ", " << lines << " lines";
  }
}

TEST(NightlyTail, ReadsOnlyTheTailOfAHugeSparseLog) {
  auto dir = libpkg::ScratchDir::in_temp("nightly-tail-");
  auto file = dir.path() / "log";
  {
    std::ofstream out(file, std::ios::binary);
    out << "first\n";
  }
  fs::resize_file(file, 512ull << 20);  // a 512 MiB hole
  {
    std::ofstream out(file, std::ios::binary | std::ios::app);
    for (int i = 0; i < 10; ++i) out << "line " << i << "\n";
  }
  std::uint64_t read = 0;
  EXPECT_EQ(tail_of(file, 3, &read), "line 7\nline 8\nline 9\n");
  EXPECT_LE(read, 64u * 1024);
  // More lines than the file has: every byte is read, the tail is all of it
  // (a smaller hole: reading 512 MiB of zeros would only cost time).
  fs::resize_file(file, 0);
  {
    std::ofstream out(file, std::ios::binary);
    out << "first\n";
  }
  fs::resize_file(file, 8ull << 20);
  {
    std::ofstream out(file, std::ios::binary | std::ios::app);
    for (int i = 0; i < 10; ++i) out << "line " << i << "\n";
  }
  int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  EXPECT_EQ(nl::tail_start(fd, fs::file_size(file), 12, file.string(), &read),
            0u);
  ::close(fd);
  EXPECT_EQ(read, fs::file_size(file));
}

namespace {

struct Tree {
  libpkg::ScratchDir dir = libpkg::ScratchDir::in_temp("nightly-beneath-");
  fs::path base = dir.path() / "nightly";
  fs::path outside = dir.path() / "outside";
  Tree() {
    fs::create_directories(base / "job" / "sub");
    fs::create_directories(outside);
    write(base / "job" / "a.whl", "inside");
    write(outside / "secret.whl", "outside");
    fs::create_symlink(outside / "secret.whl", base / "job" / "link.whl");
    fs::create_directory_symlink(outside, base / "job" / "sub" / "dir");
    fs::create_symlink(outside / "secret.whl", base / "job" / "filelink");
    ::mkfifo((base / "job" / "fifo.whl").c_str(), 0644);
  }
};

using Opener = libpkg::Fd (*)(const fs::path&, const fs::path&);

void expect_refused(Opener open, const Tree& t, const std::string& rel,
                    const std::string& says) {
  try {
    open(t.base, rel);
    ADD_FAILURE() << rel << " was opened";
  } catch (const libpkg::Error& e) {
    EXPECT_NE(std::string(e.what()).find(says), std::string::npos)
        << rel << ": " << e.what();
  }
}

void check_opener(Opener open) {
  Tree t;
  libpkg::Fd fd = open(t.base, "job/a.whl");
  char buf[16] = {};
  EXPECT_EQ(::read(fd.get(), buf, sizeof buf), 6);
  EXPECT_STREQ(buf, "inside");
  expect_refused(open, t, "job/link.whl", "symlink");
  // The case O_NOFOLLOW alone let through: a directory symlink on the way.
  expect_refused(open, t, "job/sub/dir/secret.whl", "symlink");
  expect_refused(open, t, "job/filelink/x", "symlink");
  expect_refused(open, t, "../outside/secret.whl", "leaves the nightly");
  expect_refused(open, t, (t.outside / "secret.whl").string(),
                 "leaves the nightly");
  expect_refused(open, t, "job/fifo.whl", "not a regular file");
  expect_refused(open, t, "job/sub", "not a regular file");
  try {
    open(t.base, "job/missing.whl");
    ADD_FAILURE() << "a missing file was opened";
  } catch (const libpkg::Error& e) {
    EXPECT_EQ(e.code(), libpkg::Errc::not_found) << e.what();
  }
}

}  // namespace

TEST(NightlyOpenBeneath, Openat2OrItsFallback) {
  check_opener(nl::open_beneath);
}

TEST(NightlyOpenBeneath, ComponentWalk) { check_opener(nl::open_beneath_walk); }
