// SPDX-License-Identifier: BSD-3-Clause
// Artifact names against builder-scripts.md's own examples (§2.3, §2.4
// step 6, §3.1, §4, the conda build string).
#include "libpkg/config/names.hpp"

#include <gtest/gtest.h>

#include "libpkg/base/error.hpp"

namespace {

using libpkg::Errc;
using libpkg::Error;
using namespace libpkg::config;

BuildConfig with_version(const char* env, const char* version) {
  ConfigOverrides o;
  o.override_version = version;
  return apply_overrides(parse_build_environment(env), o);
}

TEST(Names, ManywheelDocExample) {
  // §2.4 step 6.
  BuildConfig c = with_version("manywheel 3.7m cu92", "1.3.0.dev20190912+cu92");
  EXPECT_EQ(wheel_name(c).format(),
            "torch-1.3.0.dev20190912+cu92-cp37-cp37m-linux_x86_64.whl");
  EXPECT_EQ(wheel_name(c).dist_info_dir(),
            "torch-1.3.0.dev20190912+cu92.dist-info");
  c = with_version("manywheel 3.13t cu124", "2.6.0+cu124");
  EXPECT_EQ(wheel_name(c).format(),
            "torch-2.6.0+cu124-cp313-cp313t-linux_x86_64.whl");
  c = with_version("manywheel 3.11 cpu aarch64", "2.6.0+cpu");
  EXPECT_EQ(wheel_name(c).format(),
            "torch-2.6.0+cpu-cp311-cp311-linux_aarch64.whl");
  // TORCH_PACKAGE_NAME is escaped (torch-nightly → torch_nightly).
  ConfigOverrides o;
  o.package_name = "torch-nightly";
  c = apply_overrides(c, o);
  EXPECT_EQ(wheel_name(c).format(),
            "torch_nightly-2.6.0+cpu-cp311-cp311-linux_aarch64.whl");
}

TEST(Names, MacWheel) {
  // §4: cp<nodot>-none-<mac_version>.
  BuildConfig c = with_version("wheel 3.7 cpu", "1.3.0.dev20190912");
  EXPECT_EQ(wheel_name(c).format(),
            "torch-1.3.0.dev20190912-cp37-none-macosx_10_9_x86_64.whl");
  c = with_version("wheel 3.12 cpu arm64", "2.5.0");
  EXPECT_EQ(wheel_name(c).format(),
            "torch-2.5.0-cp312-none-macosx_11_0_arm64.whl");
}

TEST(Names, Conda) {
  BuildConfig c = with_version("conda 3.11 cu124", "2.5.0");
  ConfigOverrides o;
  o.cudnn_version = "9.1";
  BuildConfig cu = apply_overrides(c, o);
  // The example; build number 0 under OVERRIDE_PACKAGE_VERSION.
  EXPECT_EQ(conda_build_string(cu), "py3.11_cuda12.4_cudnn9.1_0");
  EXPECT_EQ(conda_file_name(cu),
            "pytorch-2.5.0-py3.11_cuda12.4_cudnn9.1_0.tar.bz2");
  EXPECT_EQ(conda_file_name(cu, ".conda"),
            "pytorch-2.5.0-py3.11_cuda12.4_cudnn9.1_0.conda");
  EXPECT_EQ(conda_cuda_constraint(cu), "pytorch-cuda >=12.4,<12.5");
  EXPECT_EQ(conda_magma_package(cu), "magma-cuda124");
  // A CUDA build string without cuDNN version: a usage error naming it.
  try {
    conda_build_string(c);
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::usage);
    EXPECT_NE(std::string(e.what()).find("CUDNN_VERSION"), std::string::npos);
  }
  // §3.1's 2019 shape (its 10.0.130 came from the libcudart name; an
  // accelerator carries major.minor).
  o.accelerator = "10.0";
  o.python = "3.7";
  o.cudnn_version = "7.6.2";
  EXPECT_EQ(conda_build_string(apply_overrides(c, o)),
            "py3.7_cuda10.0_cudnn7.6.2_0");
  BuildConfig cpu = with_version("conda 3.7 cpu", "1.3.0.dev20190912");
  EXPECT_EQ(conda_build_string(cpu), "py3.7_cpu_0");
  EXPECT_EQ(conda_cuda_constraint(cpu), "");
  // Build number from PYTORCH_BUILD_NUMBER when not overridden.
  ConfigOverrides n;
  n.base_version = "2.5.0";
  n.build_number = 1;
  EXPECT_EQ(conda_build_string(apply_overrides(cpu, n)), "py3.7_cpu_1");
  EXPECT_THROW(conda_file_name(cu, ".zip"), Error);
}

TEST(Names, Libtorch) {
  // §2.3: libtorch-${LIBTORCH_ABI}${LIBTORCH_VARIANT}-${VERSION}.zip.
  BuildConfig c =
      with_version("libtorch cu124 cxx11-abi shared-with-deps", "2.5.0+cu124");
  auto names = artifact_names(c, 0x1a2b3c4du);
  ASSERT_GE(names.size(), 3u);
  EXPECT_EQ(names[0].first, "libtorch");
  EXPECT_EQ(names[0].second,
            "libtorch-cxx11-abi-shared-with-deps-2.5.0+cu124.zip");
  EXPECT_EQ(names[1].second, "libtorch-cxx11-abi-shared-with-deps-latest.zip");
  EXPECT_EQ(names.back().first, "debug-libtorch");
  EXPECT_EQ(
      names.back().second,
      "debug-libtorch-cxx11-abi-shared-with-deps-2.5.0+cu124-1a2b3c4d.zip");
  c = with_version("libtorch cpu static-without-deps", "2.5.0+cpu");
  EXPECT_EQ(libpkg::cppdist::zip_name(libtorch_name(c)),
            "libtorch-static-without-deps-2.5.0+cpu.zip");
  c = with_version("libtorch cpu macos arm64", "2.5.0");
  EXPECT_EQ(libpkg::cppdist::zip_name(libtorch_name(c)),
            "libtorch-macos-arm64-2.5.0.zip");
  EXPECT_THROW(wheel_name(c), Error);
  EXPECT_THROW(conda_build_string(c), Error);
}

TEST(Names, DebugWheelZip) {
  BuildConfig c = with_version("manywheel 3.11 cu124", "2.5.0+cu124");
  auto names = artifact_names(c, 0xdeadbeefu);
  ASSERT_EQ(names.size(), 2u);
  EXPECT_EQ(names[1].first, "debug-wheel");
  EXPECT_EQ(names[1].second,
            "debug-whl-libtorch-torch-2.5.0+cu124-cp311-cp311-linux_x86_64-"
            "deadbeef.zip");
  EXPECT_EQ(artifact_names(c).size(), 1u);
}

TEST(Names, PackageDirSuffix) {
  // §2.2: cpu, xpu, the CUDA version without dots, rocmX.Y.
  EXPECT_EQ(package_dir_suffix(parse_build_environment("manywheel 3.11 cu118")),
            "118");
  EXPECT_EQ(package_dir_suffix(parse_build_environment("manywheel 3.11 cpu")),
            "cpu");
  EXPECT_EQ(
      package_dir_suffix(parse_build_environment("manywheel 3.11 rocm6.1")),
      "rocm6.1");
  EXPECT_EQ(package_dir_suffix(parse_build_environment("manywheel 3.11 xpu")),
            "xpu");
}

}  // namespace
