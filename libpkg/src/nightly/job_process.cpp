// SPDX-License-Identifier: BSD-3-Clause
#include "job_process.hpp"

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
#include <map>

#include "libpkg/base/error.hpp"

extern char** environ;

namespace libpkg::nightly {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

std::vector<std::string> merged_environment(
    const std::vector<std::string>& set) {
  std::map<std::string, std::string> env;
  std::vector<std::string> order;
  for (char** e = environ; e && *e; ++e) {
    std::string kv = *e;
    auto eq = kv.find('=');
    std::string k = kv.substr(0, eq);
    if (!env.count(k)) order.push_back(k);
    env[k] = kv;
  }
  for (const auto& kv : set) {
    std::string k = kv.substr(0, kv.find('='));
    if (!env.count(k)) order.push_back(k);
    env[k] = kv;
  }
  std::vector<std::string> out;
  for (const auto& k : order) out.push_back(env[k]);
  return out;
}

// Reads what the job appended to its log since `offset` and records each
// complete `::step NAME` line, timed when it was seen.
class StepScanner {
 public:
  StepScanner(int fd, Clock::time_point start) : fd_(fd), start_(start) {}
  void scan(Clock::time_point now) {
    char buf[65536];
    for (;;) {
      ssize_t n = ::pread(fd_, buf, sizeof buf, offset_);
      if (n <= 0) break;
      offset_ += n;
      for (ssize_t i = 0; i < n; ++i) {
        if (buf[i] == '\n') {
          line(now);
          partial_.clear();
        } else if (partial_.size() < 512) {
          partial_ += buf[i];
        }
      }
    }
  }
  std::vector<StepTime> finish(Clock::time_point end) {
    scan(end);
    if (!partial_.empty()) line(end);
    if (!names_.empty()) {
      std::vector<StepTime> out;
      for (std::size_t i = 0; i < names_.size(); ++i) {
        auto stop = i + 1 < names_.size() ? starts_[i + 1] : end;
        out.push_back({names_[i], seconds_between(starts_[i], stop)});
      }
      return out;
    }
    return {};
  }

 private:
  void line(Clock::time_point now) {
    static const std::string kMarker = "::step ";
    if (partial_.compare(0, kMarker.size(), kMarker) != 0) return;
    std::string name = partial_.substr(kMarker.size());
    while (!name.empty() && (name.back() == '\r' || name.back() == ' '))
      name.pop_back();
    if (name.empty()) return;
    names_.push_back(name);
    starts_.push_back(now < start_ ? start_ : now);
  }
  int fd_;
  Clock::time_point start_;
  off_t offset_ = 0;
  std::string partial_;
  std::vector<std::string> names_;
  std::vector<Clock::time_point> starts_;
};

void append(int fd, const std::string& text) {
  std::size_t done = 0;
  while (done < text.size()) {
    ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // a full disk: the state still records the outcome
    done += static_cast<std::size_t>(n);
  }
}

}  // namespace

ProcessOutcome run_job_process(const ProcessRequest& req) {
  ProcessOutcome out;
  int log_fd =
      ::open(req.log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (log_fd < 0) throw_errno(req.log.string(), "create the log");
  int read_fd = ::open(req.log.c_str(), O_RDONLY | O_CLOEXEC);
  if (read_fd < 0) {
    ::close(log_fd);
    throw_errno(req.log.string(), "open the log");
  }

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, log_fd, 1);
  posix_spawn_file_actions_adddup2(&actions, log_fd, 2);
  if (!req.cwd.empty())
    posix_spawn_file_actions_addchdir_np(&actions, req.cwd.c_str());
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  // Its own process group, default signal handling and an empty mask: the
  // runner's SIGINT handler and blocked signals are not the job's.
  sigset_t def, empty;
  sigemptyset(&def);
  sigaddset(&def, SIGINT);
  sigaddset(&def, SIGTERM);
  sigaddset(&def, SIGPIPE);
  sigaddset(&def, SIGHUP);
  sigemptyset(&empty);
  posix_spawnattr_setsigdefault(&attr, &def);
  posix_spawnattr_setsigmask(&attr, &empty);
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP |
                                      POSIX_SPAWN_SETSIGDEF |
                                      POSIX_SPAWN_SETSIGMASK);
  std::vector<std::string> env = merged_environment(req.env);
  std::vector<char*> envp, argv;
  for (auto& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::vector<std::string> args = req.argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);

  auto start = Clock::now();
  pid_t pid = -1;
  int rc =
      posix_spawnp(&pid, argv[0], &actions, &attr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) {
    append(log_fd, "::nightly cannot start " + req.argv[0] + ": " +
                       std::strerror(rc) + "\n");
    ::close(log_fd);
    ::close(read_fd);
    out.not_started = true;
    out.exit_code = 127;
    return out;
  }
  // From here anything that throws (on_started writing the state, the
  // scanner reading the log) must not leave the job running unreaped nor
  // leak the log's descriptors.
  struct StartedGuard {
    pid_t pid;
    int log_fd, read_fd;
    int pidfd = -1;
    bool reaped = false;
    ~StartedGuard() {
      if (!reaped) {
        ::killpg(pid, SIGKILL);
        while (::waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
        }
      }
      if (pidfd >= 0) ::close(pidfd);
      ::close(read_fd);
      ::close(log_fd);
    }
  } guard{pid, log_fd, read_fd};
  if (req.on_started) req.on_started(pid);

  StepScanner scanner(read_fd, start);
  scanner.scan(start);  // skip nothing: markers written before start count
  int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
  guard.pidfd = pidfd;
  Clock::time_point kill_at{};
  bool term_sent = false;
  int status = 0;
  for (;;) {
    if (pidfd >= 0) {
      pollfd p{pidfd, POLLIN, 0};
      ::poll(&p, 1, 50);
    } else {
      ::usleep(20000);
    }
    pid_t w = ::waitpid(pid, &status, WNOHANG);
    auto now = Clock::now();
    if (w == pid) {
      guard.reaped = true;
      break;
    }
    scanner.scan(now);
    bool timeout =
        req.timeout_s && seconds_between(start, now) >= req.timeout_s;
    if (!term_sent && (timeout || (req.should_stop && req.should_stop()))) {
      out.timed_out = timeout;
      out.stopped = !timeout;
      ::killpg(pid, SIGTERM);
      term_sent = true;
      kill_at = now + std::chrono::seconds(req.grace_s);
    } else if (term_sent && now >= kill_at) {
      ::killpg(pid, SIGKILL);
      kill_at = now + std::chrono::hours(1);
    }
  }
  auto end = Clock::now();
  // Whatever the job left running in its group (a background server, a
  // stuck child) goes with it: the next job must not find it.
  ::killpg(pid, SIGKILL);
  if (WIFEXITED(status)) out.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) out.signal = WTERMSIG(status);
  out.duration_s = seconds_between(start, end);
  out.steps = scanner.finish(end);
  return out;  // the guard closes the descriptors
}

}  // namespace libpkg::nightly
