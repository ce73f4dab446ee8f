// SPDX-License-Identifier: BSD-3-Clause
// Locating the .dist-info directory of a wheel (see wheel.hpp helpers).
#include <algorithm>

#include "libpkg/base/error.hpp"
#include "libpkg/wheel/wheel.hpp"

namespace libpkg::wheel {

std::vector<std::string> dist_info_dirs(const archive::ZipReader& zip) {
  constexpr std::string_view kSuffix = ".dist-info";
  std::vector<std::string> dirs;
  for (const auto& e : zip.entries()) {
    auto slash = e.name.find('/');
    if (slash == std::string::npos) continue;
    std::string_view top = std::string_view(e.name).substr(0, slash);
    if (top.size() > kSuffix.size() &&
        top.substr(top.size() - kSuffix.size()) == kSuffix)
      dirs.emplace_back(top);
  }
  std::sort(dirs.begin(), dirs.end());
  dirs.erase(std::unique(dirs.begin(), dirs.end()), dirs.end());
  return dirs;
}

std::string find_dist_info(const archive::ZipReader& zip,
                           const std::optional<WheelName>& name) {
  auto dirs = dist_info_dirs(zip);
  if (dirs.empty())
    throw Error(Errc::format, zip.name(), "no .dist-info directory");
  if (name) {
    // Exact spelling first (what `wheel` requires), then the same project
    // and version spelled differently (legacy vs normalised names).
    for (const auto& d : dirs)
      if (d == name->dist_info_dir()) return d;
    std::string want_name = canonicalize_name(name->distribution);
    for (const auto& d : dirs) {
      std::string stem = d.substr(0, d.size() - 10);
      auto dash = stem.find('-');
      if (dash == std::string::npos) continue;
      if (canonicalize_name(stem.substr(0, dash)) == want_name &&
          stem.substr(dash + 1) == name->version)
        return d;
    }
  }
  if (dirs.size() == 1) return dirs[0];
  std::string list;
  for (const auto& d : dirs) list += (list.empty() ? "" : ", ") + d;
  throw Error(Errc::format, zip.name(),
              "ambiguous .dist-info directories: " + list);
}

}  // namespace libpkg::wheel
