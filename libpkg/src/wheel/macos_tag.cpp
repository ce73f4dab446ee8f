// SPDX-License-Identifier: BSD-3-Clause
// The macOS platform tag from per-slice minos values (see macos_tag.hpp).
#include "libpkg/wheel/macos_tag.hpp"

#include <algorithm>
#include <charconv>
#include <map>
#include <set>

#include "libpkg/base/error.hpp"
#include "libpkg/wheel/metadata.hpp"

namespace libpkg::wheel {

namespace {

const MacosVersion kArm64First{11, 0};

// Reads one decimal component at `pos`; false when there is none.
bool read_number(std::string_view text, size_t& pos, unsigned& out) {
  const char* begin = text.data() + pos;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(begin, end, out);
  if (ec != std::errc() || ptr == begin) return false;
  pos += static_cast<size_t>(ptr - begin);
  return true;
}

MacosVersion arch_floor(const std::string& arch,
                        const std::optional<MacosVersion>& target) {
  MacosVersion floor = target ? target->tag_version() : MacosVersion{};
  if (arch == "arm64") floor = std::max(floor, kArm64First);
  return floor;
}

std::string platform_tag(const MacosVersion& v, const std::string& arch) {
  return "macosx_" + v.tag_part() + "_" + arch;
}

}  // namespace

std::string tag_arch(const std::string& arch) {
  // Subtypes share their family's tag.
  if (arch == "arm64e") return "arm64";
  if (arch == "x86_64h") return "x86_64";
  return arch;
}

std::set<std::string> archs_of_every_file(
    const std::vector<MacosBinary>& loadable) {
  std::map<std::string, std::set<std::string>> by_file;
  for (const MacosBinary& b : loadable)
    by_file[b.file].insert(tag_arch(b.arch));
  std::set<std::string> common;
  bool first = true;
  for (const auto& [file, archs] : by_file) {
    if (first) {
      common = archs;
      first = false;
      continue;
    }
    std::erase_if(common,
                  [&](const std::string& a) { return !archs.count(a); });
  }
  return common;
}

std::set<std::string> macos_tag_archs(std::string_view tag) {
  if (!is_macos_platform_tag(tag)) return {};
  // macosx_<major>_<minor>_<arch>: the arch is what follows the third '_'.
  size_t pos = 0;
  for (int i = 0; i < 3 && pos != std::string_view::npos; ++i)
    pos = tag.find('_', pos == 0 ? 0 : pos + 1);
  if (pos == std::string_view::npos) return {};
  std::string arch(tag.substr(pos + 1));
  if (arch == "universal2") return {"arm64", "x86_64"};
  if (arch == "intel") return {"i386", "x86_64"};
  return {tag_arch(arch)};
}

MacosVersion MacosVersion::parse(std::string_view text, std::string_view what) {
  MacosVersion v;
  size_t pos = 0;
  unsigned patch = 0;
  bool ok = read_number(text, pos, v.major);
  if (ok && pos < text.size()) {
    ok = text[pos++] == '.' && read_number(text, pos, v.minor);
    if (ok && pos < text.size())
      ok = text[pos++] == '.' && read_number(text, pos, patch) &&
           pos == text.size();
  }
  if (!ok || v.major == 0)
    throw Error(Errc::usage, std::string(what),
                "'" + std::string(text) +
                    "' is not a macOS version (MAJOR[.MINOR[.PATCH]])");
  return v;
}

std::string MacosVersion::str() const {
  return std::to_string(major) + "." + std::to_string(minor);
}

std::string MacosVersion::tag_part() const {
  MacosVersion v = tag_version();
  return std::to_string(v.major) + "_" + std::to_string(v.minor);
}

MacosTagResult compute_macos_platform_tags(
    const std::vector<MacosBinary>& binaries, const MacosTagOptions& options,
    const std::string& wheel) {
  if (binaries.empty())
    throw Error(Errc::usage, wheel,
                "no Mach-O file with a minimum macOS version: cannot compute "
                "a macOS platform tag");
  MacosTagResult result;
  std::vector<std::string> too_new;
  for (const MacosBinary& b : binaries) {
    const std::string arch = tag_arch(b.arch);
    if (options.archs && !options.archs->count(arch)) continue;
    const MacosVersion need = b.minos.tag_version();
    const MacosVersion floor = arch_floor(arch, options.target);
    // The target is a ceiling too: arm64's is never below 11.0.
    if (options.target && need > floor)
      too_new.push_back(b.file + " (" + b.arch + " " + b.minos.str() + ")");
    auto [it, fresh] = result.arch_versions.try_emplace(arch, floor);
    it->second = std::max(it->second, need);
  }
  if (result.arch_versions.empty())
    throw Error(Errc::usage, wheel,
                "no Mach-O slice of the tag's architectures states a "
                "minimum macOS version: cannot compute a macOS platform tag");
  if (!too_new.empty()) {
    std::string list;
    for (const auto& f : too_new) list += (list.empty() ? "" : ", ") + f;
    throw Error(Errc::format, wheel,
                std::to_string(too_new.size()) +
                    (too_new.size() == 1 ? " file needs" : " files need") +
                    " a newer macOS than the deployment target " +
                    options.target->str() + ": " + list);
  }
  auto& versions = result.arch_versions;
  auto x86 = versions.find("x86_64");
  auto arm = versions.find("arm64");
  bool universal2 = x86 != versions.end() && arm != versions.end() &&
                    (x86->second == arm->second || arm->second == kArm64First);
  for (const auto& [arch, version] : versions) {
    if (universal2 && arch == "arm64") continue;
    result.platform_tags.push_back(platform_tag(
        version, universal2 && arch == "x86_64" ? "universal2" : arch));
  }
  std::sort(result.platform_tags.begin(), result.platform_tags.end());
  return result;
}

std::vector<std::string> files_lacking_tag_archs(
    const std::vector<MacosBinary>& loadable, const MacosTagResult& tags) {
  std::vector<std::string> out;
  if (tags.arch_versions.size() < 2) return out;
  std::map<std::string, std::set<std::string>> archs;  // file -> tag archs
  for (const MacosBinary& b : loadable) archs[b.file].insert(tag_arch(b.arch));
  for (const auto& [file, has] : archs) {
    std::vector<std::string> missing;
    for (const auto& [arch, version] : tags.arch_versions)
      if (!has.contains(arch)) missing.push_back(arch);
    if (missing.empty()) continue;
    std::string list;
    for (const auto& a : missing) list += (list.empty() ? "" : " and ") + a;
    out.push_back(file + " lacks " + list);
  }
  return out;
}

bool is_macos_platform_tag(std::string_view tag) {
  return tag.starts_with("macosx_");
}

WheelName with_platform_tags(const WheelName& name,
                             const std::vector<std::string>& platform_tags) {
  WheelName out = name;
  out.platform_tags =
      split_tag_set(join_tag_set(platform_tags), "platform tag");
  return out;
}

std::string retag_wheel_text(std::string_view wheel_text, const WheelName& name,
                             const std::string& file) {
  WheelFile wf = WheelFile::parse(wheel_text, file);
  wf.set_tags(name.tags());
  return wf.format();
}

}  // namespace libpkg::wheel
