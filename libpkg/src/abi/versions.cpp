// SPDX-License-Identifier: BSD-3-Clause
#include "libpkg/abi/versions.hpp"

#include <charconv>

namespace libpkg::abi {

std::string VersionTag::version() const {
  std::string s;
  for (size_t i = 0; i < number.size(); ++i) {
    if (i) s += '.';
    s += std::to_string(number[i]);
  }
  return s;
}

std::string VersionTag::str() const { return prefix + "_" + version(); }

std::optional<VersionTag> parse_version_tag(std::string_view name) {
  // The version is the part after the last '_' that starts with a digit;
  // prefixes can contain '_' themselves (CXXABI_TM_1).
  size_t us = name.rfind('_');
  if (us == std::string_view::npos || us == 0 || us + 1 >= name.size())
    return std::nullopt;
  std::string_view ver = name.substr(us + 1);
  VersionTag tag{std::string(name.substr(0, us)), {}};
  while (!ver.empty()) {
    unsigned v = 0;
    auto [p, ec] = std::from_chars(ver.data(), ver.data() + ver.size(), v);
    if (ec != std::errc() || p == ver.data()) return std::nullopt;
    tag.number.push_back(v);
    ver.remove_prefix(static_cast<size_t>(p - ver.data()));
    if (ver.empty()) break;
    if (ver.front() != '.' || ver.size() == 1) return std::nullopt;
    ver.remove_prefix(1);
  }
  if (tag.number.empty()) return std::nullopt;
  return tag;
}

std::map<std::string, RequiredVersion> max_required_versions(
    const elf::ElfFile& elf) {
  std::map<std::string, RequiredVersion> out;
  for (const auto& need : elf.version_needs()) {
    for (const auto& aux : need.versions) {
      auto tag = parse_version_tag(aux.name);
      if (!tag) continue;
      auto it = out.find(tag->prefix);
      if (it == out.end() || it->second.tag < *tag)
        out[tag->prefix] = {*tag, std::string(need.file)};
    }
  }
  return out;
}

}  // namespace libpkg::abi
