// SPDX-License-Identifier: BSD-3-Clause
// AtomicFile: the target appears complete on commit, with the requested
// mode, or not at all.
#include "libpkg/base/atomic_file.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstddef>
#include <optional>
#include <string>
#include <thread>

#include "libpkg/base/error.hpp"
#include "libpkg/base/signal_cleanup.hpp"
#include "temp_dir.hpp"

namespace libpkg {
namespace {

using testing::as_bytes;
using testing::list_dir;
using testing::read_file;
using testing::stat_of;
using testing::TempDir;
using testing::write_file;

TEST(AtomicFile, CommitRenamesWithMode) {
  TempDir dir;
  auto target = dir / "out.so";
  {
    AtomicFile f = AtomicFile::create(target, 0751);
    EXPECT_EQ(f.target(), target);
    // The temporary is an unnamed O_TMPFILE inode where the filesystem
    // supports it, else a hidden file next to the target.
    if (!f.temp_path().empty()) {
      EXPECT_EQ(f.temp_path().parent_path(), dir.path());
      EXPECT_TRUE(std::filesystem::exists(f.temp_path()));
    }
    EXPECT_FALSE(std::filesystem::exists(target));
    f.write(std::string_view("hello "));
    f.write(as_bytes("world"));
    f.commit();
    if (!f.temp_path().empty()) {
      EXPECT_FALSE(std::filesystem::exists(f.temp_path()));
    }
  }
  EXPECT_EQ(read_file(target), "hello world");
  EXPECT_EQ(stat_of(target).st_mode & 07777, 0751u);
  EXPECT_EQ(list_dir(dir.path()), std::vector<std::string>{"out.so"});
}

// An existing FIFO is written into (a reader gets the bytes) and stays a
// FIFO; without a reader it is refused at once; /dev/null stays the null
// device; a directory is refused.
TEST(AtomicFile, NonRegularTargetsAreWrittenIntoNotReplaced) {
  TempDir dir;
  auto fifo = dir / "fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_THROW(AtomicFile::create(fifo), Error);  // no reader: no wait
  std::string got;
  std::thread reader([&] {
    int fd = ::open(fifo.c_str(), O_RDONLY);
    char buf[64];
    for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;)
      got.append(buf, static_cast<size_t>(n));
    ::close(fd);
  });
  // The reader's open is what lets ours succeed: retry until it is there.
  std::optional<AtomicFile> f;
  for (int i = 0; i < 500 && !f; ++i) {
    try {
      f.emplace(AtomicFile::create(fifo));
    } catch (const Error&) {
      ::usleep(10000);
    }
  }
  ASSERT_TRUE(f.has_value());
  EXPECT_TRUE(f->writes_through());
  f->pwrite(6, as_bytes("world"));
  f->pwrite(0, as_bytes("hello "));
  f->commit();
  f.reset();
  reader.join();
  EXPECT_EQ(got, "hello world");
  EXPECT_TRUE(S_ISFIFO(stat_of(fifo).st_mode));
  EXPECT_EQ(list_dir(dir.path()), std::vector<std::string>{"fifo"});

  AtomicFile null = AtomicFile::create("/dev/null", 0755);
  null.write(std::string_view("discarded"));
  null.commit();
  EXPECT_TRUE(S_ISCHR(stat_of("/dev/null").st_mode));
  EXPECT_EQ(stat_of("/dev/null").st_mode & 0777, 0666u);

  std::filesystem::create_directory(dir / "d");
  EXPECT_THROW(AtomicFile::create(dir / "d"), Error);
}

// Links::keep rewrites a hard-linked file in its inode; the default replaces
// this name only.
TEST(AtomicFile, HardLinksKeptOnlyWhenAsked) {
  TempDir dir;
  write_file(dir / "a", "old contents");
  ASSERT_EQ(::link((dir / "a").c_str(), (dir / "b").c_str()), 0);
  {
    AtomicFile f = AtomicFile::create(dir / "a", 0644, AtomicFile::Links::keep);
    f.write(std::string_view("new"));
    f.commit();
  }
  EXPECT_EQ(read_file(dir / "b"), "new");
  EXPECT_EQ(stat_of(dir / "a").st_ino, stat_of(dir / "b").st_ino);
  {
    AtomicFile f = AtomicFile::create(dir / "a");
    f.write(std::string_view("newer"));
    f.commit();
  }
  EXPECT_EQ(read_file(dir / "a"), "newer");
  EXPECT_EQ(read_file(dir / "b"), "new");
}

// The copy has the source's bytes and permission bits plus add_mode, also
// through a symlink; a missing source is an io error naming it, and no
// target appears.
TEST(AtomicFile, CopyFileAtomically) {
  TempDir dir;
  std::string big(3 << 20, 'x');
  big[12345] = 'y';
  write_file(dir / "src.so", big, 0555);
  std::filesystem::create_symlink("src.so", dir.path() / "link.so");
  copy_file_atomically(dir / "link.so", dir / "plain.so");
  EXPECT_EQ(read_file(dir / "plain.so"), big);
  EXPECT_EQ(stat_of(dir / "plain.so").st_mode & 07777, 0555u);
  copy_file_atomically(dir / "src.so", dir / "editable.so", 0644);
  EXPECT_EQ(stat_of(dir / "editable.so").st_mode & 07777, 0755u);
  try {
    copy_file_atomically(dir / "absent.so", dir / "never.so");
    FAIL() << "copied a missing file";
  } catch (const libpkg::Error& e) {
    EXPECT_EQ(e.code(), libpkg::Errc::io);
    EXPECT_NE(std::string(e.what()).find("absent.so"), std::string::npos);
  }
  EXPECT_FALSE(std::filesystem::exists(dir / "never.so"));
}

TEST(AtomicFile, ModeIsNotFilteredByUmask) {
  TempDir dir;
  mode_t old = ::umask(077);
  {
    AtomicFile f = AtomicFile::create(dir / "x", 0644);
    f.set_mode(0755);
    f.commit(/*durable=*/true);
  }
  ::umask(old);
  EXPECT_EQ(stat_of(dir / "x").st_mode & 07777, 0755u);
}

TEST(AtomicFile, DestroyWithoutCommitLeavesTargetUntouched) {
  TempDir dir;
  auto target = dir / "lib.so";
  write_file(target, "original", 0600);
  ino_t ino = stat_of(target).st_ino;
  std::filesystem::path temp;
  {
    AtomicFile f = AtomicFile::create(target);
    temp = f.temp_path();
    f.write(std::string_view("half-written"));
  }
  EXPECT_FALSE(std::filesystem::exists(temp));
  EXPECT_EQ(read_file(target), "original");
  EXPECT_EQ(stat_of(target).st_ino, ino);
  EXPECT_EQ(stat_of(target).st_mode & 07777, 0600u);
  EXPECT_EQ(list_dir(dir.path()), std::vector<std::string>{"lib.so"});
}

TEST(AtomicFile, ExceptionUnwindRemovesTemp) {
  TempDir dir;
  try {
    AtomicFile f = AtomicFile::create(dir / "t");
    f.write(std::string_view("x"));
    throw Error(Errc::usage, "", "caller gave up");
  } catch (const Error&) {
  }
  EXPECT_TRUE(list_dir(dir.path()).empty());
}

TEST(AtomicFile, CommitReplacesExistingTarget) {
  TempDir dir;
  auto target = dir / "t";
  write_file(target, "old contents that are longer");
  ino_t ino = stat_of(target).st_ino;
  AtomicFile f = AtomicFile::create(target, 0644);
  f.write(std::string_view("new"));
  f.commit();
  EXPECT_EQ(read_file(target), "new");
  EXPECT_NE(stat_of(target).st_ino, ino);
}

TEST(AtomicFile, TempNameIsHiddenAndDerivedFromTarget) {
  TempDir dir;
  AtomicFile f = AtomicFile::create(dir / "name.whl");
  if (f.temp_path().empty()) {
    // O_TMPFILE: nothing is visible in the directory at all.
    EXPECT_TRUE(list_dir(dir.path()).empty());
    return;
  }
  std::string temp = f.temp_path().filename().string();
  EXPECT_TRUE(temp.starts_with(".name.whl.libpkg-")) << temp;
}

TEST(AtomicFile, RelativeTargetUsesCurrentDirectory) {
  TempDir dir;
  auto cwd = std::filesystem::current_path();
  std::filesystem::current_path(dir.path());
  {
    AtomicFile f = AtomicFile::create("rel");
    f.write(std::string_view("r"));
    f.commit();
  }
  std::filesystem::current_path(cwd);
  EXPECT_EQ(read_file(dir / "rel"), "r");
}

TEST(AtomicFile, MissingDirectoryIsIoError) {
  TempDir dir;
  try {
    AtomicFile::create(dir / "no" / "such" / "file");
    FAIL() << "no exception";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::io);
    EXPECT_EQ(e.file(), (dir / "no" / "such" / "file").string());
  }
}

TEST(AtomicFile, PwriteAndTruncate) {
  TempDir dir;
  AtomicFile f = AtomicFile::create(dir / "t");
  f.write(std::string_view("0123456789"));
  f.pwrite(2, as_bytes("ab"));
  f.write(std::string_view("X"));  // pwrite did not move the write position
  f.pwrite(14, as_bytes("Z"));     // past the end: a hole of zeros
  f.commit();
  EXPECT_EQ(read_file(dir / "t"), std::string("01ab456789X\0\0\0Z", 15));

  AtomicFile g = AtomicFile::create(dir / "u");
  g.write(std::string_view("0123456789"));
  g.truncate(4);
  g.truncate(6);
  g.commit();
  EXPECT_EQ(read_file(dir / "u"), std::string("0123\0\0", 6));
}

TEST(AtomicFile, CopyFrom) {
  TempDir dir;
  std::string big(3 << 20, '\0');
  for (size_t i = 0; i < big.size(); ++i)
    big[i] = static_cast<char>(i * 7 + i / 4096);
  write_file(dir / "src", big);
  int src = ::open((dir / "src").c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(src, 0);
  AtomicFile f = AtomicFile::create(dir / "dst");
  f.copy_from(src, 100, big.size() - 100, 0);
  f.copy_from(src, 0, 100, big.size() - 100);
  f.copy_from(src, 0, 0, 0);  // nothing to copy
  f.commit();
  EXPECT_EQ(read_file(dir / "dst"), big.substr(100) + big.substr(0, 100));

  ::close(src);
}

// Asking for more than the source holds is an error, not a silently
// zero-padded copy: the input was truncated under us, or the caller is wrong.
TEST(AtomicFile, CopyFromPastEndOfSourceIsAnError) {
  TempDir dir;
  write_file(dir / "src", std::string(100, 'a'));
  int src = ::open((dir / "src").c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(src, 0);
  AtomicFile f = AtomicFile::create(dir / "dst");
  try {
    f.copy_from(src, 90, 20, 0);
    FAIL() << "no exception; copied " << ::lseek(f.fd(), 0, SEEK_END)
           << " bytes";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::io);
  }
  ::close(src);
}

// Holes in the source stay holes in the copy.
TEST(AtomicFile, CopyFromKeepsHoles) {
  TempDir dir;
  constexpr off_t kSize = 64 << 20;
  {
    int fd =
        ::open((dir / "sparse").c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::pwrite(fd, "head", 4, 0), 4);
    ASSERT_EQ(::pwrite(fd, "tail", 4, kSize - 4), 4);
    ::close(fd);
  }
  if (stat_of(dir / "sparse").st_blocks * 512 >= kSize)
    GTEST_SKIP() << "the filesystem does not keep holes";
  int src = ::open((dir / "sparse").c_str(), O_RDONLY | O_CLOEXEC);
  AtomicFile f = AtomicFile::create(dir / "copy");
  f.copy_from(src, 0, kSize, 0);
  f.commit();
  ::close(src);
  struct stat st = stat_of(dir / "copy");
  EXPECT_EQ(st.st_size, kSize);
  EXPECT_LT(st.st_blocks * 512, kSize / 4);
  std::string copy = read_file(dir / "copy");
  EXPECT_EQ(copy.substr(0, 4), "head");
  EXPECT_EQ(copy.substr(kSize - 4), "tail");
  EXPECT_EQ(copy.find_first_not_of('\0', 4), static_cast<size_t>(kSize - 4));
}

TEST(AtomicFile, MoveConstructedOwnerCommits) {
  TempDir dir;
  AtomicFile a = AtomicFile::create(dir / "m");
  auto temp = a.temp_path();
  AtomicFile b(std::move(a));
  EXPECT_EQ(b.temp_path(), temp);
  EXPECT_EQ(a.fd(), -1);  // NOLINT(bugprone-use-after-move)
  b.write(std::string_view("moved"));
  b.commit();
  EXPECT_EQ(read_file(dir / "m"), "moved");
}

TEST(AtomicFile, MovedFromDoesNotDiscard) {
  TempDir dir;
  {
    AtomicFile a = AtomicFile::create(dir / "m");
    {
      AtomicFile b(std::move(a));
      b.write(std::string_view("x"));
    }
    // b discarded the temporary; a (moved from) must do nothing.
    EXPECT_TRUE(list_dir(dir.path()).empty());
  }
  EXPECT_TRUE(list_dir(dir.path()).empty());
}

// Makes every openat(O_TMPFILE) of this process fail with EOPNOTSUPP, as on
// a file system without O_TMPFILE, so AtomicFile takes its named-temporary
// path. Returns false when the filter cannot be installed.
bool refuse_o_tmpfile() {
#if defined(__x86_64__)
  constexpr u32 kArch = AUDIT_ARCH_X86_64;
#elif defined(__aarch64__)
  constexpr u32 kArch = AUDIT_ARCH_AARCH64;
#else
  return false;
#endif
  constexpr u32 kTmpfileBit = O_TMPFILE & ~O_DIRECTORY;
  // Little-endian: the low 32 bits of openat's flags argument.
  sock_filter code[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, kArch, 1, 0),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_openat, 0, 3),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, args[2])),
      BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, kTmpfileBit, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EOPNOTSUPP),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  sock_fprog prog{static_cast<unsigned short>(sizeof code / sizeof code[0]),
                  code};
  return ::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 &&
         ::prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) == 0;
}

// Runs `body` in a child without O_TMPFILE; returns its wait status.
template <typename Body>
int in_child_without_o_tmpfile(Body&& body) {
  pid_t pid = ::fork();
  if (pid == 0) {
    if (!refuse_o_tmpfile()) ::_exit(3);
    body();
    ::_exit(0);
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

TEST(AtomicFile, SigtermDuringAWriteLeavesNoNamedTemporary) {
  TempDir dir;
  int status = in_child_without_o_tmpfile([&] {
    AtomicFile f = AtomicFile::create(dir / "out.bin");
    if (f.temp_path().empty()) ::_exit(4);  // O_TMPFILE was not refused
    f.write("half of a long output");
    ::raise(SIGTERM);
    ::_exit(5);
  });
  ASSERT_TRUE(WIFSIGNALED(status)) << "status " << status;
  EXPECT_EQ(WTERMSIG(status), SIGTERM);
  EXPECT_EQ(list_dir(dir.path()), std::vector<std::string>{});
}

TEST(AtomicFile, CommittedOrDiscardedFilesAreNoLongerCovered) {
  // After commit the target is the caller's; after a discard the temporary
  // is gone. A later SIGTERM must touch neither (released registrations).
  TempDir dir;
  int status = in_child_without_o_tmpfile([&] {
    {
      AtomicFile f = AtomicFile::create(dir / "kept.bin");
      f.write("done");
      f.commit();
    }
    { AtomicFile g = AtomicFile::create(dir / "dropped.bin"); }
    // Another registration keeps the handler in place; it covers only this.
    SignalCleanup scratch(dir / "scratch");
    ::raise(SIGTERM);
  });
  ASSERT_TRUE(WIFSIGNALED(status)) << "status " << status;
  EXPECT_EQ(list_dir(dir.path()), std::vector<std::string>{"kept.bin"});
  EXPECT_EQ(read_file(dir / "kept.bin"), "done");
}

}  // namespace
}  // namespace libpkg
