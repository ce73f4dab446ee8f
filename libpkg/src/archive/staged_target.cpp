// SPDX-License-Identifier: BSD-3-Clause
// StagedTarget: see staged_target.hpp.
#include "libpkg/archive/staged_target.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>

#include "libpkg/base/error.hpp"

namespace libpkg::archive {
namespace {

namespace fs = std::filesystem;

bool is_empty_dir(const fs::path& dir) {
  std::error_code ec;
  fs::directory_iterator it(dir, ec);
  if (ec)
    throw Error(Errc::io, dir.string(),
                fmt::format("read directory: {}", ec.message()));
  return it == fs::directory_iterator();
}

// The replaced tree is removed after the new one is in place; failing to
// remove it is reported, since it stays behind as a hidden directory.
void remove_old_tree(const std::string& archive, const fs::path& old) {
  std::error_code ec;
  fs::remove_all(old, ec);
  if (ec)
    throw Error(Errc::io, archive,
                fmt::format("extracted, but removing the replaced tree {} "
                            "failed: {}",
                            old.string(), ec.message()));
}

}  // namespace

StagedTarget::StagedTarget(const fs::path& target, bool overwrite,
                           std::string archive)
    : archive_(std::move(archive)) {
  struct stat st;
  exists_ = ::lstat(target.c_str(), &st) == 0;
  if (exists_) {
    if (!S_ISDIR(st.st_mode))
      throw Error(Errc::usage, target.string(),
                  S_ISLNK(st.st_mode)
                      ? "extraction target is a symlink"
                      : "extraction target exists and is not a directory");
    empty_ = is_empty_dir(target);
    if (!empty_ && !overwrite)
      throw Error(Errc::usage, target.string(),
                  "extraction target exists and is not empty (use overwrite "
                  "to replace it)");
    mode_ = st.st_mode & 07777;
  } else if (errno != ENOENT) {
    throw_errno(target.string(), "stat");
  }

  target_ = fs::absolute(target).lexically_normal();
  if (!target_.has_filename()) target_ = target_.parent_path();
  const fs::path parent = target_.parent_path();
  std::error_code ec;
  fs::create_directories(parent, ec);
  if (ec)
    throw Error(Errc::io, parent.string(),
                fmt::format("create directory: {}", ec.message()));
  staging_.emplace(parent, "." + target_.filename().string() + ".extract-");
  staging_path_ = staging_->path();
}

void StagedTarget::install() {
  const fs::path& tmp = staging_path_;
  if (::chmod(tmp.c_str(), mode_) != 0) throw_errno(tmp.string(), "chmod");
  if (!exists_ || empty_) {
    // rename() replaces an empty directory atomically.
    if (::rename(tmp.c_str(), target_.c_str()) != 0)
      throw_errno(archive_, fmt::format("rename {} to {}", tmp.string(),
                                        target_.string()));
    staging_->release();
    return;
  }
  if (::renameat2(AT_FDCWD, tmp.c_str(), AT_FDCWD, target_.c_str(),
                  RENAME_EXCHANGE) == 0) {
    // The staging directory now holds the old tree, which the ScratchDir
    // removes; a failure to do so is reported.
    remove_old_tree(archive_, tmp);
    return;
  }
  // File systems without RENAME_EXCHANGE: move the old tree aside first.
  fs::path old = tmp;
  old += ".old";
  if (::rename(target_.c_str(), old.c_str()) != 0)
    throw_errno(archive_, fmt::format("rename {} aside", target_.string()));
  if (::rename(tmp.c_str(), target_.c_str()) != 0) {
    int err = errno;
    ::rename(old.c_str(), target_.c_str());
    errno = err;
    throw_errno(archive_,
                fmt::format("rename {} to {}", tmp.string(), target_.string()));
  }
  staging_->release();
  remove_old_tree(archive_, old);
}

}  // namespace libpkg::archive
