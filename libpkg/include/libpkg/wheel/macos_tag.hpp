// SPDX-License-Identifier: BSD-3-Clause
// The macOS platform tag of a wheel, computed from the minimum macOS
// version (minos) of every Mach-O slice it contains, as delocate-wheel
// recomputes it after a repair (and `wheel fuse` after merging two wheels).
//
// This is a pure function over {file, arch, minos} values so that the wheel
// layer needs no Mach-O reader: callers (bundle, fuse, the macOS driver)
// read the slices and pass the values in.
//
// The rules:
//   - per arch, the highest minos of any file (the wheel needs them all);
//   - a deployment target (MACOSX_DEPLOYMENT_TARGET / --target) is a floor
//     (every arch's version is at least the target) and a ceiling (a file
//     whose minos is above it is an error listing every such file);
//   - arm64 is never below 11.0 (the first macOS that ran on arm64), so its
//     floor and ceiling are max(target, 11.0);
//   - from macOS 11 on a version's tag uses minor 0 (pip's tags for 11.x
//     are macosx_11_0_*), and minos values are compared that way;
//   - x86_64 and arm64 together become one `universal2` tag (at x86_64's
//     version) when both versions are equal or arm64's is 11.0 (universal2
//     at 10.x means "x86_64 from 10.x, arm64 from 11.0"); otherwise one tag
//     per arch, e.g. macosx_10_15_x86_64.macosx_12_0_arm64;
//   - any other arch gets its own tag.
#pragma once

#include <compare>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "libpkg/wheel/name.hpp"

namespace libpkg::wheel {

/// A macOS version as major.minor, ordered; the unit of minos values and
/// platform tags.
struct MacosVersion {
  unsigned major = 0;
  unsigned minor = 0;

  /// "10.15", "11.0", "13" (minor 0), "10.9.5" (patch ignored). Throws
  /// Errc::usage naming `what` on anything else.
  static MacosVersion parse(std::string_view text,
                            std::string_view what = "macOS version");
  /// The version as a platform tag uses it: minor 0 from macOS 11 on.
  MacosVersion tag_version() const {
    return major >= 11 ? MacosVersion{major, 0} : *this;
  }
  /// Formats the version as "10.15"; never throws.
  std::string str() const;  // "10.15"
  /// Formats tag_version() as a tag part, "10_15" or "11_0"; never throws.
  std::string tag_part() const;  // "10_15" (of tag_version())

  bool operator==(const MacosVersion&) const = default;
  auto operator<=>(const MacosVersion&) const = default;
};

/// One Mach-O slice of a wheel member.
/// Callers leave out slices without LC_BUILD_VERSION / LC_VERSION_MIN_MACOSX
/// (delocate ignores them too).
struct MacosBinary {
  std::string file;  // member name, for error messages
  std::string arch;  // "arm64", "x86_64", ... (arm64e counts as arm64)
  MacosVersion minos;
};

/// Options of compute_macos_platform_tags: the deployment target that is both
/// floor and ceiling.
struct MacosTagOptions {
  // MACOSX_DEPLOYMENT_TARGET or --target: floor and ceiling.
  std::optional<MacosVersion> target;
  // The tag's archs (tag spelling: arm64, x86_64); slices of other archs
  // neither appear in the tag nor raise its versions. Unset: every arch of
  // `binaries`.
  std::optional<std::set<std::string>> archs;
};

/// What compute_macos_platform_tags found: each arch's tag version and the
/// sorted platform tags.
struct MacosTagResult {
  // The tag version of each arch after the floors (arm64 ≥ 11.0, target).
  std::map<std::string, MacosVersion> arch_versions;
  // "macosx_11_0_arm64", "macosx_10_15_universal2", ... sorted.
  std::vector<std::string> platform_tags;
};

/// Computes the platform tags by the rules above.
/// Throws Errc::usage when `binaries` is empty (no version to compute) and
/// Errc::format when files need a newer macOS than the target:
/// "3 files need a newer macOS than the deployment target 10.15: a.so
/// (x86_64 11.0), ...". `wheel` names the wheel in that error.
MacosTagResult compute_macos_platform_tags(
    const std::vector<MacosBinary>& binaries, const MacosTagOptions& options,
    const std::string& wheel);

/// The files of `loadable` (one entry per slice, minos unused) that lack an
/// arch of a multi-arch tag in `tags` (universal2, or one tag per arch), as
/// "FILE lacks arm64": such a file cannot load on that arch although the
/// tag says the wheel runs there. Empty for a single-arch tag. Never throws.
std::vector<std::string> files_lacking_tag_archs(
    const std::vector<MacosBinary>& loadable, const MacosTagResult& tags);

/// The tag spelling of a slice arch: arm64e counts as arm64, x86_64h as
/// x86_64, others as they are. Never throws.
std::string tag_arch(const std::string& slice_arch);

/// The tag archs every file of `loadable` (one entry per slice) has: the
/// archs a wheel holding them can promise. Empty for no files. Never throws.
std::set<std::string> archs_of_every_file(
    const std::vector<MacosBinary>& loadable);

/// The archs a macOS platform tag claims ("macosx_10_9_universal2" →
/// arm64, x86_64; "intel" → i386, x86_64; "macosx_11_0_arm64" → arm64);
/// empty for a tag that is not a macOS one. Never throws.
std::set<std::string> macos_tag_archs(std::string_view tag);

/// Whether a platform tag is a macOS one ("macosx_*").
/// Never throws.
bool is_macos_platform_tag(std::string_view tag);

/// `name` with its platform tags replaced by `platform_tags` (python, abi,
/// build and version kept).
/// Throws Error(Errc::format) when `platform_tags` is empty or a tag has a
/// character other than ASCII letters, digits and `_`.
WheelName with_platform_tags(const WheelName& name,
                             const std::vector<std::string>& platform_tags);

/// WHEEL text whose Tag lines are exactly `name.tags()` (the file name and
/// WHEEL then agree), written where the old Tag lines were; every other field
/// is kept in order (WheelFile). `file` names the WHEEL member in parse errors.
/// Throws Error(Errc::format) naming `file` when the text is not a header
/// block.
std::string retag_wheel_text(std::string_view wheel_text, const WheelName& name,
                             const std::string& file);

}  // namespace libpkg::wheel
