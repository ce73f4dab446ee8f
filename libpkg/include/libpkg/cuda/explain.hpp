// SPDX-License-Identifier: BSD-3-Clause
// What a build configuration will bundle from its CUDA table and why, for
// `pkgtool config --explain`: each library with where it comes from (or
// every place it was looked for), whether it keeps its name and by which
// rule, and the source of each rule; then the arch list, nvcc flags, build
// settings and the PyPI-CUDA RPATH list.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "libpkg/config/build.hpp"
#include "libpkg/config/cuda_table.hpp"

namespace libpkg::cuda {

/// One line per fact (no trailing newlines). Errc::usage for a non-CUDA
/// configuration; Errc::not_found for a version the tables do not know.
std::vector<std::string> explain_bundle(
    const config::BuildConfig& config, const config::CudaTables& tables,
    const std::vector<std::filesystem::path>& roots);

}  // namespace libpkg::cuda
