// SPDX-License-Identifier: BSD-3-Clause
// The libtorch driver's macOS half (private): the tree's Mach-O bundle with
// the wheel_macos driver's OpenMP rule, and the platform the zip is
// checked against.
#pragma once

#include <string>
#include <vector>

#include "driver/libtorch_input.hpp"
#include "libpkg/bundle/macos_tree.hpp"

namespace libpkg::driver {

// Plans the bundle of input.tree into its lib/ (bundle/macos_tree.hpp,
// @rpath references) and checks the one OpenMP runtime
// (detail::check_one_openmp), appending plan lines. Throws as
// plan_macos_tree_bundle and check_one_openmp do.
bundle::MacosTreeBundlePlan plan_libtorch_macos(
    const LibtorchDriverOptions& options, const LibtorchInput& input,
    std::vector<std::string>& plan);

// "macosx_11_0_arm64": the deployment target and arch of the zip.
std::string macos_zip_platform(const LibtorchDriverOptions& options);

}  // namespace libpkg::driver
