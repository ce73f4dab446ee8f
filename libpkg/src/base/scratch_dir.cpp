// SPDX-License-Identifier: BSD-3-Clause
#include "libpkg/base/scratch_dir.hpp"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <system_error>
#include <utility>

#include "libpkg/base/error.hpp"

namespace fs = std::filesystem;

namespace libpkg {
namespace {

// `<prefix>pid<digits>-XXXXXX` (mkdtemp's six characters).
bool has_stale_marker(const std::string& name, const std::string& prefix) {
  if (name.rfind(prefix + "pid", 0) != 0) return false;
  std::size_t i = prefix.size() + 3;
  std::size_t digits = 0;
  while (i < name.size() && std::isdigit(static_cast<unsigned char>(name[i]))) {
    ++i;
    ++digits;
  }
  return digits > 0 && i < name.size() && name[i] == '-' &&
         name.size() - i - 1 == 6;
}

}  // namespace

int ScratchDir::remove_stale(const fs::path& parent,
                             const std::string& prefix) {
  int removed = 0;
  std::error_code ec;
  fs::directory_iterator it(parent, ec);
  if (ec) return 0;
  for (; it != fs::directory_iterator(); it.increment(ec)) {
    if (ec) break;
    const fs::path& p = it->path();
    if (!has_stale_marker(p.filename().string(), prefix)) continue;
    struct stat st {};
    if (::lstat(p.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) ||
        st.st_uid != ::geteuid())
      continue;
    int fd = ::open(p.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) continue;
    // Taking the lock proves the owner is dead; holding it while removing
    // keeps a second sweeper out.
    if (::flock(fd, LOCK_EX | LOCK_NB) == 0) {
      std::error_code rm;
      fs::remove_all(p, rm);
      if (!rm) ++removed;
    }
    ::close(fd);
  }
  return removed;
}

ScratchDir::ScratchDir(const fs::path& parent, const std::string& prefix) {
  remove_stale(parent, prefix);
  std::string templ =
      (parent / (prefix + "pid" + std::to_string(::getpid()) + "-XXXXXX"))
          .string();
  cleanup_ = SignalCleanup::create([&] {
    if (::mkdtemp(templ.data()) == nullptr)
      throw_errno(parent.string(), "create scratch directory");
    return fs::path(templ);
  });
  path_ = templ;
  lock_fd_ =
      ::open(path_.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  // Without the lock (e.g. a file system without flock) the directory is
  // merely never swept: a sweeper's own flock fails there too.
  if (lock_fd_ >= 0) ::flock(lock_fd_, LOCK_EX | LOCK_NB);
}

ScratchDir ScratchDir::in_temp(const std::string& prefix) {
  std::error_code ec;
  fs::path tmp = fs::temp_directory_path(ec);
  if (ec) tmp = "/tmp";
  return ScratchDir(tmp, prefix);
}

ScratchDir::ScratchDir(ScratchDir&& other) noexcept
    : path_(std::move(other.path_)),
      lock_fd_(std::exchange(other.lock_fd_, -1)),
      cleanup_(std::move(other.cleanup_)) {
  other.path_.clear();
}

void ScratchDir::release() {
  path_.clear();
  cleanup_.release();
  if (lock_fd_ >= 0) ::close(lock_fd_);
  lock_fd_ = -1;
}

ScratchDir::~ScratchDir() {
  if (!path_.empty()) {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  release();
}

}  // namespace libpkg
