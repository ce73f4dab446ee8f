// SPDX-License-Identifier: BSD-3-Clause
// Where a frontend's exceptions become its exit status, shared by pkgtool,
// check_binary and the drivers so they all report failures alike: one
// `error: FILE: message` on stderr, then the exit code (README "Errors and
// exit codes"): 2 for bad input, usage, a missing file or a refused
// permission — everything that escapes as an exception. 1 (a check failed)
// is never an exception: commands return it.
#pragma once

#include <exception>
#include <filesystem>
#include <functional>
#include <string>

#include "libpkg/base/error.hpp"

namespace pkgtool {

// The text printed after "error: " for `e`: its message as thrown. Parse
// errors are one line (usage_error; only --help prints a usage text); a
// refusal listing its reasons (policy blockers, missing libraries) keeps
// the list on the lines after.
std::string describe_error(const libpkg::Error& e);

// "PATH: cannot create directories: Permission denied" for the
// filesystem_error "filesystem error: cannot create directories:
// Permission denied [PATH]" (with a second path: "PATH -> PATH2: ...").
std::string describe_filesystem_error(
    const std::filesystem::filesystem_error& e);

// Runs `body` and returns its exit code; an exception is printed as one
// `error: ...` line on stderr and becomes exit code 2.
int guarded(const std::function<int()>& body);

}  // namespace pkgtool
