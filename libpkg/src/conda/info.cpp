// SPDX-License-Identifier: BSD-3-Clause
// Rendering and parsing of the info/ files.
#include "libpkg/conda/info.hpp"

#include <nlohmann/json.hpp>

#include "libpkg/base/error.hpp"

namespace libpkg::conda {
namespace {

using nlohmann::json;

void put_if(json& j, const char* key, const std::string& value) {
  if (!value.empty()) j[key] = value;
}

bool is_hex_sha256(const std::string& s) {
  if (s.size() != 64) return false;
  for (char c : s) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

// conda splits has_prefix lines on whitespace unless quoted.
std::string quote_if_needed(const std::string& s) {
  if (s.find_first_of(" \t") == std::string::npos) return s;
  return "\"" + s + "\"";
}

}  // namespace

const char* path_type_name(PathType type) {
  switch (type) {
    case PathType::hardlink:
      return "hardlink";
    case PathType::softlink:
      return "softlink";
    case PathType::directory:
      return "directory";
  }
  return "?";
}

std::string render_index_json(const CondaMetadata& meta, i64 timestamp_ms) {
  json j = json::object();
  j["name"] = meta.name;
  j["version"] = meta.version;
  j["build"] = meta.build;
  j["build_number"] = meta.build_number;
  j["depends"] = meta.depends;
  if (!meta.constrains.empty()) j["constrains"] = meta.constrains;
  put_if(j, "license", meta.license);
  put_if(j, "license_family", meta.license_family);
  j["subdir"] = meta.subdir;
  if (meta.noarch.empty()) {
    j["arch"] = meta.arch;
    j["platform"] = meta.platform;
  } else {
    j["arch"] = nullptr;
    j["platform"] = nullptr;
    j["noarch"] = meta.noarch;
  }
  j["timestamp"] = timestamp_ms;
  return j.dump(2) + "\n";
}

std::string render_about_json(const CondaMetadata& meta) {
  json j = json::object();
  put_if(j, "summary", meta.summary);
  put_if(j, "description", meta.description);
  put_if(j, "home", meta.home);
  put_if(j, "doc_url", meta.doc_url);
  put_if(j, "dev_url", meta.dev_url);
  put_if(j, "license", meta.license);
  put_if(j, "license_family", meta.license_family);
  return j.dump(2) + "\n";
}

std::string render_paths_json(const std::vector<PathRecord>& records) {
  json paths = json::array();
  for (const PathRecord& r : records) {
    json row = json::object();
    row["_path"] = r.path;
    row["path_type"] = path_type_name(r.type);
    if (r.type != PathType::directory) {
      row["sha256"] = r.sha256;
      row["size_in_bytes"] = r.size;
    }
    if (r.prefix_placeholder) {
      row["prefix_placeholder"] = *r.prefix_placeholder;
      row["file_mode"] = file_mode_name(r.file_mode.value_or(FileMode::binary));
    }
    paths.push_back(std::move(row));
  }
  json j = json::object();
  j["paths"] = std::move(paths);
  j["paths_version"] = 1;
  return j.dump(2) + "\n";
}

std::string render_files(const std::vector<PathRecord>& records) {
  std::string out;
  for (const PathRecord& r : records) out += r.path + "\n";
  return out;
}

std::string render_has_prefix(const std::vector<PathRecord>& records) {
  std::string out;
  for (const PathRecord& r : records) {
    if (!r.prefix_placeholder) continue;
    out += quote_if_needed(*r.prefix_placeholder) + " " +
           file_mode_name(r.file_mode.value_or(FileMode::binary)) + " " +
           quote_if_needed(r.path) + "\n";
  }
  return out;
}

std::vector<PathRecord> parse_paths_json(std::string_view text,
                                         const std::string& file) {
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    throw Error(Errc::format, file, "not a JSON object");
  }
  if (!j.contains("paths_version") || j["paths_version"] != 1) {
    throw Error(Errc::format, file, "paths_version is not 1");
  }
  if (!j.contains("paths") || !j["paths"].is_array()) {
    throw Error(Errc::format, file, "'paths' is not an array");
  }
  std::vector<PathRecord> out;
  std::size_t index = 0;
  for (const json& row : j["paths"]) {
    std::string where = "paths[" + std::to_string(index++) + "]";
    if (!row.is_object() || !row.contains("_path") ||
        !row["_path"].is_string() || !row.contains("path_type") ||
        !row["path_type"].is_string()) {
      throw Error(Errc::format, file, where + ": needs _path and path_type");
    }
    PathRecord r;
    r.path = row["_path"].get<std::string>();
    std::string type = row["path_type"].get<std::string>();
    if (type == "hardlink") {
      r.type = PathType::hardlink;
    } else if (type == "softlink") {
      r.type = PathType::softlink;
    } else if (type == "directory") {
      r.type = PathType::directory;
    } else {
      throw Error(Errc::format, file,
                  where + ": unknown path_type '" + type + "'");
    }
    if (row.contains("sha256") && !row["sha256"].is_null()) {
      if (!row["sha256"].is_string() ||
          !is_hex_sha256(row["sha256"].get<std::string>())) {
        throw Error(Errc::format, file,
                    where + ": sha256 is not 64 hex digits");
      }
      r.sha256 = row["sha256"].get<std::string>();
    }
    if (row.contains("size_in_bytes") && !row["size_in_bytes"].is_null()) {
      if (!row["size_in_bytes"].is_number_unsigned()) {
        throw Error(Errc::format, file,
                    where + ": size_in_bytes is not a size");
      }
      r.size = row["size_in_bytes"].get<u64>();
    }
    if (row.contains("prefix_placeholder") &&
        row["prefix_placeholder"].is_string()) {
      r.prefix_placeholder = row["prefix_placeholder"].get<std::string>();
      std::string mode = row.value("file_mode", std::string("text"));
      r.file_mode = mode == "binary" ? FileMode::binary : FileMode::text;
    }
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace libpkg::conda
