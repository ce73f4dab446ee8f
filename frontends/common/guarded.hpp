// SPDX-License-Identifier: BSD-3-Clause
// Where a frontend's exceptions become its exit status, shared by pkgtool,
// check_binary and the drivers so they all report failures alike: the
// message on stderr, then libpkg::Error's own exit code (2 for bad input or
// usage, README "Exit codes") or 2 for anything else.
#pragma once

#include <cstdio>
#include <exception>
#include <functional>

#include "libpkg/base/error.hpp"

namespace pkgtool {

inline int guarded(const std::function<int()>& body) {
  try {
    return body();
  } catch (const libpkg::Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return e.exit_code();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
  }
}

}  // namespace pkgtool
