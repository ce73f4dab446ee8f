// SPDX-License-Identifier: BSD-3-Clause
// The conda driver: a staged install prefix plus metadata → relocation
// (RPATH into the environment) → `.conda` and/or `.tar.bz2` with info/
// generated (prefix placeholders included) → check_binary on each package.
//
// It replaces conda/build_pytorch.sh and the recipe's post-processing
// (builder-scripts.md §3): the name, version and build string come from the
// build configuration (py3.11_cuda12.4_cudnn9.1_0), the requirement lines
// the old script injected into the recipe become index.json depends, and
// the relocation conda-build did (and build.sh hand-patched with patchelf)
// is conda::relocate_into. Where conda-build ran the whole build, this
// driver starts from what the build installed.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "libpkg/conda/metadata.hpp"
#include "libpkg/conda/package.hpp"
#include "libpkg/conda/relocate.hpp"
#include "libpkg/driver/common.hpp"

namespace libpkg::driver {

/// The conda driver's options: the staged prefix, the metadata sources, the
/// formats and the relocation of search paths.
struct CondaDriverOptions {
  CommonOptions common;
  // The staged install prefix: what `$PREFIX` holds after the build
  // (lib/, bin/, lib/pythonX.Y/site-packages/...). Never modified.
  std::filesystem::path prefix;
  // Metadata: defaults from the configuration, then the JSON file's fields
  // (conda::parse_metadata_json; name/version/build/build_number present
  // in the file replace the defaults), then `metadata`'s non-empty fields.
  // depends/constrains of the file and of `metadata` are concatenated.
  std::optional<std::filesystem::path> metadata_file;
  conda::CondaMetadata metadata;
  // Append the requirements the old recipe added for the configuration
  // (the python pin, `pytorch-cuda >=X.Y,<X.Y+1` for CUDA) unless a depends
  // spec already names that package.
  bool inject_depends = true;
  std::vector<conda::PackageFormat> formats = {conda::PackageFormat::conda,
                                               conda::PackageFormat::tar_bz2};
  int zstd_level = 19;  // 1..22
  // The build prefix the files were built for (searched for in every file
  // and recorded as the prefix placeholder). Unset: the staged prefix's
  // own absolute path. Empty: no placeholder search.
  std::optional<std::string> placeholder;
  conda::OutsideRpath outside_rpaths = conda::OutsideRpath::drop;
};

/// The package metadata the options resolve to (before
/// conda::complete_metadata, which pack applies): exposed so a dry run,
/// Python and tests see exactly what index.json will say. Throws
/// Errc::usage / Errc::format for bad values or a bad JSON file.
conda::CondaMetadata resolve_conda_metadata(const CondaDriverOptions& options);

/// The conda name of a configuration's package: TORCH_PACKAGE_NAME, with
/// "torch" published as "pytorch" (build_pytorch.sh's package name).
std::string conda_package_name(const config::BuildConfig& config);

/// CUDNN_VERSION for a CUDA configuration that names none, as the old
/// build read it from the toolkit: the cuDNN version (major.minor) in the
/// headers of the first toolkit among common.cuda_roots (default
/// /usr/local/cuda) whose CUDA version is the configuration's, and where
/// it was read. nullopt when no such toolkit has cuDNN.
struct ToolkitCudnn {
  std::string version;          // "9.19"
  std::filesystem::path where;  // the toolkit directory
};
/// The ToolkitCudnn (above) for the options' configuration; nullopt for a
/// non-CUDA configuration. Does not throw for a root without a toolkit.
std::optional<ToolkitCudnn> toolkit_cudnn(const CondaDriverOptions& options);

/// Relocate → pack → check_binary. Returns the summary (plan lines,
/// relocations, artifacts "conda-v2" (.conda) and "conda" (.tar.bz2), one
/// check report per package). A dry run only plans and writes nothing.
Summary run_conda(const CondaDriverOptions& options);

}  // namespace libpkg::driver
