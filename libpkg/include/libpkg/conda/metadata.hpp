// SPDX-License-Identifier: BSD-3-Clause
// What a conda package is: name, version, build and the fields of
// info/index.json and info/about.json, given by the caller or a JSON file.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "libpkg/base/integers.hpp"

namespace libpkg::conda {

/// The metadata of a conda package (index.json and about.json fields).
struct CondaMetadata {
  std::string name;
  std::string version;
  u64 build_number = 0;
  // Build string; empty means the build number ("0", "1", ...).
  std::string build;
  std::vector<std::string> depends;
  std::vector<std::string> constrains;
  std::string license;
  std::string license_family;
  std::string summary;
  std::string description;
  std::string home;
  std::string doc_url;
  std::string dev_url;
  // Empty: the platform this library was compiled for (e.g. linux-64,
  // x86_64, linux); "noarch" packages set noarch and get subdir "noarch".
  std::string subdir;
  std::string arch;
  std::string platform;
  std::string noarch;  // "", "generic" or "python"
};

/// Parses a JSON object with the fields above (`build_number` an integer,
/// `depends`/`constrains` arrays of strings); unknown keys are an error so a
/// typo does not silently drop a field. Throws Errc::format naming `file`.
CondaMetadata parse_metadata_json(std::string_view text,
                                  const std::string& file);
/// parse_metadata_json of the file `path`; throws Errc::io naming it when it
/// cannot be opened, else as parse_metadata_json does.
CondaMetadata load_metadata(const std::filesystem::path& path);

/// Every non-empty text field of `over` (name, version, build, license,
/// summary, ..., noarch) replaces the one in `base`: command-line values
/// over a metadata file. build_number and the lists are left to the caller,
/// whose rules differ (replace or append).
void overlay_text_fields(CondaMetadata& base, const CondaMetadata& over);

/// Fills defaults (build string, subdir/arch/platform) and checks names:
/// conda names are lowercase [a-z0-9_.-], version and build contain no '-'
/// or whitespace. Throws Errc::usage.
CondaMetadata complete_metadata(CondaMetadata meta);

/// `<name>-<version>-<build>`, the file name stem.
std::string package_stem(const CondaMetadata& meta);

/// The conda subdir/arch/platform of the host this library was built for.
struct CondaPlatform {
  std::string subdir;
  std::string arch;
  std::string platform;
};
/// The subdir/arch/platform of the build host ("linux-64", "x86_64", "linux");
/// all empty on an architecture conda has no name for.
CondaPlatform host_platform();

}  // namespace libpkg::conda
