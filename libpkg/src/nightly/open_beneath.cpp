// SPDX-License-Identifier: BSD-3-Clause
#include "open_beneath.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>

#include "libpkg/base/error.hpp"

namespace libpkg::nightly {

namespace fs = std::filesystem;

namespace {

// linux/openat2.h's struct and flags, spelled here: the header is missing
// from older kernel headers, and the fallback covers those kernels anyway.
struct OpenHow {
  std::uint64_t flags;
  std::uint64_t mode;
  std::uint64_t resolve;
};
constexpr std::uint64_t kResolveNoMagiclinks = 0x02;
constexpr std::uint64_t kResolveNoSymlinks = 0x04;
constexpr std::uint64_t kResolveBeneath = 0x08;

// O_NONBLOCK: opening a FIFO planted under the name must not hang.
constexpr int kFileFlags = O_RDONLY | O_CLOEXEC | O_NONBLOCK;

[[noreturn]] void refuse(const fs::path& shown, const std::string& why) {
  throw Error(Errc::format, shown.string(), why);
}

void check_relative(const fs::path& base, const fs::path& rel) {
  if (rel.empty() || rel.is_absolute() || rel.has_root_name())
    refuse(base / rel, "leaves the nightly directory");
  for (const auto& part : rel)
    if (part == "..") refuse(base / rel, "leaves the nightly directory");
}

[[noreturn]] void open_failed(const fs::path& shown, int err) {
  if (err == ELOOP)
    refuse(shown,
           "is a symlink or lies under one: artifacts must be regular files");
  if (err == EXDEV) refuse(shown, "leaves the nightly directory");
  errno = err;
  if (err == ENOENT)
    throw Error(Errc::not_found, shown.string(), "no such file")
        .with_errno(err);
  throw_errno(shown.string(), "open");
}

// Regular files only, switched back to blocking reads.
Fd checked_regular(Fd fd, const fs::path& shown) {
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) throw_errno(shown.string(), "stat");
  if (!S_ISREG(st.st_mode))
    refuse(shown, std::string("is not a regular file (") +
                      file_kind_name(st.st_mode) + ")");
  int flags = ::fcntl(fd.get(), F_GETFL);
  if (flags >= 0) ::fcntl(fd.get(), F_SETFL, flags & ~O_NONBLOCK);
  return fd;
}

Fd open_base(const fs::path& base) {
  Fd dir(::open(base.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!dir) throw_errno(base.string(), "open");
  return dir;
}

}  // namespace

Fd open_beneath_walk(const fs::path& base, const fs::path& rel) {
  check_relative(base, rel);
  fs::path shown = base / rel;
  Fd dir = open_base(base);
  std::vector<std::string> parts;
  for (const auto& part : rel)
    if (!part.empty() && part != ".") parts.push_back(part.string());
  if (parts.empty()) refuse(shown, "is not a regular file (a directory)");
  for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
    Fd next(::openat(dir.get(), parts[i].c_str(),
                     O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    // A symlink to a directory gives ELOOP with O_NOFOLLOW, to anything
    // else ENOTDIR: both are refused as symlinks when the entry is one.
    if (!next) {
      int err = errno;
      struct stat st {};
      if (err == ENOTDIR &&
          ::fstatat(dir.get(), parts[i].c_str(), &st, AT_SYMLINK_NOFOLLOW) ==
              0 &&
          S_ISLNK(st.st_mode))
        err = ELOOP;
      open_failed(shown, err);
    }
    dir = std::move(next);
  }
  Fd file(::openat(dir.get(), parts.back().c_str(), kFileFlags | O_NOFOLLOW));
  if (!file) open_failed(shown, errno);
  return checked_regular(std::move(file), shown);
}

Fd open_beneath(const fs::path& base, const fs::path& rel) {
  check_relative(base, rel);
#ifdef SYS_openat2
  fs::path shown = base / rel;
  Fd dir = open_base(base);
  OpenHow how{static_cast<std::uint64_t>(kFileFlags), 0,
              kResolveNoSymlinks | kResolveBeneath | kResolveNoMagiclinks};
  long fd = ::syscall(SYS_openat2, dir.get(), rel.c_str(), &how, sizeof how);
  if (fd >= 0) return checked_regular(Fd(static_cast<int>(fd)), shown);
  // Not there (old kernel) or filtered (seccomp, some container runtimes):
  // the component walk gives the same answer.
  if (errno != ENOSYS && errno != EPERM && errno != EINVAL)
    open_failed(shown, errno);
#endif
  return open_beneath_walk(base, rel);
}

}  // namespace libpkg::nightly
