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
  if (options.verify)
    require_verified(zip, options.threads, "use --no-verify to unpack it",
                     options.pool);
  fs::path target = dest / name.name_version();
  archive::ExtractOptions xopt;
  xopt.threads = options.threads;
  xopt.pool = options.pool;
  xopt.max_expansion = options.max_expansion;
  archive::extract(zip, target, xopt);
  return target;
}

}  // namespace libpkg::wheel
