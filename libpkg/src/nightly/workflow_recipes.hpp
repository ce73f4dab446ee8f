// SPDX-License-Identifier: BSD-3-Clause
// What each package type's CI job runs (docs/nightly.md, "pkgtool
// workflow", says why): its runner and build container, the build that
// makes the driver's input, and the driver call. The old jobs
// (builder-scripts.md §2-§4, §6.3) each ran one build script in its image;
// here the build and the packaging are separate steps, the packaging always
// one driver call that writes the package to dist/ and its libpkg-driver/1
// summary to summary/<build name>.json.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "libpkg/config/build.hpp"

namespace libpkg::nightly {

/// The groups of configurations that share one CI job definition.
enum class Recipe {
  manywheel,       // Linux wheels: the driver runs setup.py itself
  conda,           // Linux conda: pip installs into a prefix, then conda
  libtorch,        // Linux libtorch: CMake install tree, then libtorch
  wheel_macos,     // macOS wheels: built on macOS, packaged on Linux
  libtorch_macos,  // macOS libtorch: built on macOS, packed on Linux
};

/// The recipe of a configuration.
Recipe recipe_of(const config::BuildConfig& c);
/// The job id of the recipe's packaging job ("manywheel", "wheel-macos").
std::string job_id(Recipe r);
/// True when the recipe builds on a macOS runner first (job_id + "-build").
bool built_on_macos(Recipe r);

/// The recipe-specific fields of a configuration's matrix entry: runs_on and
/// image of its packaging job (build_runs_on of the macOS build job), the
/// python directory, ABI and linkage switches.
void add_recipe_fields(const config::BuildConfig& c,
                       nlohmann::ordered_json& entry);

/// The steps of the recipe's build before the driver (after the checkout),
/// in the packaging job (Linux recipes) or in the macOS build job.
nlohmann::ordered_json build_steps(Recipe r);

/// The packaging step: one driver call (its run script).
std::string package_script(Recipe r);

/// The image of the Linux jobs that only run libpkg's tools (the macOS
/// packaging jobs, the final job).
const char* tools_image();

}  // namespace libpkg::nightly
