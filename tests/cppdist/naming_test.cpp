// SPDX-License-Identifier: BSD-3-Clause
#include "libpkg/cppdist/naming.hpp"

#include <gtest/gtest.h>

#include "libpkg/base/error.hpp"

namespace libpkg::cppdist {
namespace {

LibtorchName linux_name(std::string version, std::string_view variant,
                        bool cxx11) {
  LibtorchName n;
  n.version = std::move(version);
  n.variant = LibtorchVariant::parse(variant);
  n.cxx11_abi = cxx11;
  return n;
}

TEST(LibtorchNaming, LinuxNamesFollowTheReleaseRules) {
  LibtorchName n = linux_name("2.5.0+cu124", "shared-with-deps", true);
  EXPECT_EQ(zip_name(n), "libtorch-cxx11-abi-shared-with-deps-2.5.0+cu124.zip");
  EXPECT_EQ(latest_names(n),
            std::vector<std::string>{
                "libtorch-cxx11-abi-shared-with-deps-latest.zip"});
  EXPECT_EQ(
      debug_zip_name(n, 0x1a2b3c),
      "debug-libtorch-cxx11-abi-shared-with-deps-2.5.0+cu124-001a2b3c.zip");

  LibtorchName old =
      linux_name("1.3.0.dev20190912", "static-without-deps", false);
  EXPECT_EQ(zip_name(old),
            "libtorch-static-without-deps-1.3.0.dev20190912.zip");
}

TEST(LibtorchNaming, MacNamesAndTheUnarchedLatestCopy) {
  LibtorchName n;
  n.platform = DistPlatform::macos;
  n.version = "2.5.0";
  n.macos_arch = "x86_64";
  EXPECT_EQ(zip_name(n), "libtorch-macos-x86_64-2.5.0.zip");
  EXPECT_EQ(latest_names(n),
            (std::vector<std::string>{"libtorch-macos-x86_64-latest.zip",
                                      "libtorch-macos-latest.zip"}));
  n.macos_arch = "arm64";
  EXPECT_EQ(latest_names(n).size(), 1u);
  n.macos_arch.clear();
  EXPECT_EQ(zip_name(n), "libtorch-macos-2.5.0.zip");
  n.macos_arch = "ppc";
  EXPECT_THROW(zip_name(n), Error);
}

TEST(LibtorchNaming, ParseIsTheInverseOfFormat) {
  for (std::string_view variant : {"shared-with-deps", "shared-without-deps",
                                   "static-with-deps", "static-without-deps"}) {
    for (bool cxx11 : {true, false}) {
      for (std::string version :
           {"2.5.0", "2.6.0.dev20241120+cu124", "1.13.1+cpu", "2.0.0.post1"}) {
        LibtorchName n = linux_name(version, variant, cxx11);
        EXPECT_EQ(parse_zip_name(zip_name(n)), n) << zip_name(n);
        EXPECT_EQ(parse_zip_name(url_escape(zip_name(n))), n);
      }
    }
  }
  LibtorchName mac;
  mac.platform = DistPlatform::macos;
  mac.version = "2.1.0";
  mac.macos_arch = "arm64";
  EXPECT_EQ(parse_zip_name(zip_name(mac)), mac);
}

TEST(LibtorchNaming, ParseRejectsOtherNames) {
  for (std::string_view bad :
       {"torch-2.5.0-cp311-cp311-linux_x86_64.whl", "libtorch-2.5.0.zip",
        "libtorch-cxx11-abi-shared-with-deps-latest.zip",
        "libtorch-shared-with-deps-.zip", "libtorch-dynamic-with-deps-1.0.zip",
        "libtorch-cxx11-abi-shared-with-deps-1.0.tar.gz"}) {
    EXPECT_THROW(parse_zip_name(bad), Error) << bad;
  }
  try {
    parse_zip_name("libtorch-2.5.0.zip");
  } catch (const Error& e) {
    EXPECT_EQ(e.file(), "libtorch-2.5.0.zip");
    EXPECT_NE(e.message().find("variant"), std::string::npos) << e.message();
  }
}

TEST(LibtorchNaming, RejectsVersionsThatWouldMakeNamesAmbiguous) {
  EXPECT_THROW(zip_name(linux_name("", "shared-with-deps", true)), Error);
  EXPECT_THROW(zip_name(linux_name("2.5-rc1", "shared-with-deps", true)),
               Error);
  EXPECT_THROW(zip_name(linux_name("../x", "shared-with-deps", true)), Error);
  EXPECT_THROW(LibtorchVariant::parse("shared"), Error);
}

TEST(LibtorchNaming, DebugWheelZip) {
  EXPECT_EQ(debug_wheel_zip_name(
                "torch-2.5.0+cu124-cp311-cp311-linux_x86_64.whl", 0xdeadbeef),
            "debug-whl-libtorch-torch-2.5.0+cu124-cp311-cp311-linux_x86_64-"
            "deadbeef.zip");
  EXPECT_THROW(debug_wheel_zip_name("dir/x.whl", 1), Error);
}

TEST(LibtorchNaming, UrlEscape) {
  EXPECT_EQ(url_escape("libtorch-shared-with-deps-2.5.0+cu124.zip"),
            "libtorch-shared-with-deps-2.5.0%2Bcu124.zip");
}

}  // namespace
}  // namespace libpkg::cppdist
