// SPDX-License-Identifier: BSD-3-Clause
// `pkgtool inspect` on Mach-O files (macho_inspect_cmd.cpp).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace pkgtool {

// True when the file starts with a Mach-O or fat magic.
bool looks_like_macho(const std::string& file);
// The text form of the library's inspect JSON of a Mach-O file, per slice:
// arch, type, minos/sdk, id, dylibs, rpaths, padding, fixups, signature.
void print_macho_summary(const nlohmann::json& summary);

}  // namespace pkgtool
