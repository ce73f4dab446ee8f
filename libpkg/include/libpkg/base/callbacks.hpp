// SPDX-License-Identifier: BSD-3-Clause
// The two callback types long operations take from their callers.
//
// The library never draws or prints on its own: a frontend passes a
// ProgressFn (bytes done of a known total, called from worker threads) and a
// LogFn (one human-readable line, no trailing newline) and decides what to do
// with them. One spelling here keeps every options struct the same.
#pragma once

#include <functional>
#include <string>

#include "libpkg/base/integers.hpp"

namespace libpkg {

/// Reports `done` of `total` bytes; may be called concurrently from workers.
using ProgressFn = std::function<void(u64 done, u64 total)>;

/// Receives one progress or status line (no trailing newline).
using LogFn = std::function<void(const std::string&)>;

}  // namespace libpkg
