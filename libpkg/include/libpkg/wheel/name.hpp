// SPDX-License-Identifier: BSD-3-Clause
// Wheel file names (binary distribution format spec, PEP 427/491) and the
// PEP 425 compatibility tags they carry.
//
//   {distribution}-{version}(-{build tag})?-{python}-{abi}-{platform}.whl
//
// Each tag part may be a compressed tag set ("cp39.cp310"). Parsing accepts
// legacy distribution names (mixed case, dots: what setuptools' safer_name
// produced) but validates the version against PEP 440 and the build tag
// (must start with a digit), like pip's parse_wheel_filename. Tag sets are
// kept sorted and unique, so two names that differ only in the order of a
// compressed set compare equal and format() is canonical (as `wheel`'s
// compute_tagline does).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace libpkg::wheel {

/// One PEP 425 tag: interpreter-abi-platform.
struct WheelTag {
  std::string python;
  std::string abi;
  std::string platform;

  /// "python-abi-platform"; never throws.
  std::string str() const { return python + "-" + abi + "-" + platform; }
  bool operator==(const WheelTag&) const = default;
  auto operator<=>(const WheelTag&) const = default;
};

/// A parsed wheel file name; tag sets are kept sorted and unique so format() is
/// canonical.
struct WheelName {
  std::string distribution;  // as spelled in the file name
  std::string version;       // as spelled in the file name ('-' escaped '_')
  std::optional<std::string> build;
  std::vector<std::string> python_tags;  // sorted, unique, non-empty
  std::vector<std::string> abi_tags;
  std::vector<std::string> platform_tags;

  /// Parses a file name (a path is accepted; only its last component is
  /// used). Throws Errc::format naming the file and the problem.
  static WheelName parse(std::string_view filename);

  /// The canonical file name.
  /// Never throws.
  std::string format() const;
  /// "{distribution}-{version}", the prefix of the .dist-info directory.
  /// Never throws.
  std::string name_version() const { return distribution + "-" + version; }
  /// "{distribution}-{version}.dist-info"; never throws.
  std::string dist_info_dir() const { return name_version() + ".dist-info"; }
  /// "{distribution}-{version}.data"; never throws.
  std::string data_dir() const { return name_version() + ".data"; }

  /// "cu124" for "2.5.0+cu124"; empty when the version has no local part.
  /// Never throws.
  std::string local_version() const;
  /// A copy whose version has no local part ("2.5.0").
  /// Never throws.
  WheelName without_local_version() const;
  /// Every tag the wheel declares: the product of the three sets, sorted.
  /// Never throws.
  std::vector<WheelTag> tags() const;
  /// "py3.cp311" style compressed sets.
  /// Never throws.
  std::string python_tag() const;
  /// The abi set compressed, as python_tag(); never throws.
  std::string abi_tag() const;
  /// The platform set compressed, as python_tag(); never throws.
  std::string platform_tag() const;

  bool operator==(const WheelName&) const = default;
};

/// Spec escaping for a distribution name in a new file name:
/// re.sub("[-_.]+", "_", name).lower().
/// Never throws.
std::string escape_distribution(std::string_view name);
/// PEP 503 normalised name: re.sub("[-_.]+", "-", name).lower(). Two names
/// denote the same project iff their canonical forms are equal.
/// Never throws.
std::string canonicalize_name(std::string_view name);
/// Version escaping for file names: '-' → '_'.
/// Never throws.
std::string escape_version(std::string_view version);
/// Whether `version` is a valid PEP 440 version (any accepted spelling,
/// case-insensitive, e.g. "1.0.post1", "1.0-1", "v2.0rc1", "1.0+cu124").
/// Never throws.
bool is_valid_version(std::string_view version);
/// Whether a build tag is acceptable: non-empty, starts with a digit, and
/// contains only characters allowed in a file name component (no '-').
/// Never throws.
bool is_valid_build_tag(std::string_view build);

/// "cp39.cp310" → {"cp310", "cp39"} (sorted, unique). Throws Errc::format
/// naming `what` when a tag is empty or contains a character outside
/// [A-Za-z0-9_].
std::vector<std::string> split_tag_set(std::string_view compressed,
                                       std::string_view what = "tag set");
/// Sorted unique tags joined with '.'.
/// Never throws.
std::string join_tag_set(std::vector<std::string> tags);

}  // namespace libpkg::wheel
