// SPDX-License-Identifier: BSD-3-Clause
// Scratch directories and interruption: the stale sweep removes only
// leftovers whose owner is gone (never a live one, whatever its pid says),
// the signal-safe removal copes with deep and read-only trees, and a SIGTERM
// removes registered scratch before the process dies by it, whichever thread
// the signal lands on and while other threads keep writing.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "libpkg/base/scratch_dir.hpp"
#include "libpkg/base/signal_cleanup.hpp"

namespace fs = std::filesystem;
using libpkg::ScratchDir;

namespace {

fs::path fresh_parent(const std::string& name) {
  fs::path p = fs::temp_directory_path() / ("libpkg-scratch-test-" + name +
                                            "-" + std::to_string(::getpid()));
  fs::remove_all(p);
  fs::create_directories(p);
  return p;
}

}  // namespace

TEST(ScratchDir, NameCarriesThePidAndStaleOnesAreSwept) {
  const fs::path parent = fresh_parent("sweep");
  fs::path kept;
  {
    ScratchDir live(parent, "x-");
    const std::string name = live.path().filename().string();
    EXPECT_EQ(name.rfind("x-pid" + std::to_string(::getpid()) + "-", 0), 0u)
        << name;
    kept = live.path();
    // A leftover of a dead process (nobody holds its lock): swept.
    fs::create_directories(parent / "x-pid999999-abcdef/deep/er");
    // A live owner, even one whose pid looks dead: its lock is held here on
    // another open file description, so it stays.
    fs::create_directories(parent / "x-pid999998-ghijkl");
    int held = ::open((parent / "x-pid999998-ghijkl").c_str(),
                      O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    ASSERT_GE(held, 0);
    ASSERT_EQ(::flock(held, LOCK_EX | LOCK_NB), 0);
    // Not ours to judge: other prefixes, other shapes, plain files.
    fs::create_directories(parent / "y-pid999999-abcdef");
    fs::create_directories(parent / "x-pid999999-toolong");
    std::ofstream(parent / "x-pid999997-mnopqr") << "file";

    EXPECT_EQ(ScratchDir::remove_stale(parent, "x-"), 1);
    EXPECT_FALSE(fs::exists(parent / "x-pid999999-abcdef"));
    EXPECT_TRUE(fs::exists(parent / "x-pid999998-ghijkl"));
    EXPECT_TRUE(fs::exists(live.path()));  // our own, locked
    EXPECT_TRUE(fs::exists(parent / "y-pid999999-abcdef"));
    EXPECT_TRUE(fs::exists(parent / "x-pid999999-toolong"));
    EXPECT_TRUE(fs::exists(parent / "x-pid999997-mnopqr"));
    ::close(held);
    // Its lock released, the next scratch directory sweeps it.
    ScratchDir next(parent, "x-");
    EXPECT_FALSE(fs::exists(parent / "x-pid999998-ghijkl"));
  }
  EXPECT_FALSE(fs::exists(kept));
  fs::remove_all(parent);
}

TEST(SignalCleanup, RemovesDeepAndReadOnlyTrees) {
  const fs::path parent = fresh_parent("tree");
  fs::path deep = parent / "t";
  for (int i = 0; i < 300; ++i) deep /= "d";
  fs::create_directories(deep);
  std::ofstream(deep / "f") << "x";
  std::ofstream(parent / "t/top") << "x";
  ::chmod((parent / "t/d").c_str(), 0500);  // read-only directory
  EXPECT_TRUE(libpkg::remove_tree_signal_safe((parent / "t").c_str()));
  EXPECT_FALSE(fs::exists(parent / "t"));
  EXPECT_TRUE(libpkg::remove_tree_signal_safe((parent / "absent").c_str()));
  fs::remove_all(parent);
}

TEST(SignalCleanup, SigtermRemovesScratchAndDiesByTheSignal) {
  const fs::path parent = fresh_parent("signal");
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ScratchDir scratch(parent, "s-");
    std::ofstream(scratch.path() / "payload") << "data";
    ::raise(SIGTERM);
    ::_exit(0);  // not reached
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM) << status;
  EXPECT_TRUE(fs::is_empty(parent));
  fs::remove_all(parent);
}

namespace {

// Runs `body` in a forked child and expects it to die by SIGTERM.
template <typename Body>
void expect_death_by_sigterm(Body&& body) {
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    body();
    ::_exit(0);  // not reached when the signal did its work
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM) << status;
}

}  // namespace

// The creating thread blocks SIGTERM while it creates and registers the
// path, so a signal sent in that window lands on another thread (a pool
// worker's). That handler must wait for the path instead of missing it.
TEST(SignalCleanup, SignalOnAnotherThreadWhileThePathIsCreated) {
  const fs::path parent = fresh_parent("window");
  expect_death_by_sigterm([&] {
    std::thread idle([] {
      for (;;) ::pause();
    });
    idle.detach();
    auto cleanup = libpkg::SignalCleanup::create([&] {
      fs::path dir = parent / "made";
      fs::create_directory(dir);
      ::kill(::getpid(), SIGTERM);  // delivered to `idle`: ours is blocked
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      return dir;
    });
    for (;;) ::pause();
  });
  EXPECT_TRUE(fs::is_empty(parent));
  fs::remove_all(parent);
}

// A thread that keeps creating entries in the registered directory while
// the handler removes it (up to 50000, as a pool extracting a wheel would):
// the handler rescans until the directory is gone.
TEST(SignalCleanup, RemovesScratchWhileAnotherThreadWritesIntoIt) {
  const fs::path parent = fresh_parent("busy");
  for (int round = 0; round < 20; ++round) {
    expect_death_by_sigterm([&] {
      ScratchDir scratch(parent, "s-");
      const fs::path dir = scratch.path();
      std::atomic<int> made{0};
      std::thread writer([&] {
        sigset_t set;
        ::sigemptyset(&set);
        ::sigaddset(&set, SIGTERM);
        ::pthread_sigmask(SIG_BLOCK, &set, nullptr);
        for (int i = 0; i < 50000; ++i) {
          const std::string f = (dir / ("f" + std::to_string(i))).string();
          const int fd =
              ::open(f.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
          if (fd < 0) break;  // the directory is gone
          ::close(fd);
          made.fetch_add(1);
        }
        made.store(1 << 30);
      });
      writer.detach();
      while (made.load() < 200) std::this_thread::yield();
      ::raise(SIGTERM);
    });
    EXPECT_TRUE(fs::is_empty(parent)) << "round " << round;
  }
  fs::remove_all(parent);
}
