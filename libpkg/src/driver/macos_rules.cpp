// SPDX-License-Identifier: BSD-3-Clause
// macos_deployment_target and check_one_openmp: see macos_rules.hpp.
#include "driver/macos_rules.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

#include "libpkg/base/error.hpp"
#include "libpkg/driver/wheel_macos.hpp"

namespace libpkg::driver::detail {

wheel::MacosVersion macos_deployment_target(
    const std::optional<std::string>& given, const std::string& arch) {
  wheel::MacosVersion t = wheel::MacosVersion::parse(
      given.value_or(std::string("10.15")), "MACOSX_DEPLOYMENT_TARGET");
  if (arch == "arm64") t = std::max(t, wheel::MacosVersion{11, 0});
  return t;
}

void check_one_openmp(const std::string& where,
                      const std::vector<std::string>& files,
                      const std::vector<bundle::MacosGraft>& grafts,
                      const std::string& home) {
  for (const auto& g : grafts)
    if (is_openmp_runtime(g.name))
      throw Error(Errc::format, where,
                  fmt::format("{} would be bundled as {} (found at {}): the "
                              "package must ship its one OpenMP runtime in {}",
                              g.name, g.member, g.source.string(), home));
  std::vector<std::string> runtimes;
  for (const auto& f : files)
    if (is_openmp_runtime(std::filesystem::path(f).filename().string()))
      runtimes.push_back(f);
  if (runtimes.size() > 1)
    throw Error(Errc::format, where,
                fmt::format("{} OpenMP runtimes ({}): one would load next to "
                            "the other (OMP: Error #15, pytorch#122705); ship "
                            "one, in {}",
                            runtimes.size(), fmt::join(runtimes, ", "), home));
}

}  // namespace libpkg::driver::detail
