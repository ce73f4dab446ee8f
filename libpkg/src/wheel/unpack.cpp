// SPDX-License-Identifier: BSD-3-Clause
// `wheel unpack`: safe extraction into <dest>/<name>-<version> (see
// wheel.hpp).
#include "libpkg/archive/extract.hpp"
#include "libpkg/base/error.hpp"
#include "libpkg/wheel/wheel.hpp"

namespace fs = std::filesystem;

namespace libpkg::wheel {

fs::path unpack(const fs::path& wheel, const fs::path& dest,
                const UnpackOptions& options) {
  const WheelName name = WheelName::parse(wheel.filename().string());
  auto zip = archive::ZipReader::open(wheel);
  // Names first: a hostile member is a hard error (exit 2), not a finding.
  archive::check_member_names(zip);
  fs::path target = dest / name.name_version();
  archive::ExtractOptions xopt;
  xopt.threads = options.threads;
  xopt.pool = options.pool;
  xopt.max_expansion = options.max_expansion;
  archive::BeforeInstallFn check_record;
  if (options.verify) {
    // Each member is inflated once: hashed as it is written into the
    // staging directory, and RECORD is checked against those digests before
    // the staging directory is renamed onto the target, so a wheel that
    // fails leaves nothing there.
    xopt.digests = true;
    check_record = [&](const archive::ExtractReport& report, const fs::path&) {
      wheel::VerifyOptions vo;
      vo.threads = options.threads;
      vo.pool = options.pool;
      vo.digests = report.digests;
      require_verified(zip, vo, "use --no-verify to unpack it");
    };
  }
  archive::extract(zip, target, xopt, check_record);
  return target;
}

}  // namespace libpkg::wheel
