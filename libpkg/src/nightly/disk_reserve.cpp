// SPDX-License-Identifier: BSD-3-Clause
#include "disk_reserve.hpp"

#include <fcntl.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

namespace libpkg::nightly {

namespace fs = std::filesystem;

DiskReserve::DiskReserve(fs::path file, std::uint64_t bytes)
    : file_(std::move(file)), bytes_(bytes) {
  if (bytes == 0) return;
  int fd =
      ::open(file_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) throw_errno(file_.string(), "create the runner's reserve");
  held_ = true;
  // posix_fallocate allocates real blocks where the filesystem supports it
  // (ext4, xfs, tmpfs); elsewhere zeros are written, which allocate too.
  int err = ::posix_fallocate(fd, 0, static_cast<off_t>(bytes));
  if (err == EOPNOTSUPP || err == EINVAL) {
    std::vector<char> zeros(64 * 1024);
    err = 0;
    for (std::uint64_t done = 0; done < bytes && !err;) {
      std::size_t n = static_cast<std::size_t>(
          std::min<std::uint64_t>(zeros.size(), bytes - done));
      ssize_t w = ::write(fd, zeros.data(), n);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0)
        err = w < 0 ? errno : ENOSPC;
      else
        done += static_cast<std::uint64_t>(w);
    }
    if (!err && ::fsync(fd) != 0) err = errno;
  }
  ::close(fd);
  if (err) {
    release();
    throw Error(Errc::io, file_.string(),
                "cannot reserve " + std::to_string(bytes) +
                    " bytes for the runner's records: " + std::strerror(err))
        .with_errno(err);
  }
}

DiskReserve::~DiskReserve() { release(); }

bool DiskReserve::release() {
  std::lock_guard lock(mu_);
  if (!held_) return false;
  held_ = false;
  released_ = true;
  ::unlink(file_.c_str());
  return true;
}

std::uint64_t DiskReserve::released_bytes() {
  std::lock_guard lock(mu_);
  return released_ ? bytes_ : 0;
}

bool out_of_space(const Error& e) {
  return e.sys_errno() == ENOSPC || e.sys_errno() == EDQUOT;
}

std::optional<std::uint64_t> free_bytes(const fs::path& dir) {
  struct statvfs st {};
  if (::statvfs(dir.c_str(), &st) != 0) return std::nullopt;
  auto blocks = ::geteuid() == 0 ? st.f_bfree : st.f_bavail;
  return static_cast<std::uint64_t>(blocks) * st.f_frsize;
}

}  // namespace libpkg::nightly
