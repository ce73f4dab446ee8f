// SPDX-License-Identifier: BSD-3-Clause
// check_binary: every check the old check_binary.sh / smoke_test.sh /
// run_tests.sh made (and the ones they never made) over any artifact this
// project produces — a wheel, a conda package, a libtorch-style zip — or
// an installed tree (site-packages, a package directory inside it, a conda
// prefix or extracted conda package, an unpacked libtorch).
//
// Each check reports pass, fail or skip with a one-line reason and, when it
// fails, one problem per offending file. Mach-O packages (macOS wheels,
// libtorch macOS zips) are resolved with dyld's rules; the checks that only
// apply to ELF or need to load the code are skipped as "not applicable". The
// checks (ids are stable, used in --json and --skip):
//
//   integrity        RECORD (wheels, site-packages), paths.json (conda),
//                    the libtorch layout with build-version / build-hash
//   cxx-abi          the std::string/std::list ABI of the census library
//                    (libtorch_cpu.so, else libtorch.so) vs the expected ABI
//                    and TorchConfig.cmake's _GLIBCXX_USE_CXX11_ABI;
//                    forbidden symbols
//   symbol-versions  highest GLIBC_/GLIBCXX_/CXXABI_/GCC_ versions vs the
//                    platform tag (or --platform)
//   dependencies     every DT_NEEDED resolves inside the package or to a
//                    library the platform policy allows; grafted names are
//                    consistent; every Mach-O install name resolves inside
//                    the package or to /usr/lib, /System
//   rpath            RPATH/RUNPATH entries stay inside the package (no
//                    leaked build directories, no empty entries)
//   runtimes         at most one copy of each runtime (OpenMP, libstdc++,
//                    libgcc_s, the CUDA runtime) is loaded
//   accelerator      CPU builds carry and need no CUDA/ROCm library; CUDA
//                    builds carry (or need) the runtime of the expected
//                    version and the expected libraries
//   deployment-target  Mach-O: every file's architectures are the macosx_*
//                    tag's, every slice's minos is at most the tag's version
//   code-signature   Mach-O: every code signature verifies, no unsigned
//                    arm64 slice
//   import           the Python package imports in an isolated venv
//   link             a C++ client compiles, links and runs against an
//                    unpacked libtorch-style tree with the declared ABI
//   link-wrong-abi   ... and fails to link with the opposite ABI
//   gpu              a tiny job through the packaged CUDA runtime (only
//                    where a GPU answers; skipped with the driver's reason)
#pragma once

#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "libpkg/abi/census.hpp"
#include "libpkg/base/callbacks.hpp"
#include "libpkg/base/thread_pool_fwd.hpp"
#include "libpkg/config/accelerator.hpp"
#include "libpkg/deps/policy.hpp"
#include "libpkg/deps/resolve.hpp"

namespace libpkg::config {
class CudaTables;
}

namespace libpkg::check {

/// What kind of artifact check::run found at the path it was given.
enum class ArtifactKind {
  wheel,
  conda,           // .conda or .tar.bz2
  libtorch_zip,    // a zip whose members are under libtorch/
  site_packages,   // a directory holding *.dist-info directories
  python_package,  // a package directory inside site-packages
  conda_tree,      // a conda prefix or an extracted conda package
  libtorch_tree,   // an unpacked libtorch (lib/, include/, build-version)
};
/// The kind's name as the report shows it ("wheel", "libtorch_zip", ...).
const char* artifact_kind_name(ArtifactKind kind);

/// What the package is expected to be. Unset fields are not checked against
/// (the checks then only test the package's own consistency).
struct Expectation {
  // Package type named by the caller (PACKAGE_TYPE: manywheel, conda,
  // libtorch, wheel_macos); checked against the artifact kind.
  std::optional<std::string> package_type;
  std::optional<config::Accelerator> accelerator;  // DESIRED_CUDA
  std::optional<abi::CxxAbi> cxx_abi;              // cxx11 / pre_cxx11 only
  // Target platform for the symbol-version ceiling, overriding the wheel's
  // tag: a policy name or tag ("manylinux2014", "manylinux_2_28_x86_64").
  std::optional<std::string> platform;
  // Libraries (file-name globs, hash-insensitive: "libcudnn*" matches
  // "libcudnn-0123abcd.so.9") the accelerator build must carry or need.
  std::vector<std::string> libraries;
  // CUDA builds must also carry or need every unconditional library of the
  // per-CUDA table (data/cuda, config::CudaTables) for their version. A
  // version without a known bundle list is bad input (Errc::not_found).
  bool table_libraries = false;
};

/// The expectation from the old scripts' environment: DESIRED_CUDA,
/// DESIRED_DEVTOOLSET (contains "cxx11-abi" → cxx11, otherwise pre-cxx11;
/// a ROCm DESIRED_CUDA → cxx11), PACKAGE_TYPE, each falling back to its
/// MATRIX_ variant (MATRIX_DESIRED_CUDA, MATRIX_DESIRED_DEVTOOLSET,
/// MATRIX_PACKAGE_TYPE). `getenv` is injected so the library never reads
/// the environment itself. Throws Errc::usage naming a variable whose value
/// doesn't parse.
Expectation expectation_from_env(const GetenvFn& getenv);

/// The status of one check.
enum class Status { pass, fail, skip };
/// "pass", "fail" or "skip".
const char* status_name(Status status);

/// One thing a failed check found wrong, and in which file.
struct Problem {
  std::string file;  // member or path concerned ("" for the whole package)
  std::string message;
};

/// The outcome of one check: its id, status, summary, problems and notes.
struct CheckResult {
  std::string id;  // "integrity", "cxx-abi", ...
  Status status = Status::skip;
  std::string summary;  // one line: what was checked, or why it failed /
                        // was skipped
  std::vector<Problem> problems;   // why it failed, one line each
  std::vector<std::string> notes;  // informational lines (passes too)
};

/// What run checks the artifact against, which checks it runs, and the tools
/// and search paths they use.
struct CheckOptions {
  Expectation expect;
  // Per-CUDA tables for Expectation::table_libraries (nullptr =
  // config::CudaTables::builtin()).
  const config::CudaTables* cuda_tables = nullptr;
  // Policies (nullptr = deps::PolicySet::builtin()).
  const deps::PolicySet* policies = nullptr;
  // Search configuration for libraries outside the package. The caller's
  // LD_LIBRARY_PATH is deliberately not used by default: it hides the
  // missing and leaked dependencies this is meant to find.
  deps::SearchConfig search;
  // Additional external libraries to accept (soname or path globs), e.g.
  // the CUDA libraries of a without-deps libtorch.
  std::vector<std::string> allow_external;
  // Census: libraries (file-name globs, first that matches wins) and
  // config files to read _GLIBCXX_USE_CXX11_ABI from.
  std::vector<std::string> abi_libraries = {"libtorch_cpu.so*", "libtorch.so*"};
  std::vector<std::string> abi_configs = {"TorchConfig.cmake"};
  abi::CensusOptions census;
  std::size_t min_cxx11_symbols = 100;  // check_binary_symbols.py
  std::size_t min_pre_cxx11_symbols = 1000;
  // Checks to run (empty = all) and to leave out (reported as skipped).
  std::vector<std::string> only;
  std::vector<std::string> skip;
  // Checks that must not be skipped: a skip of one of these (a missing
  // interpreter or compiler, no GPU, --skip, --no-runtime) is turned into a
  // failure, so a skip can't hide a missing proof (--require).
  std::vector<std::string> require;
  bool runtime = true;  // import / link / gpu
  // Runtime tools.
  std::string python = "python3";           // for the venv of the import check
  std::vector<std::string> import_modules;  // empty = the package's own
  std::string cxx = "c++";                  // link check
  std::string cc = "cc";                    // gpu probe
  std::optional<std::filesystem::path> client;  // C++ client source
  std::vector<std::string> link_libraries;      // -l names; empty = auto
  unsigned timeout_seconds = 600;               // each runtime step
  unsigned threads = 0;                         // 0: one per core
  ThreadPool* pool = nullptr;            // the job's pool; null: own `threads`
  std::filesystem::path scratch_parent;  // empty = the temp directory
  LogFn log;                             // progress lines, optional
};

/// The results of every check on one artifact.
struct Report {
  std::filesystem::path artifact;
  ArtifactKind kind = ArtifactKind::wheel;
  std::vector<CheckResult> checks;

  /// The number of checks with \p status.
  std::size_t count(Status status) const;
  /// True when no check failed (skips do not fail).
  bool passed() const { return count(Status::fail) == 0; }
  /// The result of the check \p id, or nullptr when the report has none.
  const CheckResult* find(std::string_view id) const;
  /// The human report: one PASS/FAIL/SKIP line per check and its problems (and
  /// notes when \p verbose).
  std::string to_text(bool verbose = false) const;
  /// Schema "libpkg-check/1" (docs/check.md).
  std::string to_json(int indent = 2) const;
};

/// All check ids, in report order.
const std::vector<std::string>& check_ids();

/// Runs the checks on `artifact`. Throws libpkg::Error for bad input: a path
/// that is neither a known archive nor a recognisable tree, an archive that
/// doesn't read, hostile member names, an unknown --only/--skip id or
/// platform, a package type that contradicts the artifact.
Report run(const std::filesystem::path& artifact,
           const CheckOptions& options = {});

}  // namespace libpkg::check
