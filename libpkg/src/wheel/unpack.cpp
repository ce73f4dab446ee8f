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
  if (options.verify) {
    VerifyOptions vopt;
    vopt.threads = options.threads;
    VerifyReport report = verify(zip, vopt);
    if (!report.ok())
      throw Error(
          Errc::format, zip.name(),
          "RECORD check failed (" + std::to_string(report.findings.size()) +
              " finding(s)); first: " + report.findings.front().message());
  }
  fs::path target = dest / name.name_version();
  archive::ExtractOptions xopt;
  xopt.threads = options.threads;
  archive::extract(zip, target, xopt);
  return target;
}

}  // namespace libpkg::wheel
