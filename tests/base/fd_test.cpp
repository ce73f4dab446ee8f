// SPDX-License-Identifier: BSD-3-Clause
// Fd, open_regular and the exact-transfer helpers; Result and attempt.
#include "libpkg/base/fd.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "libpkg/base/error.hpp"
#include "libpkg/base/result.hpp"
#include "temp_dir.hpp"
#include "unprivileged.hpp"

namespace libpkg {
namespace {

using testing::as_bytes;
using testing::TempDir;
using testing::write_file;

bool is_open(int fd) { return ::fcntl(fd, F_GETFD) >= 0; }

TEST(Fd, ClosesOnDestructionAndMoves) {
  TempDir dir;
  write_file(dir / "a", "abc");
  int raw;
  {
    Fd a = open_regular(dir / "a");
    raw = a.get();
    ASSERT_TRUE(is_open(raw));
    Fd b = std::move(a);
    EXPECT_FALSE(a);
    EXPECT_EQ(b.get(), raw);
    Fd c;
    c = std::move(b);
    EXPECT_EQ(c.get(), raw);
    EXPECT_TRUE(is_open(raw));
  }
  EXPECT_FALSE(is_open(raw));
}

TEST(Fd, ReleaseGivesUpOwnership) {
  TempDir dir;
  write_file(dir / "a", "abc");
  int raw;
  {
    Fd a = open_regular(dir / "a");
    raw = a.release();
    EXPECT_FALSE(a);
  }
  EXPECT_TRUE(is_open(raw));
  ::close(raw);
}

TEST(Fd, OpenRegularRefusesAFifoWithoutBlocking) {
  TempDir dir;
  ASSERT_EQ(::mkfifo((dir / "f").c_str(), 0600), 0);
  const auto start = std::chrono::steady_clock::now();
  Result<Fd> r = try_open_regular(dir / "f", "named.so");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code(), Errc::io);
  EXPECT_EQ(r.error().file(), "named.so");
  EXPECT_NE(r.error().message().find("not a regular file (a FIFO)"),
            std::string::npos);
  EXPECT_THROW(open_regular(dir / "f"), Error);
  EXPECT_THROW(open_regular(dir.path()), Error);  // a directory
}

TEST(Fd, MissingFileCarriesErrno) {
  TempDir dir;
  Result<Fd> r = try_open_regular(dir / "missing");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().sys_errno(), ENOENT);
  EXPECT_EQ(r.error().file(), (dir / "missing").string());
  try {
    r.value();
    FAIL() << "value() of an error must throw it";
  } catch (const Error& e) {
    EXPECT_EQ(e.sys_errno(), ENOENT);
  }
}

TEST(Fd, PermissionDeniedIsReported) {
  TempDir dir;
  std::filesystem::permissions(dir.path(), std::filesystem::perms(0755));
  write_file(dir / "secret",
             "\x7f"
             "ELF",
             0000);
  EXPECT_EQ(testing::run_unprivileged([&]() -> std::string {
              Result<Fd> r = try_open_regular(dir / "secret");
              if (r) return "opened a mode-000 file as nobody";
              if (r.error().sys_errno() != EACCES)
                return std::string("errno: ") + r.error().what();
              try {
                read_prefix(dir / "secret", 4);
                return "read_prefix of an unreadable file did not throw";
              } catch (const Error& e) {
                if (e.code() != Errc::io) return "not io";
              }
              return "";
            }),
            "");
}

TEST(Fd, ExactTransfersThroughAPipe) {
  // More than a pipe buffer (64 KiB) in both directions: write_all and
  // read_full must loop over short transfers.
  int p[2];
  ASSERT_EQ(::pipe(p), 0);
  Fd rd(p[0]), wr(p[1]);
  std::vector<u8> data(1 << 20);
  for (std::size_t i = 0; i < data.size(); ++i)
    data[i] = static_cast<u8>(i * 7);
  std::thread writer([&] {
    write_all(wr.get(), data, "pipe");
    wr.reset();
  });
  std::vector<u8> got(data.size() + 10);
  const std::size_t n = read_full(rd.get(), got, "pipe");
  writer.join();
  EXPECT_EQ(n, data.size());  // short at EOF, not an error
  got.resize(n);
  EXPECT_EQ(got, data);
}

TEST(Fd, PreadFullAndPrefix) {
  TempDir dir;
  write_file(dir / "a", "0123456789");
  Fd fd = open_regular(dir / "a");
  std::vector<u8> buf(4);
  EXPECT_EQ(pread_full(fd.get(), buf, 3, "a"), 4u);
  EXPECT_EQ(std::string(buf.begin(), buf.end()), "3456");
  EXPECT_EQ(pread_full(fd.get(), buf, 8, "a"), 2u);  // short at the end
  EXPECT_EQ(read_prefix(dir / "a", 3), std::vector<u8>({'0', '1', '2'}));
  EXPECT_EQ(read_prefix(dir / "a", 100).size(), 10u);
}

TEST(Fd, ReadChunksCoversTheWholeFile) {
  TempDir dir;
  std::string text(10000, 'x');
  for (std::size_t i = 0; i < text.size(); ++i) text[i] = char('a' + i % 26);
  write_file(dir / "a", text);
  Fd fd = open_regular(dir / "a");
  std::string back;
  int calls = 0;
  read_chunks(fd.get(), "a", 4096, [&](std::span<const u8> piece) {
    back.append(reinterpret_cast<const char*>(piece.data()), piece.size());
    ++calls;
  });
  EXPECT_EQ(back, text);
  EXPECT_EQ(calls, 3);
}

TEST(Fd, WriteErrorNamesTheFile) {
  TempDir dir;
  write_file(dir / "a", "x");
  Fd ro = open_regular(dir / "a");  // read-only: write fails with EBADF
  try {
    write_all(ro.get(), as_bytes("data"), "out.bin");
    FAIL() << "write to a read-only descriptor succeeded";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::io);
    EXPECT_EQ(e.file(), "out.bin");
    EXPECT_EQ(e.sys_errno(), EBADF);
  }
}

TEST(Result, AttemptCapturesOnlyTheExpectedCodes) {
  Result<int> ok = attempt({Errc::format}, [] { return 7; });
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok.value(), 7);
  Result<int> no = attempt(
      {Errc::format}, []() -> int { throw Error(Errc::format, "f", "bad"); });
  ASSERT_FALSE(no);
  EXPECT_EQ(no.error().code(), Errc::format);
  // An io error is never an answer: it propagates.
  EXPECT_THROW(attempt({Errc::format},
                       []() -> int { throw Error(Errc::io, "f", "EIO"); }),
               Error);
}

// read_regular_file: the whole file; a FIFO is refused at once (no writer
// ever comes: a blocking open would hang the test), a missing file is an io
// error carrying ENOENT.
TEST(ReadRegularFile, ReadsAllAndRefusesAFifoAtOnce) {
  TempDir dir;
  std::string big(200000, 'x');
  big += "end";
  write_file(dir / "a", big);
  EXPECT_EQ(read_regular_file(dir / "a"), big);
  ASSERT_EQ(::mkfifo((dir / "f").c_str(), 0600), 0);
  auto start = std::chrono::steady_clock::now();
  Result<std::string> r = try_read_regular_file(dir / "f", "f.json");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code(), Errc::io);
  EXPECT_EQ(r.error().file(), "f.json");
  EXPECT_NE(r.error().message().find("not a regular file (a FIFO)"),
            std::string::npos);
  try {
    read_regular_file(dir / "missing");
    ADD_FAILURE() << "no error for a missing file";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::io);
    EXPECT_EQ(e.sys_errno(), ENOENT);
  }
}

TEST(RequireDirectory, NamesWhatIsWrong) {
  TempDir dir;
  write_file(dir / "a", "x");
  EXPECT_NO_THROW(require_directory(dir.path(), "tree"));
  try {
    require_directory(dir / "none", "install tree");
    ADD_FAILURE() << "no error for a missing directory";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::io);
    EXPECT_EQ(e.sys_errno(), ENOENT);
    EXPECT_EQ(e.file(), (dir / "none").string());
    EXPECT_EQ(e.message(), "no such install tree");
  }
  try {
    require_directory(dir / "a", "install tree");
    ADD_FAILURE() << "no error for a file";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::io);
    EXPECT_EQ(e.sys_errno(), 0);  // there, so not "missing"
    EXPECT_EQ(e.message(), "install tree is not a directory (a regular file)");
  }
}

}  // namespace
}  // namespace libpkg
