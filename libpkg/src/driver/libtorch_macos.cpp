// SPDX-License-Identifier: BSD-3-Clause
// plan_libtorch_macos / macos_zip_platform: see libtorch_macos.hpp.
#include "driver/libtorch_macos.hpp"

#include <fmt/format.h>

#include "driver/macos_rules.hpp"

namespace libpkg::driver {

bundle::MacosTreeBundlePlan plan_libtorch_macos(
    const LibtorchDriverOptions& o, const LibtorchInput& input,
    std::vector<std::string>& plan) {
  const config::BuildConfig& c = o.common.config;
  const wheel::MacosVersion target =
      detail::macos_deployment_target(o.deployment_target, c.arch);
  plan.push_back(fmt::format("deployment target {} ({}), arch {}", target.str(),
                             o.deployment_target
                                 ? "MACOSX_DEPLOYMENT_TARGET"
                                 : "default 10.15; arm64 at least 11.0",
                             c.arch));
  bundle::MacosRepairOptions ro;
  ro.dyld_library_path = o.library_path;
  ro.exclude = o.exclude;
  ro.require_archs = {c.arch};
  // CMake consumers of the zip add their own run path to libtorch/lib, as
  // the build tree's libraries already use @rpath names.
  ro.refs = bundle::MacosRefs::rpath;
  ro.threads = o.common.threads;
  ro.pool = o.common.pool;
  ro.cache = o.common.cache;  // the grafts' content hashes
  // Errors name what the user gave: the wheel, not its scratch copy.
  const std::string where = o.wheel ? o.wheel->string() : o.tree->string();
  bundle::MacosTreeBundlePlan bundle =
      bundle::plan_macos_tree_bundle(input.tree, input.skip, ro, where);
  detail::check_one_openmp(where, bundle.binaries, bundle.grafts,
                           "lib/ (the wheel's torch/lib/libomp.dylib)");
  for (auto& line : bundle.lines()) plan.push_back(std::move(line));
  return bundle;
}

std::string macos_zip_platform(const LibtorchDriverOptions& o) {
  const config::BuildConfig& c = o.common.config;
  return fmt::format(
      "macosx_{}_{}",
      detail::macos_deployment_target(o.deployment_target, c.arch).tag_part(),
      c.arch);
}

}  // namespace libpkg::driver
