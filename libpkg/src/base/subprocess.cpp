// SPDX-License-Identifier: BSD-3-Clause
// run_process: posix_spawnp with stdout and stderr on one pipe, the child
// leading its own process group, and a poll() loop that keeps the tail of
// the output and enforces the deadline.
//
// Rules that are not obvious from the header:
//  - The pipe is created O_CLOEXEC so that a process spawned concurrently
//    by another thread (the checks run in a thread pool) does not inherit
//    our write end and keep the pipe open.
//  - stdin is /dev/null: a helper waiting for input would otherwise hang
//    until the timeout.
//  - The loop ends when the child exits, not at EOF: a background process
//    it started may hold the pipe open for ever. When the child has exited
//    (seen without reaping it, so its pid still names the group), whatever
//    it left running in its group is killed, so nothing outlives the run.
//  - PATH lookup uses this process's PATH (glibc's posix_spawnp reads the
//    caller's environment, not env_set).
#include "libpkg/base/subprocess.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <optional>
#include <string_view>

#include "libpkg/base/error.hpp"
#include "libpkg/base/fd.hpp"

extern char** environ;

namespace libpkg {
namespace {

using Clock = std::chrono::steady_clock;

// RAII for the spawn attribute objects, which must be destroyed on every
// path out of the function.
struct SpawnSetup {
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attr;
  SpawnSetup() {
    posix_spawn_file_actions_init(&actions);
    posix_spawnattr_init(&attr);
  }
  ~SpawnSetup() {
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
  }
  SpawnSetup(const SpawnSetup&) = delete;
  SpawnSetup& operator=(const SpawnSetup&) = delete;
};

std::string_view env_name(std::string_view entry) {
  return entry.substr(0, entry.find('='));
}

// A copy of environ without the names unset or replaced, then env_set.
std::vector<std::string> child_environment(const RunOptions& options) {
  auto dropped = [&](std::string_view name) {
    for (const auto& n : options.env_unset)
      if (n == name) return true;
    for (const auto& s : options.env_set)
      if (env_name(s) == name) return true;
    return false;
  };
  std::vector<std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e)
    if (!dropped(env_name(*e))) env.emplace_back(*e);
  for (const auto& s : options.env_set) env.push_back(s);
  return env;
}

std::vector<char*> c_strings(std::vector<std::string>& strings) {
  std::vector<char*> out;
  out.reserve(strings.size() + 1);
  for (auto& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

void check_spawn(int rc, const std::string& program, const char* what) {
  if (rc != 0)
    throw Error(Errc::io, program,
                std::string(what) + ": " + std::strerror(rc));
}

// Errors of exec (or of the lookup) that mean "this program cannot be
// run", as opposed to a resource failure of ours.
bool is_not_found(int err) {
  return err == ENOENT || err == EACCES || err == ENOTDIR || err == ENOEXEC ||
         err == ELOOP || err == ENAMETOOLONG || err == EPERM;
}

// Appends to `out`, keeping only the last `max` bytes. Trimming is
// amortised: the buffer may grow to twice the limit before it is cut.
void append_tail(std::string& out, const char* data, std::size_t n,
                 std::size_t max) {
  if (max == 0) return;
  if (n >= max) {
    out.assign(data + (n - max), max);
    return;
  }
  out.append(data, n);
  if (out.size() > 2 * max) out.erase(0, out.size() - max);
}

// A pidfd becomes readable when the process exits, so one poll() waits for
// output and exit together. Kernels older than 5.3 (or a seccomp filter)
// refuse it; then the loop wakes up on a short tick instead.
int open_pidfd(pid_t pid) {
#ifdef SYS_pidfd_open
  return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
#else
  (void)pid;
  return -1;
#endif
}

// True when the child has exited; it stays a zombie (WNOWAIT), so its pid
// keeps naming the process group until it is reaped.
bool has_exited(pid_t pid) {
  siginfo_t info{};
  for (;;) {
    int rc = ::waitid(P_PID, static_cast<id_t>(pid), &info,
                      WEXITED | WNOHANG | WNOWAIT);
    if (rc == 0) return info.si_pid == pid;
    if (errno != EINTR) return true;  // ECHILD: nothing left to wait for
  }
}

// Writes all of `data` to `fd`; an echo target that fails (a closed
// stderr) is given up silently: the echo is a courtesy, the tail is kept.
void echo(int& fd, const char* data, std::size_t n) {
  while (fd >= 0 && n > 0) {
    ssize_t w = ::write(fd, data, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      fd = -1;
      return;
    }
    data += w;
    n -= static_cast<std::size_t>(w);
  }
}

// Reads what the pipe holds right now (echoing it to `echo_fd`). Returns
// false at EOF.
bool read_available(int fd, std::string& out, std::size_t max, int& echo_fd) {
  char buf[65536];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n > 0) {
      echo(echo_fd, buf, static_cast<std::size_t>(n));
      append_tail(out, buf, static_cast<std::size_t>(n), max);
      continue;
    }
    if (n == 0) return false;
    if (errno == EINTR) continue;
    return true;  // EAGAIN: drained for now
  }
}

}  // namespace

std::string RunResult::describe(unsigned timeout_seconds) const {
  if (not_found) return "not found";
  if (timed_out)
    return timeout_seconds > 0
               ? "timed out after " + std::to_string(timeout_seconds) + " s"
               : std::string("timed out");
  if (signal != 0) return "killed by signal " + std::to_string(signal);
  return "exit status " + std::to_string(exit_code);
}

RunResult run_process(const std::vector<std::string>& argv,
                      const RunOptions& options) {
  if (argv.empty() || argv[0].empty())
    throw Error(Errc::usage, "", "run_process: no program given");
  const std::string& program = argv[0];
  // A missing cwd would make the spawn fail with ENOENT, which would read
  // as "program not found"; it is the caller's mistake, so say so.
  if (!options.cwd.empty() && !std::filesystem::is_directory(options.cwd))
    throw Error(Errc::not_found, options.cwd.string(),
                "working directory for " + program + " does not exist");

  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) throw_errno(program, "create pipe");
  Fd read_end(fds[0]);
  Fd write_end(fds[1]);

  SpawnSetup setup;
  check_spawn(posix_spawn_file_actions_addopen(&setup.actions, 0, "/dev/null",
                                               O_RDONLY, 0),
              program, "spawn setup");
  check_spawn(
      posix_spawn_file_actions_adddup2(&setup.actions, write_end.get(), 1),
      program, "spawn setup");
  check_spawn(
      posix_spawn_file_actions_adddup2(&setup.actions, write_end.get(), 2),
      program, "spawn setup");
  if (!options.cwd.empty())
    check_spawn(posix_spawn_file_actions_addchdir_np(&setup.actions,
                                                     options.cwd.c_str()),
                program, "spawn setup");

  // Own process group (the timeout kills it whole), default dispositions
  // and an empty mask: an ignored SIGPIPE or a blocked SIGTERM inherited
  // from the caller must not change how the helper behaves.
  sigset_t empty, all;
  sigemptyset(&empty);
  sigfillset(&all);
  check_spawn(posix_spawnattr_setpgroup(&setup.attr, 0), program,
              "spawn setup");
  check_spawn(posix_spawnattr_setsigmask(&setup.attr, &empty), program,
              "spawn setup");
  check_spawn(posix_spawnattr_setsigdefault(&setup.attr, &all), program,
              "spawn setup");
  check_spawn(posix_spawnattr_setflags(&setup.attr, POSIX_SPAWN_SETPGROUP |
                                                        POSIX_SPAWN_SETSIGMASK |
                                                        POSIX_SPAWN_SETSIGDEF),
              program, "spawn setup");

  std::vector<std::string> args(argv);
  std::vector<char*> c_args = c_strings(args);
  std::vector<std::string> env = child_environment(options);
  std::vector<char*> c_env = c_strings(env);

  RunResult result;
  pid_t pid = -1;
  int rc = posix_spawnp(&pid, program.c_str(), &setup.actions, &setup.attr,
                        c_args.data(), c_env.data());
  if (rc != 0) {
    if (!is_not_found(rc))
      throw Error(Errc::io, program,
                  std::string("cannot start: ") + std::strerror(rc));
    result.not_found = true;
    result.output = "cannot run " + program + ": " + std::strerror(rc) + "\n";
    return result;
  }
  write_end.reset();  // the child holds the only write ends now

  int flags = ::fcntl(read_end.get(), F_GETFL);
  ::fcntl(read_end.get(), F_SETFL, flags | O_NONBLOCK);
  Fd pidfd(open_pidfd(pid));

  std::optional<Clock::time_point> deadline;
  if (options.timeout_seconds > 0)
    deadline = Clock::now() + std::chrono::seconds(options.timeout_seconds);

  int echo_fd = options.echo_fd;
  bool eof = false;
  for (;;) {
    int wait_ms = pidfd.get() >= 0 ? -1 : (eof ? 10 : 100);
    if (deadline) {
      auto left = std::chrono::ceil<std::chrono::milliseconds>(*deadline -
                                                               Clock::now());
      if (left.count() <= 0) {
        result.timed_out = true;
        break;
      }
      int left_ms =
          static_cast<int>(std::min<long long>(left.count(), 1 << 30));
      wait_ms = wait_ms < 0 ? left_ms : std::min(wait_ms, left_ms);
    }
    pollfd pfds[2];
    nfds_t n = 0;
    if (!eof) pfds[n++] = {read_end.get(), POLLIN, 0};
    if (pidfd.get() >= 0) pfds[n++] = {pidfd.get(), POLLIN, 0};
    int ready = ::poll(pfds, n, wait_ms);
    if (ready < 0 && errno != EINTR) throw_errno(program, "poll");
    if (!eof && ready > 0 && pfds[0].revents != 0)
      eof = !read_available(read_end.get(), result.output, options.max_output,
                            echo_fd);
    if (has_exited(pid)) {
      if (!eof)
        read_available(read_end.get(), result.output, options.max_output,
                       echo_fd);
      break;
    }
  }

  // Kill the group: on timeout the child and all it started; after a normal
  // exit whatever it left behind (unless asked not to). The leader is a
  // zombie until reaped below, so the group id cannot have been reused.
  if (result.timed_out || options.kill_leftovers) ::kill(-pid, SIGKILL);
  if (result.timed_out) ::kill(pid, SIGKILL);  // if it left its group

  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) throw_errno(program, "waitpid");
  }
  if (WIFEXITED(status)) {
    result.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    result.signal = WTERMSIG(status);
  }
  if (result.timed_out) result.exit_code = -1;
  if (result.output.size() > options.max_output)
    result.output.erase(0, result.output.size() - options.max_output);
  return result;
}

}  // namespace libpkg
