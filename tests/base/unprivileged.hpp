// SPDX-License-Identifier: BSD-3-Clause
// Running part of a test as an unprivileged user.
//
// CI runs as root, and root reads files whose mode forbids it, so "an
// unreadable input is an I/O error" cannot be provoked in-process. The body
// runs in a forked child that first drops to uid/gid 65534 (nobody) when it
// is root; it returns "" on success or what went wrong, which the parent
// gets back through a pipe (gtest assertions do not cross a fork).
#pragma once

#include <grp.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <exception>
#include <string>

namespace libpkg::testing {

inline constexpr unsigned kNobody = 65534;

template <typename Body>
std::string run_unprivileged(Body&& body) {
  int fds[2];
  if (::pipe(fds) != 0) return std::string("pipe: ") + std::strerror(errno);
  const pid_t pid = ::fork();
  if (pid < 0) return std::string("fork: ") + std::strerror(errno);
  if (pid == 0) {
    ::close(fds[0]);
    std::string result;
    if (::geteuid() == 0 && (::setgroups(0, nullptr) != 0 ||
                             ::setgid(kNobody) != 0 || ::setuid(kNobody) != 0))
      result = std::string("cannot drop privileges: ") + std::strerror(errno);
    else if (::geteuid() == 0)
      result = "still root after setuid";
    else
      try {
        result = body();
      } catch (const std::exception& e) {
        result = std::string("unexpected exception: ") + e.what();
      }
    const char* p = result.data();
    std::size_t left = result.size();
    while (left > 0) {
      ssize_t n = ::write(fds[1], p, left);
      if (n <= 0) break;
      p += n;
      left -= static_cast<std::size_t>(n);
    }
    ::_exit(result.empty() ? 0 : 1);
  }
  ::close(fds[1]);
  std::string out;
  char buf[4096];
  for (;;) {
    ssize_t n = ::read(fds[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    out.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (out.empty() && !(WIFEXITED(status) && WEXITSTATUS(status) == 0))
    out = "the unprivileged child died (status " + std::to_string(status) + ")";
  return out;
}

}  // namespace libpkg::testing
