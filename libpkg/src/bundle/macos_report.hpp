// SPDX-License-Identifier: BSD-3-Clause
// The JSON of a macOS closure (private to bundle/): the grafts, redirects,
// edits, excluded names and notes shared by libpkg-macos-repair-plan/1 and
// libpkg-macos-tree-bundle/1 (docs/repair.md).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "libpkg/bundle/macos_repair.hpp"

namespace libpkg::bundle {

nlohmann::json macos_closure_json(const std::vector<MacosGraft>& grafts,
                                  const std::vector<MacosRedirect>& redirects,
                                  const std::vector<MacosFileEdit>& edits,
                                  const std::vector<std::string>& excluded,
                                  const std::vector<std::string>& notes);

}  // namespace libpkg::bundle
