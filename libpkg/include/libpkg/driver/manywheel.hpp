// SPDX-License-Identifier: BSD-3-Clause
// The manywheel driver: a built Linux wheel (or the build command that
// writes one) → the distributable wheel → check_binary.
//
// It replaces manywheel/build_common.sh + build_cuda.sh (builder-scripts.md
// §2.4, §2.5): instead of unzipping, copying DEPS_LIST, renaming with
// sha256sum, patchelf --replace-needed / --set-rpath on `find` results,
// regenerating RECORD with openssl and re-zipping, it plans one repair
// (bundle/repair.hpp) from the per-CUDA table and applies it in one
// streaming pass:
//  - CUDA builds bundle the table's libraries for their version into the
//    lib directory (<package>/lib), hash-renamed except the keep-name ones
//    (dlopened by name); libraries with a condition ("cusparselt") only
//    when that condition is enabled;
//  - OpenMP (libgomp) and whatever else the manylinux policy does not
//    allow are bundled hash-renamed, as build_common.sh did with libgomp;
//  - pypi-CUDA mode (PYTORCH_EXTRA_INSTALL_REQUIREMENTS) bundles no table
//    library: they come from the nvidia-* wheels, so every ELF file gets
//    the table's nvidia directories first in a DT_RPATH (build_cuda.sh's
//    --force-rpath, so LD_LIBRARY_PATH cannot swap them);
//  - the wheel is retagged to the most compatible manylinux tag its
//    binaries (and the bundled libraries) satisfy, RECORD is regenerated.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "libpkg/config/build.hpp"
#include "libpkg/deps/resolve.hpp"
#include "libpkg/driver/common.hpp"

namespace libpkg::driver {

/// The manywheel driver's options: the input wheel or build command, the graft
/// directory, pypi-CUDA mode and what to bundle, keep or exclude.
struct ManywheelOptions {
  CommonOptions common;
  // The input: a built wheel, or a build command run (with `sh -c`, its
  // output on stderr) in `source_dir` that writes one wheel under
  // `dist_dir` (empty: <source_dir>/dist; relative: to source_dir).
  std::filesystem::path wheel;
  std::string build_command;
  // Stops the build command (and everything it started) after this many
  // seconds; 0: no limit.
  unsigned build_timeout_seconds = 0;
  std::filesystem::path source_dir;
  std::filesystem::path dist_dir;
  // Graft directory inside the wheel; unset: <package>/lib, the package
  // being the wheel's top-level directory named after the distribution
  // (else its one top-level directory holding ELF files).
  std::optional<std::string> lib_dir;
  // pypi-CUDA mode: the table's libraries come from nvidia-* wheels.
  bool pypi_cuda = false;
  // DT_RPATH instead of DT_RUNPATH outside pypi-CUDA mode (FORCE_RPATH).
  bool force_rpath = false;
  // More libraries to bundle (path or soname; they keep their names).
  std::vector<std::string> include;
  // More soname globs that keep their names when bundled.
  std::vector<std::string> keep_names;
  // Soname or path globs of libraries provided elsewhere (not bundled).
  std::vector<std::string> exclude;
  // Table conditions enabled ("cusparselt" = USE_CUSPARSELT=1).
  std::vector<std::string> enable;
  // Target platform: "auto" (the most compatible reachable), a manylinux
  // policy name or tag, or "linux" (bundle but keep linux_<arch>).
  std::string plat = "auto";
  // Where libraries outside the wheel are looked up (LD_LIBRARY_PATH,
  // extra directories); the driver never reads the environment itself.
  deps::SearchConfig search;
};

/// The interpreter a wheel's file name is for ("cp311-cp311" → 3.11,
/// "cp313-cp313t" → 3.13t); nullopt when it names no single CPython
/// (abi3, py3, several tags) or the name does not parse.
std::optional<config::PythonVersion> wheel_python(
    const std::filesystem::path& wheel);

/// Runs the job. Throws libpkg::Error for bad input: a missing wheel or
/// source directory (Errc::not_found), a wheel for another python than the
/// configuration's (Errc::usage naming both), a CUDA version without a
/// bundle list or a table library that is not on disk (Errc::not_found,
/// pointing at --cuda-table), a build command that fails or writes no
/// wheel, an --enable condition the table does not have (Errc::usage), and
/// whatever the analysis and repair refuse. A dry run returns the plan and
/// writes nothing (a build command is not run).
Summary run_manywheel(const ManywheelOptions& options);

/// Applies the old build scripts' environment switches (builder-scripts.md
/// §2.2) to `options`, reading them through `getenv` (the library never
/// reads the process environment itself): PYTORCH_EXTRA_INSTALL_REQUIREMENTS
/// non-empty → pypi_cuda; FORCE_RPATH non-empty → force_rpath;
/// USE_CUSPARSELT=1 on a CUDA configuration → enable "cusparselt" (once).
/// Call it after options.common.config is set. Throws nothing.
void apply_environment_switches(ManywheelOptions& options,
                                const config::Getenv& getenv);

}  // namespace libpkg::driver
