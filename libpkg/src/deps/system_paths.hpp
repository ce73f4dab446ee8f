// SPDX-License-Identifier: BSD-3-Clause
// Private helpers shared by the system-directory parsers and the resolver.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "libpkg/elf/view.hpp"

namespace libpkg::deps::detail {

// `path` (absolute, a system location) seen under `root`: unchanged for "/"
// or an empty root, else root + path with "." and ".." resolved as they are
// inside a chroot (never above the root), so a configuration file in the
// tree cannot send the search outside it ("include ../../../../x",
// "/../../home").
std::string under_root(const std::filesystem::path& root,
                       std::string_view path);

// Directories of a musl /etc/ld-musl-<arch>.path file (separated by ':'
// and newlines, empty entries dropped), under `root`.
std::vector<std::string> parse_musl_path_file(
    const std::filesystem::path& file, const std::filesystem::path& root);

// Every <root>/etc/ld-musl-<arch>.path, parsed, by <arch>.
std::map<std::string, std::vector<std::string>> read_musl_path_files(
    const std::filesystem::path& root);

// The <arch> of musl's ld-musl-<arch>.so.1 / .path for an ELF file
// ("x86_64", "i386", "aarch64", "armhf"...); "" when unknown.
std::string musl_arch_name(const elf::ElfFile& elf);

}  // namespace libpkg::deps::detail
