// SPDX-License-Identifier: BSD-3-Clause
// Switching root/cuda (and root/magma) between installed toolkits.
//
// The old scripts ran `rm -fr /usr/local/cuda; ln -s ...`: between the two
// commands a concurrent build saw no toolkit, and if /usr/local/cuda was a
// real installation it was deleted. Here a new symlink is created under a
// temporary name in the same directory and rename(2)d over the old one,
// which replaces it atomically. rename(2) also refuses (EISDIR) to replace
// a directory with a symlink, so even if root/cuda became a directory
// after our check, nothing is deleted.
#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <random>

#include "cuda/layout.hpp"
#include "libpkg/base/error.hpp"
#include "libpkg/cuda/toolkit.hpp"

namespace libpkg::cuda {

namespace fs = std::filesystem;

namespace {

// What `link` points to now; nullopt when it doesn't exist. Errc::usage
// when it exists and is not a symlink: a real toolkit (or anything else)
// there is the user's, and we never delete it.
std::optional<fs::path> replaceable_link(const fs::path& link,
                                         const char* flag_hint) {
  std::error_code ec;
  auto st = fs::symlink_status(link, ec);
  if (!fs::exists(st)) return std::nullopt;
  if (!fs::is_symlink(st)) {
    throw Error(
        Errc::usage, link.string(),
        fmt::format("is a real {}, not a symlink: refusing to replace "
                    "it (move it to a versioned name first{})",
                    fs::is_directory(st) ? "directory" : "file", flag_hint));
  }
  fs::path target = fs::read_symlink(link, ec);
  if (ec)
    throw Error(Errc::io, link.string(),
                fmt::format("cannot read link: {}", ec.message()));
  return target;
}

// Makes `link` a symlink to `target` by renaming a fresh link over it.
void replace_link(const fs::path& link, const fs::path& target) {
  const fs::path dir = link.parent_path();
  std::random_device seed;
  std::mt19937 rng(seed());
  fs::path tmp;
  for (int attempt = 0;; ++attempt) {
    tmp = dir / fmt::format(".{}.tmp-{:06x}", link.filename().string(),
                            rng() & 0xffffff);
    if (::symlink(target.c_str(), tmp.c_str()) == 0) break;
    // A leftover of a crashed run, or another switch running right now.
    if (errno != EEXIST || attempt == 100)
      throw_errno(tmp.string(), "cannot create symlink");
  }
  if (::rename(tmp.c_str(), link.c_str()) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    throw Error(Errc::io, link.string(),
                fmt::format("cannot replace with a link to {}: {}",
                            target.string(), std::strerror(err)));
  }
  // Make the new link survive a crash (best effort: some filesystems
  // don't support fsync on directories).
  int fd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY);
  if (fd >= 0) {
    ::fsync(fd);
    ::close(fd);
  }
}

}  // namespace

const char* magma_switch_name(MagmaSwitch m) {
  switch (m) {
    case MagmaSwitch::switched:
      return "switched";
    case MagmaSwitch::absent:
      return "absent";
    case MagmaSwitch::skipped:
      return "skipped";
  }
  return "?";
}

SwitchResult switch_toolkit(const fs::path& root,
                            const config::Accelerator& version,
                            bool switch_magma) {
  const std::string name = detail::toolkit_dir_name(version);
  std::error_code ec;
  if (!fs::is_directory(root / name, ec)) detail::throw_missing(root, version);

  SwitchResult r;
  r.link = root / "cuda";
  r.new_target = name;
  // Every refusal before the first change, so a refused switch leaves
  // both links as they were.
  r.old_target = replaceable_link(r.link, "");
  if (switch_magma) {
    // The manywheel images keep magma inside the toolkit
    // (/usr/local/magma -> /usr/local/cuda-$V/magma); a separate
    // magma-cudaXY (the conda package's name) is accepted too.
    for (fs::path candidate :
         {fs::path(name) / "magma",
          fs::path(
              fmt::format("magma-cuda{}{}", version.major, version.minor))}) {
      if (fs::is_directory(root / candidate, ec)) {
        r.magma_new_target = candidate;
        break;
      }
    }
    if (r.magma_new_target) {
      r.magma_old_target = replaceable_link(root / "magma", ", or --no-magma");
      r.magma = MagmaSwitch::switched;
    } else {
      // Left alone, but reported: it may still point to another version's
      // magma.
      r.magma = MagmaSwitch::absent;
      if (fs::is_symlink(root / "magma", ec))
        r.magma_old_target = fs::read_symlink(root / "magma", ec);
      if (ec) r.magma_old_target.reset();
    }
  }

  replace_link(r.link, r.new_target);
  if (r.magma_new_target) replace_link(root / "magma", *r.magma_new_target);
  return r;
}

}  // namespace libpkg::cuda
