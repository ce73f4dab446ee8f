// SPDX-License-Identifier: BSD-3-Clause
// Version policy: nightly and release versions, .postN, local suffixes.
// Dates are computed from std::chrono civil arithmetic on UTC days, never
// through localtime/strftime, so TZ cannot change a nightly's version.
#include "libpkg/config/version.hpp"

#include <fmt/format.h>

#include "libpkg/base/error.hpp"

namespace libpkg::config {
namespace {

// "N.N[.N…]": the release part of a PEP 440 version.
bool is_release(std::string_view v) {
  int parts = 0;
  std::size_t i = 0;
  while (i <= v.size()) {
    std::size_t start = i;
    while (i < v.size() && v[i] >= '0' && v[i] <= '9') ++i;
    if (i == start) return false;
    ++parts;
    if (i == v.size()) break;
    if (v[i] != '.') return false;
    ++i;
  }
  return parts >= 2;
}

}  // namespace

std::chrono::sys_days utc_day(std::time_t t) {
  using namespace std::chrono;
  return floor<days>(sys_seconds{seconds{t}});
}

std::string utc_date_stamp(std::chrono::sys_days day) {
  std::chrono::year_month_day ymd{day};
  return fmt::format("{:04}{:02}{:02}", static_cast<int>(ymd.year()),
                     static_cast<unsigned>(ymd.month()),
                     static_cast<unsigned>(ymd.day()));
}

std::string nightly_version(std::string_view base, std::chrono::sys_days day) {
  if (!is_release(base))
    throw Error(Errc::usage, "",
                fmt::format("nightly base version '{}' is not N.N[.N] "
                            "(e.g. 2.6.0)",
                            base));
  return fmt::format("{}.dev{}", base, utc_date_stamp(day));
}

std::string nightly_version(std::string_view base, std::time_t t) {
  return nightly_version(base, utc_day(t));
}

std::string release_version(std::string_view tag) {
  std::string_view v = tag;
  if (v.starts_with('v')) v.remove_prefix(1);
  v = v.substr(0, v.find('-'));
  if (!is_release(v))
    throw Error(Errc::usage, "",
                fmt::format("release tag '{}' is not vN.N[.N][-suffix] "
                            "(e.g. v1.5.0-rc1)",
                            tag));
  return std::string(v);
}

std::string upload_channel(std::string_view version) {
  return version.find(".dev") != std::string_view::npos ? "nightly" : "test";
}

std::string with_build_number(std::string_view version, int build_number) {
  if (build_number < 0)
    throw Error(Errc::usage, "",
                fmt::format("build number {} is negative", build_number));
  if (build_number <= 1) return std::string(version);
  auto plus = version.find('+');
  std::string_view local =
      plus == std::string_view::npos ? "" : version.substr(plus);
  return fmt::format("{}.post{}{}", version.substr(0, plus), build_number,
                     local);
}

std::string local_suffix(PackageType type, std::string_view os,
                         const Accelerator& accel,
                         const VersionPolicy& policy) {
  if (!policy.local_suffix) return "";
  // binary_populate_env.sh: "base for Darwin, conda, or the default CUDA" —
  // Darwin whatever the package type (libtorch-macos-<arch>-<ver>.zip has
  // no +cpu).
  if (type == PackageType::conda || type == PackageType::wheel_macos ||
      os == "macos")
    return "";
  if (policy.default_cuda && *policy.default_cuda == accel) return "";
  return "+" + accel.tag();
}

std::string local_suffix(const BuildConfig& config,
                         const VersionPolicy& policy) {
  return local_suffix(config.type, config.os, config.accelerator, policy);
}

std::string package_version(std::string_view base, PackageType type,
                            std::string_view os, const Accelerator& accel,
                            const VersionPolicy& policy) {
  std::string suffix = local_suffix(type, os, accel, policy);
  if (!suffix.empty() && base.find('+') != std::string_view::npos)
    throw Error(Errc::usage, "",
                fmt::format("version '{}' already has a local part; not "
                            "adding '{}'",
                            base, suffix));
  return std::string(base) + suffix;
}

std::string package_version(std::string_view base, const BuildConfig& config,
                            const VersionPolicy& policy) {
  return package_version(base, config.type, config.os, config.accelerator,
                         policy);
}

}  // namespace libpkg::config
