// SPDX-License-Identifier: BSD-3-Clause
// File names of C++ zip distributions (libtorch-style), in one place.
//
// The old scripts built these names in four places with slightly different
// rules (builder-scripts.md §1.5, §2.3, §4); a consumer (smoke tests, the
// download page, check_binary) had to re-derive them. Here they are produced
// and parsed by the same code:
//   libtorch-[cxx11-abi-]<shared|static>-<with|without>-deps-<version>.zip
//   libtorch-[cxx11-abi-]<variant>-latest.zip                (byte copy)
//   debug-libtorch-[cxx11-abi-]<variant>-<version>-<crc32>.zip
//   debug-whl-libtorch-<wheel file name>-<crc32>.zip
//   libtorch-macos[-<arch>]-<version>.zip, libtorch-macos[-<arch>]-latest.zip
// The version may carry a local part (`2.5.0+cu124`); URLs need `+` as %2B.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "libpkg/base/integers.hpp"

namespace libpkg::cppdist {

/// A libtorch build variant: shared or static, with or without its
/// dependencies.
struct LibtorchVariant {
  bool shared = true;
  bool with_deps = true;

  /// "shared-with-deps" etc.; throws Errc::usage naming the accepted values.
  static LibtorchVariant parse(std::string_view text);
  /// "shared-with-deps", "shared-without-deps", "static-with-deps" or
  /// "static-without-deps".
  std::string name() const;
  bool operator==(const LibtorchVariant&) const = default;
};

/// The platform a libtorch zip is for.
enum class DistPlatform { linux, macos };

/// The parts of a libtorch release zip's name (version, platform, variant, ABI,
/// macOS arch).
struct LibtorchName {
  std::string version;  // PYTORCH_BUILD_VERSION, e.g. 2.5.0.dev20241001+cu124
  DistPlatform platform = DistPlatform::linux;
  LibtorchVariant variant;  // linux only
  bool cxx11_abi = true;    // linux only
  std::string macos_arch;   // macos only: "", "x86_64" or "arm64"
  bool operator==(const LibtorchName&) const = default;
};

/// The release zip: "libtorch-cxx11-abi-shared-with-deps-2.5.0+cu124.zip".
std::string zip_name(const LibtorchName& name);
/// The "-latest" copies. On macOS x86_64 there is also the un-arched
/// "libtorch-macos-latest.zip" that old download links point to.
std::vector<std::string> latest_names(const LibtorchName& name);
/// "debug-libtorch-cxx11-abi-shared-with-deps-2.5.0+cu124-1a2b3c4d.zip"; the
/// CRC is the .gnu_debuglink CRC of libtorch_cpu.so as 8 lowercase hex digits.
std::string debug_zip_name(const LibtorchName& name, u32 debuglink_crc);
/// "debug-whl-libtorch-<wheel file name without .whl>-<crc>.zip".
std::string debug_wheel_zip_name(std::string_view wheel_file_name,
                                 u32 debuglink_crc);

/// Inverse of zip_name (also accepts the "%2B"-escaped form); throws
/// Errc::format naming the file when it is not a libtorch zip name.
LibtorchName parse_zip_name(std::string_view file_name);

/// Percent-escapes what a download URL can't carry literally ('+' → "%2B").
std::string url_escape(std::string_view file_name);

/// The CRC-32 stored at the end of the .gnu_debuglink section (read in the
/// file's byte order, so a big-endian target's value is right too); nullopt
/// when the file has no such section. Throws on a malformed ELF.
std::optional<u32> debuglink_crc(const std::filesystem::path& elf);

}  // namespace libpkg::cppdist
