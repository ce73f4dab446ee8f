// SPDX-License-Identifier: BSD-3-Clause
// The core of the macOS repair (private to bundle/), shared by the wheel
// repair (macos_plan.cpp) and the libtorch tree bundle (macos_tree.cpp):
// given Mach-O files laid out as they will be installed, resolve their
// closures with dyld's rules (macos_resolve.hpp), refuse the interpreter's
// library, redirect a reference to a library whose leaf name one of the
// files has (never a second copy: libomp), graft the others into
// `lib_dir`, check missing dependencies and required archs, and plan every
// edit (install names, run paths, ids, signatures) as an overlay.
#pragma once

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "libpkg/bundle/macos_repair.hpp"

namespace libpkg::bundle {

struct MacosClosureInput {
  std::string where;                  // the wheel or tree, in errors
  std::filesystem::path tree;         // canonical; the members live here
  std::vector<std::string> binaries;  // Mach-O members, relative to tree
  std::string lib_dir;                // where grafts go, relative to tree
  std::string container = "wheel";    // "already in the <container>"
};

struct MacosClosure {
  std::vector<MacosGraft> grafts;
  std::vector<MacosRedirect> redirects;
  std::vector<MacosFileEdit> edits;
  std::vector<std::string> excluded, notes;
  std::vector<std::string> archs;  // union over the files and grafts
};

// Throws as plan_macos_repair documents (not_found, format), naming
// `in.where`.
MacosClosure plan_macos_closure(const MacosClosureInput& in,
                                const MacosRepairOptions& options);

// Moves the closure into a plan that has the same fields
// (MacosRepairPlan, MacosTreeBundlePlan).
template <class Plan>
void take_closure(MacosClosure&& c, Plan& plan) {
  plan.grafts = std::move(c.grafts);
  plan.redirects = std::move(c.redirects);
  plan.edits = std::move(c.edits);
  plan.excluded = std::move(c.excluded);
  plan.notes = std::move(c.notes);
  plan.archs = std::move(c.archs);
}

}  // namespace libpkg::bundle
