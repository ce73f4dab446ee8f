// SPDX-License-Identifier: BSD-3-Clause
// The nightly report as one static HTML page: inline CSS and SVG only (no
// script, font or stylesheet from anywhere), readable without JavaScript.
#pragma once

#include <filesystem>
#include <string>

#include "libpkg/nightly/report_data.hpp"

namespace libpkg::nightly {

/// The report as one HTML page; log links are made relative to `out_dir`,
/// where the page will be.
std::string report_html(const ReportData& data,
                        const std::filesystem::path& out_dir);

}  // namespace libpkg::nightly
