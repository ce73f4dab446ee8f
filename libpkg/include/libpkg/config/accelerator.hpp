// SPDX-License-Identifier: BSD-3-Clause
// The accelerator dimension of a build configuration: cpu, a CUDA version,
// a ROCm version or xpu, parsed once from every spelling the old scripts
// used (DESIRED_CUDA "cu92", "cu118", "cu124", "12.4", "cuda12.4",
// "rocm6.1", "cpu-cxx11-abi") instead of slicing strings by length in six
// places (builder-scripts.md §7.9).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "libpkg/abi/census.hpp"

namespace libpkg::config {

/// The accelerator a build targets.
enum class AcceleratorKind { cpu, cuda, rocm, xpu };
/// "cpu", "cuda", "rocm" or "xpu".
const char* accelerator_kind_name(AcceleratorKind kind);

/// An accelerator and, for CUDA and ROCm, its version.
struct Accelerator {
  AcceleratorKind kind = AcceleratorKind::cpu;
  // Version of CUDA / ROCm (major.minor[.patch]); 0/0/nullopt for cpu, xpu.
  int major = 0;
  int minor = 0;
  std::optional<int> patch;

  /// "12.4", "6.1.3" ("" for cpu and xpu).
  std::string version() const;
  /// The tag of wheel local versions and download folders: "cpu", "cu124",
  /// "rocm6.1", "xpu".
  std::string tag() const;
  bool operator==(const Accelerator&) const = default;
};

/// Accepts: cpu (and cpu-cxx11-abi, cpu-aarch64, cpu-s390x: the suffix names
/// an image, not an accelerator), cuXY / cuXYZ (the last digit is the minor
/// version: cu92 = 9.2, cu100 = 10.0, cu118 = 11.8, cu124 = 12.4), X.Y,
/// cudaX.Y, rocmX.Y[.Z], xpu. Throws Errc::usage naming the value and the
/// accepted forms.
Accelerator parse_accelerator(std::string_view text);

/// The C++ ABI the old scripts derived from DESIRED_DEVTOOLSET: a value
/// containing "cxx11-abi" means the new ABI, anything else the old one; ROCm
/// builds always use the new ABI.
abi::CxxAbi abi_from_devtoolset(std::string_view devtoolset,
                                const std::optional<Accelerator>& accel);

/// "cxx11" / "1" / "new" → cxx11; "pre-cxx11" / "0" / "old" → pre_cxx11;
/// Errc::usage otherwise.
abi::CxxAbi parse_cxx_abi(std::string_view text);

}  // namespace libpkg::config
