// pkgtool subcommands. Each is a thin function over one library call: parse
// its arguments, call libpkg, print. Errors propagate as libpkg::Error and
// are printed by main() as `error: FILE: message` with exit status 2.
#pragma once

#include <string>
#include <vector>

namespace pkgtool {

// `pkgtool inspect FILE... [--json]`
int run_inspect(const std::vector<std::string>& args);
// `pkgtool symbols FILE... [--demangle] [--json]` (nm -D format)
int run_symbols(const std::vector<std::string>& args);
// `pkgtool patchelf ...` and the `patchelf` entry point (patchelf's syntax).
int run_patchelf(const std::vector<std::string>& args);

}  // namespace pkgtool
