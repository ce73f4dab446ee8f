// SPDX-License-Identifier: BSD-3-Clause
// run_process: exit statuses, captured output and its truncation, the
// environment and working directory given to the child, a timeout that
// kills the whole process group, and programs that cannot be started.
#include "libpkg/base/subprocess.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <string>

#include "libpkg/base/error.hpp"
#include "temp_dir.hpp"

namespace libpkg {
namespace {

RunResult sh(const std::string& script, const RunOptions& options = {}) {
  return run_process({"sh", "-c", script}, options);
}

// Whether `pid` is still running. A killed orphan may stay a zombie for a
// while (until the container's init reaps it), which counts as gone.
bool is_running(pid_t pid) {
  std::string stat =
      testing::read_file("/proc/" + std::to_string(pid) + "/stat");
  auto paren = stat.rfind(')');
  if (paren == std::string::npos || paren + 2 >= stat.size()) return false;
  char state = stat[paren + 2];
  return state != 'Z' && state != 'X';
}

// Waits up to a second for `pid` to stop running.
bool ends_soon(pid_t pid) {
  for (int i = 0; i < 50; ++i) {
    if (!is_running(pid)) return true;
    ::usleep(20000);
  }
  return false;
}

TEST(Subprocess, ExitCodes) {
  RunResult ok = sh("exit 0");
  EXPECT_TRUE(ok.ok());
  EXPECT_EQ(ok.exit_code, 0);
  EXPECT_EQ(ok.describe(), "exit status 0");

  RunResult one = sh("exit 1");
  EXPECT_FALSE(one.ok());
  EXPECT_EQ(one.exit_code, 1);
  EXPECT_EQ(one.signal, 0);
  EXPECT_FALSE(one.timed_out);
  EXPECT_FALSE(one.not_found);
  EXPECT_EQ(one.describe(), "exit status 1");

  EXPECT_EQ(sh("exit 42").exit_code, 42);
}

TEST(Subprocess, KilledBySignal) {
  RunResult r = sh("kill -SEGV $$");
  EXPECT_EQ(r.exit_code, -1);
  EXPECT_EQ(r.signal, SIGSEGV);
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.describe(), "killed by signal 11");
}

TEST(Subprocess, CapturesStdoutAndStderrInOrder) {
  RunResult r = sh("echo out; echo err >&2; echo again");
  EXPECT_EQ(r.output, "out\nerr\nagain\n");
}

TEST(Subprocess, StdinIsEmpty) {
  // `cat` would wait for ever on an inherited terminal or pipe.
  RunResult r = run_process({"cat"}, {.timeout_seconds = 10});
  EXPECT_TRUE(r.ok());
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.output, "");
}

TEST(Subprocess, KeepsTheTailOfLongOutput) {
  // 30000 lines "N\n": far more than the limit and than the pipe buffer.
  RunOptions options;
  options.max_output = 1000;
  RunResult r =
      sh("i=0; while [ $i -lt 30000 ]; do echo $i; i=$((i+1)); done", options);
  ASSERT_TRUE(r.ok()) << r.describe();
  EXPECT_EQ(r.output.size(), 1000u);
  EXPECT_TRUE(r.output.ends_with("29998\n29999\n")) << r.output;

  options.max_output = 0;
  EXPECT_EQ(sh("echo something", options).output, "");

  options.max_output = 5;
  EXPECT_EQ(sh("printf abcdefgh", options).output, "defgh");
}

TEST(Subprocess, LargeOutputIsKeptWhole) {
  RunResult r = sh("head -c 200000 /dev/zero");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.output.size(), 64u * 1024);
  RunOptions big;
  big.max_output = 1 << 20;
  EXPECT_EQ(sh("head -c 200000 /dev/zero", big).output.size(), 200000u);
}

TEST(Subprocess, EnvironmentSetAndUnset) {
  ::setenv("LIBPKG_SUBPROCESS_KEEP", "kept", 1);
  ::setenv("LIBPKG_SUBPROCESS_DROP", "dropped", 1);
  ::setenv("LIBPKG_SUBPROCESS_REPLACE", "old", 1);
  RunOptions options;
  options.env_set = {"LIBPKG_SUBPROCESS_NEW=new value",
                     "LIBPKG_SUBPROCESS_REPLACE=replaced"};
  options.env_unset = {"LIBPKG_SUBPROCESS_DROP"};
  RunResult r =
      sh("echo \"$LIBPKG_SUBPROCESS_KEEP|${LIBPKG_SUBPROCESS_DROP-unset}|"
         "$LIBPKG_SUBPROCESS_NEW|$LIBPKG_SUBPROCESS_REPLACE\"; "
         "env | grep -c '^LIBPKG_SUBPROCESS_REPLACE='",
         options);
  EXPECT_EQ(r.output, "kept|unset|new value|replaced\n1\n");
  // The caller's own environment is untouched.
  EXPECT_STREQ(std::getenv("LIBPKG_SUBPROCESS_DROP"), "dropped");
  EXPECT_STREQ(std::getenv("LIBPKG_SUBPROCESS_REPLACE"), "old");
  ::unsetenv("LIBPKG_SUBPROCESS_KEEP");
  ::unsetenv("LIBPKG_SUBPROCESS_DROP");
  ::unsetenv("LIBPKG_SUBPROCESS_REPLACE");
}

TEST(Subprocess, WorkingDirectory) {
  testing::TempDir dir;
  testing::write_file(dir / "marker", "here\n");
  RunOptions options;
  options.cwd = dir.path();
  RunResult r = sh("cat marker; pwd -P", options);
  std::string real = std::filesystem::canonical(dir.path()).string();
  EXPECT_EQ(r.output, "here\n" + real + "\n");

  options.cwd = dir / "missing";
  EXPECT_THROW(sh("true", options), Error);
}

TEST(Subprocess, TimeoutKillsTheWholeGroupQuickly) {
  testing::TempDir dir;
  RunOptions options;
  options.timeout_seconds = 1;
  auto start = std::chrono::steady_clock::now();
  // The background sleep holds the pipe open too: if only sh were killed,
  // reading would last until it ends.
  RunResult r = sh("echo started; sleep 100 & echo $! > " +
                       (dir / "bg").string() + "; sleep 100",
                   options);
  auto elapsed = std::chrono::steady_clock::now() - start;
  EXPECT_TRUE(r.timed_out);
  EXPECT_EQ(r.exit_code, -1);
  EXPECT_EQ(r.signal, SIGKILL);
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.output, "started\n");
  EXPECT_EQ(r.describe(1), "timed out after 1 s");
  EXPECT_LT(elapsed, std::chrono::seconds(5));

  // The background sleep is gone as well (give the kernel a moment).
  pid_t bg = std::stoi(testing::read_file(dir / "bg"));
  EXPECT_TRUE(ends_soon(bg)) << "background process " << bg << " survived";
}

TEST(Subprocess, NothingOutlivesANormalExit) {
  // sh exits at once, leaving a sleep that holds the pipe: the run must
  // end with sh, and the straggler must be killed.
  testing::TempDir dir;
  auto start = std::chrono::steady_clock::now();
  RunResult r =
      sh("sleep 100 & echo $! > " + (dir / "bg").string() + "; echo done");
  auto elapsed = std::chrono::steady_clock::now() - start;
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r.output, "done\n");
  EXPECT_LT(elapsed, std::chrono::seconds(5));
  pid_t bg = std::stoi(testing::read_file(dir / "bg"));
  EXPECT_TRUE(ends_soon(bg)) << "background process " << bg << " survived";
}

// echo_fd gets the output as it arrives (the tail is still kept), and
// kill_leftovers = false lets what the child started in the background go on.
TEST(Subprocess, EchoAndLeftoversKept) {
  testing::TempDir dir;
  int fds[2];
  ASSERT_EQ(::pipe2(fds, O_CLOEXEC), 0);  // the children must not hold it
  RunOptions o;
  o.echo_fd = fds[1];
  o.kill_leftovers = false;
  RunResult r = sh(
      "echo one; echo two >&2; sleep 100 & echo $! > " + (dir / "bg").string(),
      o);
  ::close(fds[1]);
  std::string echoed;
  char buf[256];
  for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) > 0;)
    echoed.append(buf, static_cast<std::size_t>(n));
  ::close(fds[0]);
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r.output, "one\ntwo\n");
  EXPECT_EQ(echoed, "one\ntwo\n");
  pid_t bg = std::stoi(testing::read_file(dir / "bg"));
  EXPECT_TRUE(is_running(bg)) << "the background process was killed";
  ::kill(bg, SIGKILL);
}

TEST(Subprocess, NotFound) {
  RunResult r = run_process({"libpkg-no-such-program-here", "arg"});
  EXPECT_TRUE(r.not_found);
  EXPECT_EQ(r.exit_code, -1);
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.describe(), "not found");

  RunResult abs = run_process({"/nonexistent/dir/prog"});
  EXPECT_TRUE(abs.not_found);

  // Present but not executable.
  testing::TempDir dir;
  testing::write_file(dir / "script", "#!/bin/sh\nexit 0\n", 0644);
  RunResult noexec = run_process({(dir / "script").string()});
  EXPECT_TRUE(noexec.not_found);
  EXPECT_NE(noexec.output.find("Permission denied"), std::string::npos)
      << noexec.output;
}

TEST(Subprocess, ArgumentsArePassedVerbatim) {
  RunResult r = run_process({"printf", "%s|", "a b", "", "$HOME", "'q'"});
  EXPECT_EQ(r.output, "a b||$HOME|'q'|");
}

TEST(Subprocess, EmptyArgvIsAUsageError) {
  EXPECT_THROW(run_process({}), Error);
}

}  // namespace
}  // namespace libpkg
