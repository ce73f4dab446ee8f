// SPDX-License-Identifier: BSD-3-Clause
// The wheel_macos driver: a built macOS wheel (or the build command that
// writes one) → the distributable wheel → check_binary.
//
// It replaces wheel/build_wheel.sh's tail (builder-scripts.md §4):
// `delocate-wheel`, then a copy under a hand-made name that left WHEEL's
// Tag lines behind. Here one macOS repair (bundle/macos_repair.hpp) bundles
// what the Mach-O files load from outside the wheel into <package>/.dylibs,
// redirects references to a library the wheel already ships (libomp in
// torch/lib: one OpenMP runtime, never a second copy in .dylibs), re-signs
// what it edits, and names the wheel as the old script did,
// `torch-<ver>-cp<XY>-none-macosx_<tag>.whl`, with WHEEL's Tag lines
// agreeing. MACOSX_DEPLOYMENT_TARGET (10.15 by default, as the scripts) is
// the tag's floor and ceiling; arm64 is never tagged below 11.0.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "libpkg/driver/common.hpp"

namespace libpkg::driver {

/// What the wheel_macos job reads and how it repairs: the input wheel or the
/// build command that writes one, the deployment target, where outside
/// libraries are looked up and which are left out.
struct WheelMacosOptions {
  CommonOptions common;
  // The input: a built wheel, or a build command run (with `sh -c`, its
  // output on stderr) in `source_dir` that writes one wheel under
  // `dist_dir` (empty: <source_dir>/dist; relative: to source_dir).
  std::filesystem::path wheel;
  std::string build_command;
  unsigned build_timeout_seconds = 0;
  std::filesystem::path source_dir;
  std::filesystem::path dist_dir;
  // MACOSX_DEPLOYMENT_TARGET ("10.15", "11.0"); unset: 10.15.
  std::optional<std::string> deployment_target;
  // Where libraries outside the wheel are found first, by leaf name
  // (DYLD_LIBRARY_PATH, -L); the driver never reads the environment.
  std::vector<std::filesystem::path> library_path;
  // fnmatch globs of libraries other wheels provide (not bundled).
  std::vector<std::string> exclude;
};

/// True for the leaf names of the OpenMP runtimes (libomp, libiomp5,
/// libgomp) a macOS wheel may ship once, in <package>/lib; never throws.
bool is_openmp_runtime(const std::string& leaf_name);

/// Runs the job. Throws libpkg::Error for bad input: a missing wheel or
/// source directory (Errc::not_found), a wheel for another python or
/// architecture than the configuration's (Errc::usage), an OpenMP runtime
/// the repair would bundle into .dylibs (Errc::format: the build must ship
/// it in <package>/lib), and whatever the repair refuses. A dry run returns
/// the plan and writes nothing (a build command is not run).
Summary run_wheel_macos(const WheelMacosOptions& options);

}  // namespace libpkg::driver
