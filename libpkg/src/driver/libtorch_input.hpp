// SPDX-License-Identifier: BSD-3-Clause
// The libtorch driver's input side (private): which tree to package (an
// install prefix, or the package directory of an extracted wheel) and the
// build hash.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "libpkg/driver/libtorch.hpp"

namespace libpkg::driver {

struct LibtorchInput {
  std::filesystem::path tree;     // holds lib/ include/ [share/ bin/]
  std::vector<std::string> skip;  // top-level entries left out
  std::string description;        // one plan line
};

// Validates options.tree / options.wheel (Errc::usage naming the path and
// what is missing); a wheel is extracted under `scratch`.
LibtorchInput resolve_libtorch_input(const LibtorchDriverOptions& options,
                                     const std::filesystem::path& scratch);

// options.build_hash, else `git -C source rev-parse HEAD`; Errc::usage when
// neither gives one line of text.
std::string resolve_build_hash(const LibtorchDriverOptions& options);

}  // namespace libpkg::driver
