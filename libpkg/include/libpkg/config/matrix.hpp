// SPDX-License-Identifier: BSD-3-Clause
// The configuration matrix (builder-scripts.md §6.2, §8.48): package types
// × pythons × accelerators × ABIs × libtorch variants, with exclusions,
// from one data file (data/matrix.json, embedded) instead of schedules
// hardcoded in four scripts. Every entry is a validated BuildConfig, so a
// bad matrix file fails here, not in a CI job hours later.
//
// Matrix file format:
//   {"groups": [{"package_type": "manywheel", "os": "linux",
//                "arch": "x86_64", "pythons": ["3.11", …],
//                "accelerators": ["cpu", "cu124", …],
//                "abis": ["pre-cxx11", "cxx11"],          (optional)
//                "variants": ["shared-with-deps", …]},     (libtorch)
//               …],
//    "exclude": [{"package_type": "manywheel", "python": "3.13t",
//                 "accelerator": "rocm*"}, …]}
// An exclusion removes entries matching all of its fields; values are
// fnmatch patterns over package_type, python, accelerator (the tag: cu124,
// rocm6.1), abi (cxx11, pre-cxx11), variant, os, arch.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "libpkg/config/build.hpp"

namespace libpkg::config {

/// Restricts expand_matrix to some package types, accelerators and pythons.
struct MatrixFilter {
  std::vector<std::string> package_types;  // empty: any
  std::vector<std::string> accelerators;   // tags or any parse_accelerator form
  std::vector<std::string> pythons;        // any PythonVersion::parse form
};

/// The embedded data/matrix.json text.
std::string_view builtin_matrix_json();

/// Expands a matrix document (`origin` names it in Errc::format errors),
/// in file order, then filters. Configurations are validated.
std::vector<BuildConfig> expand_matrix(std::string_view json_text,
                                       const std::string& origin,
                                       const MatrixFilter& filter = {});

/// The job name of a configuration: "manywheel-py3_11-cuda12_4",
/// "manywheel-py3_7m-cpu",
/// "libtorch-cpu-shared-with-deps-cxx11", "conda-py3_11-cpu",
/// "wheel-py3_11-cpu-macos-arm64".
std::string build_name(const BuildConfig& config);

/// A GitHub Actions strategy.matrix document: {"include": [{...}, …]}, each
/// entry with package_type, desired_python, desired_cuda, gpu_arch_type,
/// gpu_arch_version, desired_devtoolset, cxx_abi, libtorch_variant, os,
/// arch, build_name, build_environment (strings; "" when not applicable).
std::string matrix_json(const std::vector<BuildConfig>& configs, int indent);

}  // namespace libpkg::config
