// SPDX-License-Identifier: BSD-3-Clause
// The manywheel driver's build step (private to libpkg): run the build
// command that writes a wheel and find the wheel it wrote.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "libpkg/driver/manywheel.hpp"

namespace libpkg::driver::detail {

// Where the build command writes its wheel: options.dist_dir (relative to
// the source directory), else <source_dir>/dist.
std::filesystem::path dist_dir(const ManywheelOptions& options);

// Runs `sh -c options.build_command` in options.source_dir with its output
// on our stderr (stdout is the driver's summary), then returns the one
// wheel it created or rewrote under dist_dir(options). Errc::not_found for
// a missing source directory or no new wheel, Errc::io for a failing
// command, Errc::usage for several new wheels.
// `env_set` ("NAME=value") is added to the command's environment (the
// table's TORCH_CUDA_ARCH_LIST, TORCH_NVCC_FLAGS, …).
std::filesystem::path build_wheel(const ManywheelOptions& options,
                                  const std::vector<std::string>& env_set);

// The job's input wheel: options.wheel, or (not on a dry run, which
// returns nullopt) the one the build command writes. Exactly one of the two
// must be given (Errc::usage naming `driver`); a missing wheel is
// Errc::not_found. Adds "input: ..." / "build: ..." lines to `plan`.
// Shared by the manywheel and wheel_macos drivers.
std::optional<std::filesystem::path> input_wheel(
    const ManywheelOptions& options, const std::string& driver, bool dry_run,
    std::vector<std::string>& plan, const std::vector<std::string>& env_set);

}  // namespace libpkg::driver::detail
