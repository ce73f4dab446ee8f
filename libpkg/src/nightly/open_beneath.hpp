// SPDX-License-Identifier: BSD-3-Clause
// Opening a file named by a job document without following a symlink
// anywhere on its way: O_NOFOLLOW alone covers only the last component, so
// `sub/dir/x.whl` with `dir -> /etc` would still lead out of the nightly.
// openat2(RESOLVE_NO_SYMLINKS | RESOLVE_BENEATH) does it in the kernel
// (Linux >= 5.6); where it is missing or filtered (seccomp returns ENOSYS or
// EPERM in some containers) each component is opened with
// openat(O_NOFOLLOW) below the previous one.
#pragma once

#include <filesystem>
#include <string>

#include "libpkg/base/fd.hpp"

namespace libpkg::nightly {

/// Opens the regular file `rel` (relative, without "..") below the directory
/// `base` read-only, following no symlink in `rel` (`base` itself may be
/// reached through one). Errc::format naming base/rel when a component is a
/// symlink, leaves `base` or the file is not regular; an errno Error
/// otherwise (a missing file: Errc::not_found).
Fd open_beneath(const std::filesystem::path& base,
                const std::filesystem::path& rel);

/// open_beneath without openat2: one openat(O_NOFOLLOW) per component. The
/// same results and errors; exposed so the fallback is tested on kernels
/// that have openat2.
Fd open_beneath_walk(const std::filesystem::path& base,
                     const std::filesystem::path& rel);

}  // namespace libpkg::nightly
