// SPDX-License-Identifier: BSD-3-Clause
// Progress: the rendered line, and drawing only on a terminal or when forced.
#include "progress.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <thread>
#include <vector>

namespace pkgtool {
namespace {

// Everything written to a FILE* backed by memory.
class MemoryStream {
 public:
  MemoryStream() : file_(open_memstream(&buf_, &len_)) {}
  ~MemoryStream() {
    if (file_) std::fclose(file_);
    std::free(buf_);
  }
  std::FILE* file() { return file_; }
  std::string text() {
    std::fflush(file_);
    return {buf_, len_};
  }

 private:
  char* buf_ = nullptr;
  size_t len_ = 0;
  std::FILE* file_;
};

TEST(Progress, RenderWithTotal) {
  Progress p("repair", 2048, nullptr);
  EXPECT_EQ(p.render(), "repair:   0.0% (0 B / 2.0 KiB)");
  p.advance(1024);
  EXPECT_EQ(p.render(), "repair:  50.0% (1.0 KiB / 2.0 KiB)");
  p.advance(1024);
  EXPECT_EQ(p.render(), "repair: 100.0% (2.0 KiB / 2.0 KiB)");
  EXPECT_EQ(p.done(), 2048u);
}

TEST(Progress, RenderClampsAbove100) {
  Progress p("x", 10, nullptr);
  p.advance(25);
  EXPECT_EQ(p.render(), "x: 100.0% (25 B / 10 B)");
}

TEST(Progress, RenderWithoutTotal) {
  Progress p("hash", 0, nullptr);
  p.advance(5);
  EXPECT_EQ(p.render(), "hash: 5 B");
  p.advance(std::uint64_t{3} << 30);
  EXPECT_EQ(p.render(), "hash: 3.0 GiB");
  p.advance(std::uint64_t{1} << 50);
  EXPECT_EQ(p.render(), "hash: 1024.0 TiB");
}

TEST(Progress, NullStreamIsInactive) {
  Progress p("x", 10, nullptr, /*force=*/true);
  EXPECT_FALSE(p.active());
  p.advance(5);
  p.finish();
}

TEST(Progress, InactiveWhenNotATerminal) {
  std::FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  {
    Progress p("x", 10, f);
    EXPECT_FALSE(p.active());
    p.advance(5);
    p.finish();
  }
  EXPECT_EQ(std::ftell(f), 0);
  std::fclose(f);
}

TEST(Progress, ForceDrawsAndClears) {
  MemoryStream out;
  {
    Progress p("copy", 100, out.file(), /*force=*/true);
    EXPECT_TRUE(p.active());
    p.advance(50);  // the first advance always draws
    std::string drawn = out.text();
    EXPECT_EQ(drawn, "\r\033[Kcopy:  50.0% (50 B / 100 B)");
    p.advance(10);  // within 100 ms of the last draw: not redrawn
    EXPECT_EQ(out.text(), drawn);
    p.finish();
    EXPECT_EQ(out.text(), drawn + "\r\033[K");
    p.finish();  // idempotent
  }
  // The destructor after finish() draws nothing more.
  EXPECT_EQ(out.text(), "\r\033[Kcopy:  50.0% (50 B / 100 B)\r\033[K");
}

TEST(Progress, DestructorClearsTheLine) {
  MemoryStream out;
  {
    Progress p("a", 0, out.file(), true);
    p.advance(1);
  }
  std::string text = out.text();
  EXPECT_TRUE(text.ends_with("\r\033[K")) << text;
}

TEST(Progress, ActiveOnATerminal) {
  int master = ::posix_openpt(O_RDWR | O_NOCTTY);
  if (master < 0 || ::grantpt(master) != 0 || ::unlockpt(master) != 0)
    GTEST_SKIP() << "no pseudo-terminal available";
  int slave = ::open(::ptsname(master), O_RDWR | O_NOCTTY);
  ASSERT_GE(slave, 0);
  std::FILE* tty = ::fdopen(slave, "w");
  {
    Progress p("tty", 10, tty);
    EXPECT_TRUE(p.active());
  }
  std::fclose(tty);
  ::close(master);
}

TEST(Progress, ConcurrentAdvance) {
  MemoryStream out;
  Progress p("t", 0, out.file(), true);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 10000; ++i) p.advance(1);
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(p.done(), 40000u);
}

}  // namespace
}  // namespace pkgtool
