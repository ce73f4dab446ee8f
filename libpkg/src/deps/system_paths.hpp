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

// What a process chrooted at `root` reaches by `path`, as a host path: the
// path walked component by component, "." and ".." resolved (never above
// the root) and every symbolic link followed inside the root (an absolute
// target starts again from it). under_root names a file as the loader
// would print it; this is the file to open or test, so that a link in the
// tree (opt/lib -> /usr/lib, ld.so.conf.d/x.conf -> /etc/x.conf) never
// leads out to the host. Unchanged for "/" or an empty root.
std::string resolve_in_root(const std::filesystem::path& root,
                            std::string_view path);

// resolve_in_root of a host path under `root` (a directory or candidate
// built from under_root, a glob match); a path outside the root (an
// RPATH, the analysed file) unchanged.
std::string in_root(const std::filesystem::path& root,
                    const std::string& host_path);

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
