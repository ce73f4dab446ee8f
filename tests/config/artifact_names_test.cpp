// SPDX-License-Identifier: BSD-3-Clause
// Every artifact name of every configuration against the old scripts'
// templates (builder-scripts.md): package type x OS x arch x accelerator x
// ABI x libtorch variant, then every entry of the built-in matrix. The
// version is what binary_populate_env.sh exported (§6.3):
// PYTORCH_BUILD_VERSION = base, plus "+$DESIRED_CUDA" except on Darwin or
// for conda, and OVERRIDE_PACKAGE_VERSION = PYTORCH_BUILD_VERSION (so build
// number 0). The expected names are spelled here from the scripts' own
// templates, not from the library's naming code.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "libpkg/base/error.hpp"
#include "libpkg/config/matrix.hpp"
#include "libpkg/config/names.hpp"
#include "libpkg/config/version.hpp"

namespace {

using libpkg::Errc;
using libpkg::Error;
using namespace libpkg::config;

constexpr const char* kBase = "2.6.0.dev20250101";
constexpr libpkg::u32 kCrc = 0x0badc0de;
constexpr const char* kCudnn = "9.1";

// One job as the old scripts saw it: the strings their variables held.
struct Job {
  std::string type;          // PACKAGE_TYPE
  std::string os;            // linux | macos (uname)
  std::string arch;          // x86_64 | aarch64 | arm64
  std::string desired_cuda;  // DESIRED_CUDA: cpu, cu124, rocm6.1, xpu
  std::string python;        // DESIRED_PYTHON ("" for libtorch)
  std::string abi;           // "", pre-cxx11, cxx11 (DESIRED_DEVTOOLSET)
  std::string variant;       // LIBTORCH_VARIANT ("" = the default)

  std::string describe() const {
    return fmt::format("{} {} {} {} py={} abi={} variant={}", type, os, arch,
                       desired_cuda, python, abi, variant);
  }
};

bool starts(const std::string& s, const char* prefix) {
  return s.rfind(prefix, 0) == 0;
}

// The combinations the old scripts built or could build: a libtorch variant
// only on Linux libtorch (cimodel LINKING x DEPS); macOS is cpu only, has no
// devtoolset, no manywheel and no aarch64; Linux has no `wheel` (the macOS
// wheel) and no arm64 spelling; conda knew cpu and CUDA; ROCm is cxx11.
bool buildable(const Job& j) {
  if (!j.variant.empty() && !(j.type == "libtorch" && j.os == "linux"))
    return false;
  if (j.os == "macos")
    return j.desired_cuda == "cpu" && j.abi.empty() && j.type != "manywheel" &&
           (j.arch == "x86_64" || j.arch == "arm64");
  if (j.type == "wheel" || j.arch == "arm64") return false;
  if (j.type == "conda" &&
      (starts(j.desired_cuda, "rocm") || j.desired_cuda == "xpu"))
    return false;
  if (starts(j.desired_cuda, "rocm") && j.abi == "pre-cxx11") return false;
  return true;
}

// "cu124" → "12.4", "cu118" → "11.8", "cu130" → "13.0" (conda's
// CUDA_VERSION from nvcc, final scripts).
std::string cuda_dotted(const std::string& desired_cuda) {
  std::string digits = desired_cuda.substr(2);
  return digits.substr(0, digits.size() - 1) + "." + digits.back();
}

std::string nodot(const std::string& python) {
  std::string out;
  for (char c : python)
    if (c != '.') out += c;
  return out;
}

// What the scripts named the job's outputs (roles as artifact_names has
// them), with the debug CRC kCrc where a debug zip exists.
std::multimap<std::string, std::string> expected_names(const Job& j) {
  const bool darwin = j.os == "macos";
  const std::string version =
      std::string(kBase) +
      (darwin || j.type == "conda" ? "" : "+" + j.desired_cuda);
  const std::string crc = fmt::format("{:08x}", kCrc);
  std::multimap<std::string, std::string> out;
  if (j.type == "manywheel") {
    // §2.4: torch-<ver>-cpXY-cpXY<abi>-linux_<arch>.whl (no retag), and
    // the debug-whl-libtorch-<wheel>-<CRC32>.zip of the debug split.
    std::string py = nodot(j.python);
    std::string abi_py = py;
    if (py.back() == 't') py.pop_back();
    std::string wheel =
        fmt::format("torch-{}-cp{}-cp{}-linux_{}", version, py, abi_py, j.arch);
    out.emplace("wheel", wheel + ".whl");
    out.emplace("debug-wheel",
                fmt::format("debug-whl-libtorch-{}-{}.zip", wheel, crc));
  } else if (j.type == "wheel") {
    // §4: ${TORCH_PACKAGE_NAME}-${ver}-cp${nodot}-none-${mac_version}.whl.
    std::string py = nodot(j.python);
    if (py.back() == 't') py.pop_back();
    const char* mac =
        j.arch == "arm64" ? "macosx_11_0_arm64" : "macosx_10_9_x86_64";
    out.emplace("wheel",
                fmt::format("torch-{}-cp{}-none-{}.whl", version, py, mac));
  } else if (j.type == "conda") {
    // §3.1: pytorch-<ver>-py<M.m>_<suffix>_<N>; mac py<M.m>_<N>.
    std::string build = darwin ? fmt::format("py{}_0", j.python)
                        : j.desired_cuda == "cpu"
                            ? fmt::format("py{}_cpu_0", j.python)
                            : fmt::format("py{}_cuda{}_cudnn{}_0", j.python,
                                          cuda_dotted(j.desired_cuda), kCudnn);
    out.emplace("conda", fmt::format("pytorch-{}-{}.tar.bz2", version, build));
    out.emplace("conda-v2", fmt::format("pytorch-{}-{}.conda", version, build));
  } else if (darwin) {
    // §4: libtorch-macos-<arch>-<ver>.zip plus -latest; x86_64 also the
    // un-arched libtorch-macos-latest.zip. No debug split on macOS.
    out.emplace("libtorch",
                fmt::format("libtorch-macos-{}-{}.zip", j.arch, version));
    out.emplace("libtorch-latest",
                fmt::format("libtorch-macos-{}-latest.zip", j.arch));
    if (j.arch == "x86_64")
      out.emplace("libtorch-latest", "libtorch-macos-latest.zip");
  } else {
    // §2.3: libtorch-${LIBTORCH_ABI}${LIBTORCH_VARIANT}-${VER}.zip, the
    // -latest copy and debug-libtorch-${ABI}${VARIANT}-${VER}-${CRC32}.zip.
    const bool cxx11 =
        j.abi == "cxx11" || (j.abi.empty() && starts(j.desired_cuda, "rocm"));
    std::string flavour = std::string(cxx11 ? "cxx11-abi-" : "") +
                          (j.variant.empty() ? "shared-with-deps" : j.variant);
    out.emplace("libtorch",
                fmt::format("libtorch-{}-{}.zip", flavour, version));
    out.emplace("libtorch-latest",
                fmt::format("libtorch-{}-latest.zip", flavour));
    out.emplace("debug-libtorch", fmt::format("debug-libtorch-{}-{}-{}.zip",
                                              flavour, version, crc));
  }
  return out;
}

// The library's names for the job, its version resolved as the scripts did.
std::multimap<std::string, std::string> library_names(BuildConfig c) {
  ConfigOverrides v;
  v.override_version = package_version(kBase, c);
  if (c.type == PackageType::conda &&
      c.accelerator.kind == AcceleratorKind::cuda)
    v.cudnn_version = kCudnn;
  c = apply_overrides(c, v);
  std::multimap<std::string, std::string> out;
  for (const auto& [role, name] : artifact_names(c, kCrc))
    out.emplace(role, name);
  return out;
}

std::string show(const std::multimap<std::string, std::string>& names) {
  std::string s;
  for (const auto& [role, name] : names) s += "\n  " + role + ": " + name;
  return s;
}

TEST(ArtifactNames, EveryCombinationMatchesTheOldScripts) {
  const std::vector<std::string> types = {"manywheel", "conda", "libtorch",
                                          "wheel"};
  const std::vector<std::pair<std::string, std::string>> platforms = {
      {"linux", "x86_64"},
      {"linux", "aarch64"},
      {"linux", "arm64"},
      {"macos", "x86_64"},
      {"macos", "arm64"}};
  const std::vector<std::string> accelerators = {
      "cpu",   "cu118", "cu121", "cu124",   "cu126",
      "cu128", "cu129", "cu130", "rocm6.1", "xpu"};
  const std::vector<std::string> abis = {"", "pre-cxx11", "cxx11"};
  const std::vector<std::string> variants = {
      "", "shared-with-deps", "shared-without-deps", "static-with-deps",
      "static-without-deps"};
  int built = 0, refused = 0;
  for (const auto& type : types)
    for (const auto& [os, arch] : platforms)
      for (const auto& accel : accelerators)
        for (const auto& abi : abis)
          for (const auto& variant : variants)
            for (const std::string& python :
                 type == "libtorch" ? std::vector<std::string>{""}
                 : type == "conda"  ? std::vector<std::string>{"3.11"}
                                   : std::vector<std::string>{"3.9", "3.13t"}) {
              const Job job{type, os, arch, accel, python, abi, variant};
              ConfigOverrides o;
              o.package_type = type;
              o.os = os;
              o.arch = arch;
              o.accelerator = accel;
              if (!python.empty()) o.python = python;
              if (!abi.empty()) o.abi = abi;
              if (!variant.empty()) o.variant = variant;
              std::optional<BuildConfig> c;
              try {
                c = apply_overrides(BuildConfig{}, o);
              } catch (const Error& e) {
                EXPECT_EQ(e.code(), Errc::usage) << job.describe();
                EXPECT_FALSE(buildable(job))
                    << job.describe() << ": refused: " << e.message();
                ++refused;
                continue;
              }
              EXPECT_TRUE(buildable(job)) << job.describe() << ": accepted as "
                                          << c->build_environment();
              if (!buildable(job)) continue;
              ++built;
              auto want = expected_names(job);
              auto got = library_names(*c);
              EXPECT_EQ(got, want)
                  << job.describe() << "\nlibrary:" << show(got)
                  << "\nscripts:" << show(want);
            }
  // Sanity: the table really spans both halves.
  EXPECT_GT(built, 400);
  EXPECT_GT(refused, 500);
}

TEST(ArtifactNames, EveryMatrixEntryMatchesTheOldScripts) {
  const auto configs =
      expand_matrix(builtin_matrix_json(), "matrix.json", MatrixFilter{});
  ASSERT_FALSE(configs.empty());
  bool macos_libtorch = false;
  for (const BuildConfig& c : configs) {
    Job job{package_type_name(c.type),
            c.os,
            c.arch,
            c.accelerator.tag(),
            c.python ? c.python->str() : "",
            c.os == "macos" ? "" : cxx_abi_option(c.cxx_abi),
            c.variant ? c.variant->name() : ""};
    macos_libtorch |= c.type == PackageType::libtorch && c.os == "macos";
    auto want = expected_names(job);
    auto got = library_names(c);
    EXPECT_EQ(got, want) << c.build_environment() << "\nlibrary:" << show(got)
                         << "\nscripts:" << show(want);
  }
  EXPECT_TRUE(macos_libtorch) << "the matrix has a macOS libtorch job";
}

}  // namespace
