// SPDX-License-Identifier: BSD-3-Clause
// Artifact names for a build configuration, from one place (builder-scripts
// §2.4 step 6, §3.1, §4, §8.63): producers, smoke tests and uploaders all
// call these instead of re-deriving names with sed and globbing.
//   wheel:    torch-2.5.0+cu124-cp311-cp311-linux_x86_64.whl (as setup.py
//             names it; retagging to manylinux is the repair step's job),
//             macOS torch-2.5.0-cp311-none-macosx_11_0_arm64.whl
//   conda:    build string py3.11_cuda12.4_cudnn9.1_0, py3.11_cpu_0,
//             macOS py3.11_0; file pytorch-<version>-<build string>.tar.bz2
//   libtorch: delegated to cppdist naming (zip, -latest, debug zips)
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "libpkg/base/integers.hpp"
#include "libpkg/config/build.hpp"
#include "libpkg/cppdist/naming.hpp"
#include "libpkg/wheel/name.hpp"

namespace libpkg::config {

/// The wheel platform tag setup.py produces: "linux_x86_64"; on macOS
/// "macosx_10_9_x86_64" / "macosx_11_0_arm64" (the deployment targets of
/// the old builds, §4).
std::string wheel_platform_tag(const BuildConfig& config);
/// manywheel and wheel_macos only (Errc::usage otherwise). The macOS ABI tag
/// is "none", as the old build_wheel.sh renamed it.
wheel::WheelName wheel_name(const BuildConfig& config);

/// "py3.11_cuda12.4_cudnn9.1_0"; conda only. A CUDA build needs
/// config.cudnn_version (Errc::usage naming CUDNN_VERSION otherwise).
std::string conda_build_string(const BuildConfig& config);
/// "pytorch-<version>-<build string><extension>" (".tar.bz2" or ".conda").
std::string conda_file_name(const BuildConfig& config,
                            std::string_view extension = ".tar.bz2");
/// The recipe's injected requirement specs for a CUDA conda build (§3.1):
/// "pytorch-cuda >=12.4,<12.5" and "magma-cuda124"; "" for cpu.
std::string conda_cuda_constraint(const BuildConfig& config);
/// The magma package a CUDA conda build requires ("magma-cuda124"); "" for cpu.
/// Throws Errc::usage for a non-conda configuration.
std::string conda_magma_package(const BuildConfig& config);

/// libtorch only: the cppdist name of this configuration's zip.
cppdist::LibtorchName libtorch_name(const BuildConfig& config);

/// Every artifact name the configuration produces, as (role, file name):
/// "wheel"; "conda" and "conda-v2" (.conda); "libtorch" and
/// "libtorch-latest"… and, when a debuglink CRC is known, "debug-libtorch" /
/// "debug-wheel". Roles are stable identifiers for scripts.
std::vector<std::pair<std::string, std::string>> artifact_names(
    const BuildConfig& config, std::optional<u32> debuglink_crc = {});

/// The package directory suffix of the old scripts (§2.2): "cpu", "xpu",
/// "118" (CUDA without dots), "rocm6.1".
std::string package_dir_suffix(const BuildConfig& config);

}  // namespace libpkg::config
