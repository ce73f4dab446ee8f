// SPDX-License-Identifier: BSD-3-Clause
// Wall-clock times as the nightly records them: ISO-8601 UTC with
// milliseconds ("2026-11-24T07:45:12.123Z").
#pragma once

#include <chrono>
#include <string>

namespace libpkg::nightly {

std::string iso_utc(std::chrono::system_clock::time_point t);

}  // namespace libpkg::nightly
