// SPDX-License-Identifier: BSD-3-Clause
// The one writing step of both repairs (private to bundle/): the member
// edits applied through wheel::rewrite with the caller's ApplyOptions.
#pragma once

#include <filesystem>
#include <span>

#include "libpkg/archive/zip_reader.hpp"
#include "libpkg/bundle/repair.hpp"
#include "libpkg/wheel/wheel.hpp"

namespace libpkg::bundle {

// Writes `out_dir`/`name` (creating `out_dir`); `grafted_bytes` (what the
// caller added) is reported as is. `digests`: of the members the caller
// extracted (wheel::RewriteOptions::digests), so they are not inflated again
// to check RECORD.
RepairResult write_repaired_wheel(
    const archive::ZipReader& zip, const std::filesystem::path& out_dir,
    const std::string& name, const wheel::WheelEdits& edits,
    const ApplyOptions& options, u64 grafted_bytes,
    std::span<const archive::MemberDigest> digests = {});

// Adds the SBOM document `doc` as <dist_info>/sboms/pkgtool.cdx.json,
// replacing the one an earlier repair wrote rather than adding a second.
void add_sbom(wheel::WheelEdits& edits, const archive::ZipReader& zip,
              const std::string& dist_info, std::string doc);

}  // namespace libpkg::bundle
