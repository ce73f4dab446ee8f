// SPDX-License-Identifier: BSD-3-Clause
// The YAML text of a workflow, from a JSON tree (objects in insertion
// order). Only what a GitHub Actions file needs: block mappings and
// sequences, `{}`/`[]` when empty, plain scalars where YAML 1.1 and 1.2
// read them as the same string, JSON-style double quotes otherwise (a JSON
// string is a valid YAML double-quoted scalar), and `|` block literals for
// multi-line strings (the `run:` scripts). The same tree always gives the
// same bytes.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace libpkg::nightly {

/// The YAML document for `tree` (an object), ending with a newline.
std::string to_yaml(const nlohmann::ordered_json& tree);

}  // namespace libpkg::nightly
