// SPDX-License-Identifier: BSD-3-Clause
// The nightly report as one static HTML page: inline CSS and SVG only (no
// script, font or stylesheet from anywhere), readable without JavaScript.
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <string_view>

#include "libpkg/nightly/report_data.hpp"

namespace libpkg::nightly {

/// The report as one HTML page; log links are made relative to `out_dir`,
/// where the page will be.
std::string report_html(const ReportData& data,
                        const std::filesystem::path& out_dir);
/// The same page handed to \p sink in pieces of about 1 MiB, in order, so
/// a page of 10^5 cells (50 MB) is never held whole. Throws what \p sink
/// throws.
void write_report_html(const ReportData& data,
                       const std::filesystem::path& out_dir,
                       const std::function<void(std::string_view)>& sink);

}  // namespace libpkg::nightly
