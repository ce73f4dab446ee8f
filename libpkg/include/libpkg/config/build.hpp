// SPDX-License-Identifier: BSD-3-Clause
// The typed build configuration: what one binary-build job produces.
//
// The old scripts spread this over a BUILD_ENVIRONMENT string split on
// spaces, a dozen environment variables re-parsed by string slicing in
// several places, and defaults scattered across files (builder-scripts.md
// §2.2, §6.3, §8.58-60). Here it is parsed once, validated once, and every
// consumer (drivers, names, the matrix) reads the same struct.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "libpkg/abi/census.hpp"
#include "libpkg/base/callbacks.hpp"
#include "libpkg/config/accelerator.hpp"
#include "libpkg/cppdist/naming.hpp"

namespace libpkg::config {

/// `wheel_macos` is what the old scripts called PACKAGE_TYPE=wheel.
enum class PackageType { manywheel, conda, libtorch, wheel_macos };

/// The PACKAGE_TYPE spelling: "manywheel", "conda", "libtorch", "wheel".
const char* package_type_name(PackageType type);
/// Accepts the names above and "wheel_macos"/"wheel-macos"; Errc::usage else.
PackageType parse_package_type(std::string_view text);

/// The ABI as options and the matrix spell it: "cxx11", "pre-cxx11", "none".
const char* cxx_abi_option(abi::CxxAbi abi);

/// The Python a build is for, with its ABI flags (free-threaded, legacy m/mu).
struct PythonVersion {
  int major = 3;
  int minor = 0;
  bool free_threaded = false;  // 3.13t: its own ABI (cp313t)
  std::string abi_suffix;      // legacy pymalloc/wide-unicode: "m", "mu"

  /// Accepts "3.9" … "3.13", "3.13t", legacy "2.7mu", "2.7m", "3.7m", and
  /// the manylinux /opt/python names "cp311-cp311", "cp313-cp313t",
  /// "cp37-cp37m". Throws Errc::usage naming the value and these forms.
  static PythonVersion parse(std::string_view text);

  /// The wheel python tag, "cp37", "cp313".
  std::string python_tag() const;  // "cp37", "cp313"
  /// The wheel ABI tag, "cp37m", "cp27mu", "cp313t", "cp311".
  std::string abi_tag() const;  // "cp37m", "cp27mu", "cp313t", "cp311"
  /// The interpreter's dotted version as check_binary's py_dot: "3.7",
  /// "3.13t" (free-threaded builds keep the t: python3.13t is its own
  /// interpreter and site-packages).
  std::string dotted() const;
  /// The DESIRED_PYTHON spelling: "3.7m", "2.7mu", "3.13t", "3.11".
  std::string str() const;
  bool operator==(const PythonVersion&) const = default;
};

/// One build configuration of the binary builds: package type, python,
/// accelerator, ABI, variant, OS/arch and the resolved version.
struct BuildConfig {
  PackageType type = PackageType::manywheel;
  // The interpreter the artifact is for; none for libtorch.
  std::optional<PythonVersion> python;
  // libtorch only: the interpreter that runs the build (the old
  // BUILD_ENVIRONMENT carried one, and libtorch/build.sh forced 3.9); it is
  // not part of any artifact name.
  std::optional<PythonVersion> build_python;
  Accelerator accelerator;
  // pre_cxx11 / cxx11 on Linux; none on macOS (libc++ has no dual ABI).
  abi::CxxAbi cxx_abi = abi::CxxAbi::pre_cxx11;
  // Linux libtorch only.
  std::optional<cppdist::LibtorchVariant> variant;
  std::string os = "linux";  // "linux" or "macos"
  std::string arch = "x86_64";
  bool debug = false;  // BUILD_ENVIRONMENT "debug" / LIBTORCH_CONFIG=debug
  std::string package_name = "torch";  // TORCH_PACKAGE_NAME
  // PYTORCH_BUILD_VERSION as given (may carry a local part like +cu124).
  std::string base_version = "1.0.0";
  // The resolved package version (what the artifacts are named after):
  // OVERRIDE_PACKAGE_VERSION exactly, else base_version[.postN if N > 1].
  std::string version = "1.0.0";
  // PYTORCH_BUILD_NUMBER; 0 when the version was overridden.
  int build_number = 1;
  bool version_overridden = false;
  // The cuDNN version for conda's build string ("9.1"); CUDNN_VERSION.
  std::optional<std::string> cudnn_version;

  /// The BUILD_ENVIRONMENT string that parses back to this configuration's
  /// type, python, accelerator, ABI, variant, OS, arch and debug flag.
  std::string build_environment() const;
  bool operator==(const BuildConfig&) const = default;
};

/// Refuses inconsistent combinations with Errc::usage (one line naming the
/// values): a python on libtorch or none on a wheel/conda build; a libtorch
/// variant on anything but Linux libtorch; non-CPU accelerators on macOS;
/// ROCm or XPU on conda (conda/build_pytorch.sh only knew cpu and CUDA:
/// `tr -d cuda.` of rocm6.1 leaves 5 characters, its error branch); a
/// pre-cxx11 ABI with ROCm (always cxx11); a local version (+cu124) on
/// conda; a legacy "m"/"mu" python on conda (conda used plain M.m); a
/// free-threaded python before 3.13.
void validate(const BuildConfig& config);

/// BUILD_ENVIRONMENT: "<type> [<python>] <accelerator> [<devtoolset>]
/// [debug|release]" as binary_populate_env.sh split it ("manywheel 3.7m
/// cu100 devtoolset7", "conda 3.11 cpu", "libtorch 3.11 cu124 cxx11-abi",
/// "wheel 3.7 cpu"), plus pythonless libtorch ("libtorch cpu") and optional
/// extra tokens: a libtorch variant (shared-with-deps …), an OS (linux,
/// macos) and an arch (x86_64, aarch64, arm64, s390x). Tokens after the
/// type are recognised by form; the first one that is a python version is
/// the python (so "conda 3.11 12.4" works). A devtoolset is any token
/// starting with "devtoolset"/"gcc" or containing "cxx11-abi", or
/// "pre-cxx11". Libtorch's python becomes build_python. Linux libtorch
/// without a variant gets shared-with-deps. Validated.
BuildConfig parse_build_environment(std::string_view text);

/// Looks up an environment variable; nullopt when unset (base/callbacks.hpp).
using Getenv = GetenvFn;

/// From the old scripts' environment (`getenv` is injected so tests and
/// embedders control it; an empty value counts as unset). A
/// BUILD_ENVIRONMENT string, when set, is the job: from_build_environment.
/// Otherwise:
///   PACKAGE_TYPE (else BUILD_PYTHONLESS set → libtorch),
///   DESIRED_PYTHON, DESIRED_CUDA, DESIRED_DEVTOOLSET, each falling back to
///     MATRIX_<name> (DESIRED_PYTHON also to MATRIX_PYTHON_VERSION, the
///     name check_binary.sh used),
///   GPU_ARCH_TYPE (cuda, rocm, cpu, cpu-cxx11-abi, cpu-s390x, cpu-aarch64,
///     xpu) + GPU_ARCH_VERSION: the accelerator when DESIRED_CUDA is unset,
///     and checked against it when both are set,
///   LIBTORCH_VARIANT, LIBTORCH_CONFIG (debug|release), TORCH_PACKAGE_NAME,
///   PYTORCH_BUILD_VERSION (default 1.0.0), PYTORCH_BUILD_NUMBER (default
///   1), OVERRIDE_PACKAGE_VERSION (exact; build number 0), CUDNN_VERSION.
/// Errors name the variable. Validated.
BuildConfig from_environment(const Getenv& getenv);

/// The BUILD_ENVIRONMENT string `text` (given as `origin`: "--build-env",
/// "BUILD_ENVIRONMENT") with the old scripts' environment on top, as the CI
/// jobs had both: the variables no string carries are applied
/// (PYTORCH_BUILD_VERSION, PYTORCH_BUILD_NUMBER, OVERRIDE_PACKAGE_VERSION,
/// TORCH_PACKAGE_NAME, CUDNN_VERSION; LIBTORCH_VARIANT and LIBTORCH_CONFIG
/// unless the string names a variant or debug|release), and the ones that
/// restate the string (PACKAGE_TYPE, BUILD_PYTHONLESS, DESIRED_PYTHON,
/// DESIRED_CUDA, DESIRED_DEVTOOLSET, GPU_ARCH_TYPE/GPU_ARCH_VERSION, their
/// MATRIX_ forms) must agree with it. Throws Errc::usage for a bad string
/// or value, and for a contradiction, naming the variable, its value and
/// what the string says — never one silently winning over the other.
/// Validated.
BuildConfig from_build_environment(
    std::string_view text, const Getenv& getenv,
    std::string_view origin = "BUILD_ENVIRONMENT");

/// Command-line overrides; each set field replaces the configuration's.
struct ConfigOverrides {
  std::optional<std::string> package_type, python, accelerator, abi, variant,
      os, arch, package_name, base_version, override_version, cudnn_version;
  std::optional<int> build_number;
  std::optional<bool> debug;
};
/// Applies the overrides, re-resolves the version and re-validates.
BuildConfig apply_overrides(BuildConfig config, const ConfigOverrides& o);

}  // namespace libpkg::config
