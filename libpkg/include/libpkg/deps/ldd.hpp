// SPDX-License-Identifier: BSD-3-Clause
// `ldd` as a library call: resolve files' closures with the rules of the C
// library each is built for, and the one JSON form of the result.
//
// The JSON schema is shared by `pkgtool ldd --json` and Python's
// `libpkg.deps.ldd`, so it lives here, not in a frontend. One object per
// file, shaped like auditwheel's lddtree:
//   {"path": FILE as given, "realpath": ..., "interp": str|null,
//    "libc": "glibc"|"musl"|"bionic", "needed": [...],
//    "rpath": [entries as written], "runpath": [...],
//    "libs": {SONAME: {"path": str|null, "realpath": str|null,
//                      "via": "rpath"|"inherited_rpath"|"ld_library_path"|
//                             "extra_path"|"runpath"|"ld_so_conf"|
//                             "default_dir"|"path"|"not_found",
//                      "search_dir": entry as written, "needed_by": SONAME
//                      or FILE, "needed": [...], "rpath": [...],
//                      "runpath": [...],
//                      "skipped": [{"path": ..., "reason": ...}]}},
//    "missing": [SONAME...]}
// "libs" keeps load (breadth-first) order.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "libpkg/deps/resolve.hpp"

namespace libpkg::deps {

/// One file's closure and the C library whose loader rules resolved it.
struct LddReport {
  LddTree tree;
  Libc libc = Libc::glibc;
};

/// Resolves each of `files` with `config` (its `libc` field is ignored): the
/// loader rules are those of `force_libc` when given, else of the libc the
/// file says it is built for (interpreter, NEEDED, notes), else glibc's.
/// Resolvers are built once per libc and shared by the files. Throws
/// libpkg::Error for a missing, unreadable or non-ELF file.
std::vector<LddReport> ldd(const std::vector<std::filesystem::path>& files,
                           const SearchConfig& config,
                           std::optional<Libc> force_libc = std::nullopt);

/// The JSON object of one report (schema above), indented by `indent`
/// spaces (-1: one line).
std::string to_json(const LddReport& report, int indent = 2);

/// One report: its object; several: an array of them (`pkgtool ldd --json`).
std::string to_json(const std::vector<LddReport>& reports, int indent = 2);

}  // namespace libpkg::deps
