// SPDX-License-Identifier: BSD-3-Clause
#include "cuda/layout.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <optional>
#include <utility>

#include "libpkg/base/error.hpp"

namespace libpkg::cuda::detail {

namespace fs = std::filesystem;

std::optional<std::pair<int, int>> parse_dir_name(std::string_view name) {
  if (!name.starts_with("cuda-")) return std::nullopt;
  name.remove_prefix(5);
  int major = 0, minor = 0;
  const char* end = name.data() + name.size();
  auto [p, ec] = std::from_chars(name.data(), end, major);
  if (ec != std::errc() || p == end || *p != '.') return std::nullopt;
  auto [q, ec2] = std::from_chars(p + 1, end, minor);
  if (ec2 != std::errc() || q != end || q == p + 1) return std::nullopt;
  return std::pair{major, minor};
}

std::string toolkit_dir_name(const config::Accelerator& version) {
  if (version.kind != config::AcceleratorKind::cuda) {
    throw Error(Errc::usage, "",
                fmt::format("'{}' is not a CUDA version (accepted: X.Y, "
                            "cuXY, cudaX.Y)",
                            version.kind == config::AcceleratorKind::rocm
                                ? version.tag()
                                : config::accelerator_kind_name(version.kind)));
  }
  return fmt::format("cuda-{}.{}", version.major, version.minor);
}

std::vector<std::string> installed_versions(const fs::path& root) {
  std::vector<std::pair<int, int>> found;
  std::error_code ec;
  for (fs::directory_iterator it(root, ec), end; !ec && it != end;
       it.increment(ec)) {
    auto v = parse_dir_name(it->path().filename().string());
    std::error_code ec2;
    if (v && fs::is_directory(it->path(), ec2)) found.push_back(*v);
  }
  std::sort(found.begin(), found.end());
  std::vector<std::string> out;
  for (auto [major, minor] : found)
    out.push_back(fmt::format("{}.{}", major, minor));
  return out;
}

void throw_missing(const fs::path& root, const config::Accelerator& version) {
  std::vector<std::string> have = installed_versions(root);
  std::string installed =
      have.empty() ? fmt::format("no cuda-X.Y directory in {}", root.string())
                   : fmt::format("installed: {}", fmt::join(have, ", "));
  throw Error(Errc::not_found, (root / toolkit_dir_name(version)).string(),
              fmt::format("no CUDA {}.{} toolkit ({})", version.major,
                          version.minor, installed));
}

}  // namespace libpkg::cuda::detail
