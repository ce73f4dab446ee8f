// SPDX-License-Identifier: BSD-3-Clause
// Private helpers of the cuda layer shared by detection and switching: the
// `cuda-X.Y` naming and the "missing version" error.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "libpkg/config/accelerator.hpp"

namespace libpkg::cuda::detail {

// (major, minor) of a "cuda-X.Y" directory name; nullopt for anything else.
std::optional<std::pair<int, int>> parse_dir_name(std::string_view name);

// "cuda-12.4" for a CUDA accelerator; Errc::usage for cpu, rocm and xpu.
std::string toolkit_dir_name(const config::Accelerator& version);

// The X.Y of every `cuda-X.Y` directory under root, sorted by version;
// empty when root cannot be read (this only feeds error messages).
std::vector<std::string> installed_versions(const std::filesystem::path& root);

// Errc::not_found: "ROOT/cuda-X.Y: no CUDA X.Y toolkit (installed: ...)".
[[noreturn]] void throw_missing(const std::filesystem::path& root,
                                const config::Accelerator& version);

}  // namespace libpkg::cuda::detail
