// SPDX-License-Identifier: BSD-3-Clause
// Version policy for binary builds (builder-scripts.md §2.2, §6.3, §8.37,
// §8.61), in one place instead of the three the old scripts had:
//  - nightlies are "<X.Y.Z>.devYYYYMMDD", the date taken in UTC (cron's
//    nightly_defaults.sh used local `date`, CircleCI `date -u`; a build
//    started near midnight got two different dates);
//  - a release tag "v1.5.0-rc1" gives "1.5.0" and the test/ channel;
//  - OVERRIDE_PACKAGE_VERSION is taken exactly; otherwise ".postN" is
//    appended only when N > 1 (cron appended N without ".post": a bug);
//  - the local suffix "+cu124"/"+cpu"/"+rocm6.1"/"+xpu" is never put on
//    conda or macOS builds, and optionally not on one "default CUDA" (the
//    2019 policy: cu100/cu101/cu102 wheels had no suffix).
#pragma once

#include <chrono>
#include <ctime>
#include <optional>
#include <string>
#include <string_view>

#include "libpkg/config/accelerator.hpp"
#include "libpkg/config/build.hpp"

namespace libpkg::config {

/// "20190912" for that UTC day.
std::string utc_date_stamp(std::chrono::sys_days day);
/// The UTC day of a time_t (never the local one: no TZ dependence).
std::chrono::sys_days utc_day(std::time_t t);

/// "1.3.0" + 2019-09-12 → "1.3.0.dev20190912". `base` must be a release
/// version (digits and dots, N.N[.N…]); Errc::usage otherwise.
std::string nightly_version(std::string_view base, std::chrono::sys_days day);
std::string nightly_version(std::string_view base, std::time_t t);

/// A release tag "v1.5.0-rc1" / "v2.4.1" / "1.5.0" → "1.5.0": the leading
/// 'v' and everything after the first '-' removed, as binary_populate_env.sh
/// did. Errc::usage when what remains is not N.N[.N…].
std::string release_version(std::string_view tag);

/// Upload channel: "nightly" for a .devN version, "test" otherwise (release
/// candidates and tags went to test/ first).
std::string upload_channel(std::string_view version);

/// `version` with ".postN" when build_number > 1 (before any local part:
/// "2.5.0+cu124", 2 → "2.5.0.post2+cu124", the PEP 440 order), unchanged
/// otherwise. A negative build number is Errc::usage.
std::string with_build_number(std::string_view version, int build_number);

/// Which builds get a local version suffix (+cu124).
struct VersionPolicy {
  // Whether wheels (manywheel, libtorch) get a local suffix at all.
  bool local_suffix = true;
  // The 2019 "default CUDA" exception: this accelerator gets no suffix.
  std::optional<Accelerator> default_cuda;
};

/// The local suffix ("+cu124", "+cpu", "+rocm6.1", "+xpu") for a package of
/// `type` built on `os` ("linux", "macos") for `accel`, or "" (conda, any
/// macOS package — the wheel and the libtorch zip alike —, the default CUDA,
/// or the policy turns suffixes off). Throws nothing.
std::string local_suffix(PackageType type, std::string_view os,
                         const Accelerator& accel,
                         const VersionPolicy& policy = {});
/// local_suffix of `config`'s package type, OS and accelerator.
std::string local_suffix(const BuildConfig& config,
                         const VersionPolicy& policy = {});
/// `base` + local_suffix(...): the PYTORCH_BUILD_VERSION the old scripts
/// computed for such a build. Errc::usage when `base` already has a local
/// part and a suffix would be added.
std::string package_version(std::string_view base, PackageType type,
                            std::string_view os, const Accelerator& accel,
                            const VersionPolicy& policy = {});
/// package_version for `config`'s package type, OS and accelerator.
std::string package_version(std::string_view base, const BuildConfig& config,
                            const VersionPolicy& policy = {});

}  // namespace libpkg::config
