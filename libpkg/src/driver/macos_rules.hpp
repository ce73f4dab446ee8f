// SPDX-License-Identifier: BSD-3-Clause
// The rules the macOS drivers share (private to driver/): the wheel_macos
// driver and the libtorch driver's macOS zip take the deployment target
// and the one OpenMP runtime from the same place.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "libpkg/bundle/macos_repair.hpp"
#include "libpkg/wheel/macos_tag.hpp"

namespace libpkg::driver::detail {

// MACOSX_DEPLOYMENT_TARGET as given (10.15 by default, as the release
// scripts), raised to 11.0 for arm64 (the first macOS on it). Throws
// Errc::usage for a value that is not a version.
wheel::MacosVersion macos_deployment_target(
    const std::optional<std::string>& given, const std::string& arch);

// One OpenMP runtime: the package's own copy (the wheel's
// torch/lib/libomp.dylib). Throws Errc::format naming `where` when the
// plan would bundle one (`grafts`: the build did not ship it, and a second
// copy would load next to any other package's, pytorch#122705), or when
// `files` (the package's Mach-O files) hold more than one. `home` says
// where the one runtime belongs ("<package>/lib (torch/lib/libomp.dylib)").
void check_one_openmp(const std::string& where,
                      const std::vector<std::string>& files,
                      const std::vector<bundle::MacosGraft>& grafts,
                      const std::string& home);

}  // namespace libpkg::driver::detail
