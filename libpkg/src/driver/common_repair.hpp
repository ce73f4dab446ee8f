// SPDX-License-Identifier: BSD-3-Clause
// The tail both wheel drivers share (private to driver/; implemented in
// common.cpp): write the planned repair next to, never over, the input and
// check what was written.
#pragma once

#include <cstddef>
#include <filesystem>
#include <functional>
#include <string>

#include "libpkg/bundle/repair.hpp"
#include "libpkg/driver/common.hpp"

namespace libpkg::driver::detail {

// Writes a repaired wheel: refuses an output (out_dir/output_name) that is
// the input itself (Errc::usage), logs what it writes, calls `write` with
// the ApplyOptions of `options` (level, threads, pool, chunk cache,
// timestamp, progress), adds the "wheel" artifact and runs check_artifacts
// with `checks` (options plus what the driver allows) and `expect`.
void write_and_check_wheel(
    Summary& summary, const CommonOptions& options,
    const std::filesystem::path& input, const std::string& output_name,
    std::size_t grafts,
    const std::function<bundle::RepairResult(const bundle::ApplyOptions&)>&
        write,
    const CommonOptions& checks, const check::Expectation& expect);

}  // namespace libpkg::driver::detail
