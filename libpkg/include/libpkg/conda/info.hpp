// SPDX-License-Identifier: BSD-3-Clause
// The generated info/ files: index.json, paths.json, files, about.json,
// has_prefix. JSON is written like conda-build (keys sorted, indent 2).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "libpkg/base/integers.hpp"
#include "libpkg/conda/metadata.hpp"
#include "libpkg/conda/prefix.hpp"

namespace libpkg::conda {

/// The `path_type` of a paths.json row.
enum class PathType { hardlink, softlink, directory };
/// "hardlink", "softlink" or "directory".
const char* path_type_name(PathType type);

/// One row of info/paths.json.
struct PathRecord {
  std::string path;  // relative to the prefix, '/'-separated
  PathType type = PathType::hardlink;
  std::string sha256;  // hex; empty for directories
  u64 size = 0;
  std::optional<std::string> prefix_placeholder;
  std::optional<FileMode> file_mode;
};

/// `timestamp_ms`: milliseconds since the epoch.
std::string render_index_json(const CondaMetadata& meta, i64 timestamp_ms);
/// info/about.json: the non-empty descriptive fields (summary, home, license,
/// ...) of `meta`.
std::string render_about_json(const CondaMetadata& meta);
/// `records` must be sorted by path.
std::string render_paths_json(const std::vector<PathRecord>& records);
/// info/files: one path per line, in the order of `records`.
std::string render_files(const std::vector<PathRecord>& records);
/// `<placeholder> <text|binary> <path>` per file with a placeholder; empty
/// when there is none (then no info/has_prefix is written).
std::string render_has_prefix(const std::vector<PathRecord>& records);

/// Throws Errc::format naming `file` when the JSON or a row is malformed.
std::vector<PathRecord> parse_paths_json(std::string_view text,
                                         const std::string& file);

}  // namespace libpkg::conda
