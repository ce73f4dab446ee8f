// SPDX-License-Identifier: BSD-3-Clause
// The manywheel driver's bundling rules (private to libpkg): what one build
// configuration bundles, excludes, keeps by name and puts in the search
// path, derived from the per-CUDA table as build_cuda.sh derived DEPS_LIST,
// the keep-name exemptions and CUDA_RPATHS.
#pragma once

#include <string>
#include <vector>

#include "libpkg/bundle/repair.hpp"
#include "libpkg/config/cuda_table.hpp"
#include "libpkg/driver/manywheel.hpp"

namespace libpkg::driver::detail {

struct BundleRules {
  const config::CudaTable* table = nullptr;  // CUDA builds only
  std::vector<std::string> include;          // AnalyzeOptions::include
  std::vector<std::string> exclude;          // AnalyzeOptions::exclude
  std::vector<bundle::RepairOptions::IncludeRule> include_rules;
  std::vector<std::string> keep_names;
  // pypi-CUDA mode: the table's RPATH entries as written
  // ("$ORIGIN/../../nvidia/cublas/lib", for files of <package>/lib).
  std::vector<std::string> pypi_rpath;
  // Libraries the checks accept from outside the package (pypi-CUDA: the
  // nvidia-* wheels provide them).
  std::vector<std::string> allow_external;
  std::vector<std::string> plan;  // one line each, for Summary::plan
  // For a build command: TORCH_CUDA_ARCH_LIST (the table's, for this
  // architecture), TORCH_NVCC_FLAGS and the table's build settings.
  std::vector<std::string> build_env;
  // The table's policy for this architecture ("" = keep "auto").
  std::string plat;
};

// The rules of options.config (Errc::not_found for a CUDA version without
// a table or bundle list, or a table library missing on disk; Errc::usage
// for an --enable condition the table does not have).
BundleRules bundle_rules(const ManywheelOptions& options);

// The table's pypi RPATH entries as install-root directories, resolved
// against the lib directory they are written for ("$ORIGIN/../../nvidia/
// cublas/lib" with "torch/lib" → "nvidia/cublas/lib"); absolute entries
// stay as written. Errc::usage for an entry that leaves the install root.
std::vector<std::string> install_root_dirs(
    const std::vector<std::string>& entries, const std::string& lib_dir);

}  // namespace libpkg::driver::detail
