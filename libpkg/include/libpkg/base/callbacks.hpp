// SPDX-License-Identifier: BSD-3-Clause
// The callback types the library takes from its callers.
//
// The library never draws or prints on its own: a frontend passes a
// ProgressFn (bytes done of a known total, called from worker threads) and a
// LogFn (one human-readable line, no trailing newline) and decides what to do
// with them. Streams of bytes leave through a ByteSinkFn, and the
// environment is read only through a GetenvFn the caller injects. One
// spelling here keeps every header the same.
#pragma once

#include <functional>
#include <optional>
#include <span>
#include <string>

#include "libpkg/base/integers.hpp"

namespace libpkg {

/// Reports `done` of `total` bytes; may be called concurrently from workers.
using ProgressFn = std::function<void(u64 done, u64 total)>;

/// Receives one progress or status line (no trailing newline).
using LogFn = std::function<void(const std::string&)>;

/// Receives consecutive pieces of a byte stream, in order.
using ByteSinkFn = std::function<void(std::span<const u8>)>;

/// Looks up an environment variable; nullopt when unset.
using GetenvFn =
    std::function<std::optional<std::string>(const std::string& name)>;

}  // namespace libpkg
