// SPDX-License-Identifier: BSD-3-Clause
// Version policy (builder-scripts.md §6.3, §8.37, §8.61): nightly dates in
// UTC whatever TZ says, release tags, .postN only above 1, local suffixes.
#include "libpkg/config/version.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <ctime>

#include "libpkg/base/error.hpp"

namespace {

using libpkg::Errc;
using libpkg::Error;
using namespace libpkg::config;
using namespace std::chrono;

constexpr sys_days kDocDay = 2019y / September / 12;

TEST(Nightly, DocExample) {
  EXPECT_EQ(nightly_version("1.3.0", kDocDay), "1.3.0.dev20190912");
  EXPECT_EQ(utc_date_stamp(sys_days{2024y / January / 5}), "20240105");
  EXPECT_EQ(nightly_version("2.6", sys_days{2024y / December / 31}),
            "2.6.dev20241231");
}

TEST(Nightly, TimeTIsUtcWhateverTheTimeZone) {
  // 2019-09-12 23:30:00 UTC: already the 13th in Kiritimati (UTC+14), still
  // the 12th in UTC. The nightly must say 12.
  std::time_t t = 1568331000;
  ASSERT_EQ(utc_day(t), kDocDay);
  const char* old = std::getenv("TZ");
  std::string saved = old ? old : "";
  setenv("TZ", "Pacific/Kiritimati", 1);
  tzset();
  // Make sure the zone took effect (if the zone database is missing the
  // test still checks UTC, which is what matters).
  std::tm local{};
  localtime_r(&t, &local);
  if (local.tm_mday != 13)
    std::fprintf(stderr, "note: TZ database lacks Pacific/Kiritimati\n");
  EXPECT_EQ(nightly_version("1.3.0", t), "1.3.0.dev20190912");
  EXPECT_EQ(utc_date_stamp(utc_day(t)), "20190912");
  // One second after midnight UTC: the 13th.
  EXPECT_EQ(nightly_version("1.3.0", std::time_t{1568332800}),
            "1.3.0.dev20190913");
  if (old)
    setenv("TZ", saved.c_str(), 1);
  else
    unsetenv("TZ");
  tzset();
}

TEST(Nightly, BadBase) {
  for (const char* bad :
       {"", "1", "1.3.0a1", "1.3.0+cu124", "v1.3.0", "1..3"}) {
    SCOPED_TRACE(bad);
    try {
      nightly_version(bad, kDocDay);
      ADD_FAILURE() << "accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Errc::usage);
      EXPECT_NE(std::string(e.what()).find(std::string("'") + bad + "'"),
                std::string::npos)
          << e.what();
    }
  }
}

TEST(Release, Tags) {
  EXPECT_EQ(release_version("v1.5.0-rc1"), "1.5.0");
  EXPECT_EQ(release_version("v2.4.1"), "2.4.1");
  EXPECT_EQ(release_version("1.5.0"), "1.5.0");
  EXPECT_THROW(release_version("vnext"), Error);
  EXPECT_THROW(release_version("v1"), Error);
  EXPECT_EQ(upload_channel("1.3.0.dev20190912"), "nightly");
  EXPECT_EQ(upload_channel("1.5.0"), "test");
}

TEST(BuildNumber, PostOnlyAboveOne) {
  EXPECT_EQ(with_build_number("2.5.0", 0), "2.5.0");
  EXPECT_EQ(with_build_number("2.5.0", 1), "2.5.0");
  EXPECT_EQ(with_build_number("2.5.0", 2), "2.5.0.post2");
  // PEP 440 order: the post release before the local part.
  EXPECT_EQ(with_build_number("2.5.0+cu124", 3), "2.5.0.post3+cu124");
  EXPECT_THROW(with_build_number("2.5.0", -1), Error);
}

TEST(LocalSuffix, Rules) {
  Accelerator cu124 = parse_accelerator("cu124");
  EXPECT_EQ(local_suffix(PackageType::manywheel, "linux", cu124), "+cu124");
  EXPECT_EQ(local_suffix(PackageType::libtorch, "linux", cu124), "+cu124");
  EXPECT_EQ(
      local_suffix(PackageType::manywheel, "linux", parse_accelerator("cpu")),
      "+cpu");
  EXPECT_EQ(local_suffix(PackageType::manywheel, "linux",
                         parse_accelerator("rocm6.1")),
            "+rocm6.1");
  EXPECT_EQ(
      local_suffix(PackageType::manywheel, "linux", parse_accelerator("xpu")),
      "+xpu");
  // Never for conda or macOS: "base for Darwin, conda, or the default CUDA"
  // (builder-scripts.md §6.3), the macOS libtorch zip included.
  EXPECT_EQ(local_suffix(PackageType::conda, "linux", cu124), "");
  EXPECT_EQ(
      local_suffix(PackageType::wheel_macos, "macos", parse_accelerator("cpu")),
      "");
  EXPECT_EQ(
      local_suffix(PackageType::libtorch, "macos", parse_accelerator("cpu")),
      "");
  EXPECT_EQ(local_suffix(PackageType::conda, "macos", parse_accelerator("cpu")),
            "");
  EXPECT_EQ(local_suffix(parse_build_environment("libtorch cpu macos arm64")),
            "");
  EXPECT_EQ(local_suffix(parse_build_environment("libtorch cpu")), "+cpu");
  EXPECT_EQ(package_version(
                "2.6.0", parse_build_environment("libtorch cpu macos x86_64")),
            "2.6.0");
  // The 2019 default-CUDA exception (cu100 for 1.3.0.dev).
  VersionPolicy p;
  p.default_cuda = parse_accelerator("cu100");
  EXPECT_EQ(package_version("1.3.0.dev20190912", PackageType::manywheel,
                            "linux", parse_accelerator("cu100"), p),
            "1.3.0.dev20190912");
  EXPECT_EQ(package_version("1.3.0.dev20190912", PackageType::manywheel,
                            "linux", parse_accelerator("cu92"), p),
            "1.3.0.dev20190912+cu92");
  EXPECT_EQ(package_version("1.3.0.dev20190912", PackageType::manywheel,
                            "linux", parse_accelerator("cpu"), p),
            "1.3.0.dev20190912+cpu");
  VersionPolicy off;
  off.local_suffix = false;
  EXPECT_EQ(local_suffix(PackageType::manywheel, "linux", cu124, off), "");
  // A base that already has a local part is not suffixed twice.
  EXPECT_THROW(
      package_version("2.5.0+cu124", PackageType::manywheel, "linux", cu124),
      Error);
  EXPECT_EQ(package_version("2.5.0+cu124", PackageType::conda, "linux", cu124),
            "2.5.0+cu124");
}

}  // namespace
