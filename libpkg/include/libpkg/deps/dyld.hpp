// SPDX-License-Identifier: BSD-3-Clause
// dyld's search rules applied without running anything: the dependency
// closure of one Mach-O slice (`pkgtool ldd` on Mach-O files).
//
// Per dependent dylib (dyld(1)): first its leaf name in each
// DYLD_LIBRARY_PATH directory; then the install name, where
// `@executable_path` is the main executable's directory, `@loader_path` the
// loading image's directory, and `@rpath` is tried with every entry of the
// run-path stack: the loading image's LC_RPATHs, then those of the image
// that loaded it, up to the main executable (each expanded with its own
// @loader_path). Install names under /usr/lib and /System are taken as
// present (the system's, in the dyld shared cache) and not opened. A
// candidate is accepted only when it is a Mach-O file with the slice's
// arch; a dependency found only without it is an error ("wrong_arch").
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace libpkg::deps {

/// Where dyld_trees looks for libraries beyond the install names themselves.
struct DyldConfig {
  // The directory @executable_path stands for; unset: the file itself when
  // it is MH_EXECUTE, else @executable_path names cannot resolve.
  std::optional<std::filesystem::path> executable_path;
  std::vector<std::filesystem::path> library_path;  // DYLD_LIBRARY_PATH
};

/// How a Mach-O dependency was resolved: found, a system library (the shared
/// cache), already loaded, not found, or found only for other architectures.
enum class DyldStatus { found, system, already_loaded, not_found, wrong_arch };
/// "found", "system", ... for `s`.
const char* dyld_status_name(DyldStatus s);

/// One dependency in a DyldTree: the load command that asked for it and where
/// (whether) it was found.
struct DyldLibrary {
  std::string install_name;
  std::string kind;       // "load", "weak", "reexport", "upward", "lazy"
  std::string needed_by;  // the loading image's path
  int depth = 1;          // 1: needed by the file itself
  DyldStatus status = DyldStatus::not_found;
  std::optional<std::filesystem::path> path;
  std::string via;  // "DYLD_LIBRARY_PATH", "@rpath", "@loader_path", ...
  std::vector<std::string> tried;  // candidates rejected, with the reason
  // An error: not found (unless weak) or found only for other archs.
  /// True when the dependency makes the tree fail: not found (unless weak) or
  /// found only for other archs.
  bool error() const {
    return status == DyldStatus::wrong_arch ||
           (status == DyldStatus::not_found && kind != "weak");
  }
};

/// The resolved dependencies of one slice of a Mach-O file.
struct DyldTree {
  std::filesystem::path file;
  std::string arch;
  std::optional<std::filesystem::path> executable_path;
  std::vector<DyldLibrary> libraries;  // depth-first, in load order
};

// One tree per 64-bit little-endian slice of `file`.
/// True for an install name of the Python interpreter's own library:
/// `libpython3.11.dylib` (any directory, any version or ABI suffix) or a
/// Python framework's binary (`.../Python.framework/Versions/3.11/Python`,
/// Xcode's `Python3.framework/.../Python3`). An extension module must not
/// link it: the interpreter that imports it provides those symbols (link
/// with -undefined dynamic_lookup, as setuptools does), and a linked copy
/// loads that one interpreter's library into any other Python, or fails
/// where it is absent. Never throws.
bool is_python_library(std::string_view install_name);

/// One tree per 64-bit little-endian slice of `file`, as dyld would resolve it;
/// throws Error(Errc::unsupported) naming `file` when it has no such slice, and
/// as MachOFile::open does for unreadable or malformed input.
std::vector<DyldTree> dyld_trees(const std::filesystem::path& file,
                                 const DyldConfig& config);

}  // namespace libpkg::deps
