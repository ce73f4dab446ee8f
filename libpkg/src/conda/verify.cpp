// SPDX-License-Identifier: BSD-3-Clause
// verify(): a package against its own info/ metadata, in one streaming pass
// over the members (no extraction).
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "libpkg/archive/zip_reader.hpp"
#include "libpkg/base/error.hpp"
#include "libpkg/base/sha256.hpp"
#include "libpkg/conda/package.hpp"
#include "tree.hpp"

namespace libpkg::conda {
namespace fs = std::filesystem;
using archive::TarKind;
using nlohmann::json;

namespace {

constexpr u64 kMaxInfoFile = u64{64} << 20;

struct Seen {
  TarKind kind = TarKind::other;
  u64 size = 0;
  std::string sha256;
  std::string link_target;
};

struct Contents {
  std::map<std::string, Seen> members;
  std::map<std::string, std::string> info_text;  // info files we check
};

bool wanted_info(const std::string& path) {
  return path == "info/index.json" || path == "info/paths.json" ||
         path == "info/files";
}

std::string normal(const std::string& path) {
  std::string p = path;
  while (p.rfind("./", 0) == 0) p.erase(0, 2);
  while (!p.empty() && p.back() == '/') p.pop_back();
  return p;
}

void read_component(archive::TarReader& reader, const std::string& component,
                    Contents& c, std::vector<Finding>& findings) {
  archive::TarMember m;
  while (reader.next(m)) {
    std::string path = normal(m.path);
    // Directories in the other component are harmless (both parts are
    // extracted into one prefix) and cph 2.0.1 puts empty ones in info.
    if (!component.empty() && m.kind != TarKind::directory) {
      bool info_part = component.rfind("info-", 0) == 0;
      if (info_part != detail::is_info_path(path)) {
        findings.push_back({component, path + ": belongs in the " +
                                           (info_part ? "pkg" : "info") +
                                           " component"});
      }
    }
    Seen s;
    s.kind = m.kind;
    s.size = m.size;
    s.link_target = m.link_target;
    if (m.kind == TarKind::file) {
      Sha256 h;
      std::string text;
      bool keep = wanted_info(path) && m.size <= kMaxInfoFile;
      reader.read_data([&](std::span<const u8> bytes) {
        h.update(bytes);
        if (keep)
          text.append(reinterpret_cast<const char*>(bytes.data()),
                      bytes.size());
      });
      s.sha256 = Sha256::hex(h.finish());
      if (keep) c.info_text[path] = std::move(text);
    } else if (m.kind == TarKind::hardlink) {
      auto it = c.members.find(normal(m.link_target));
      if (it != c.members.end() && it->second.kind == TarKind::file) {
        s = it->second;
      } else {
        findings.push_back(
            {path, "hardlink to a missing member '" + m.link_target + "'"});
      }
    }
    if (!c.members.emplace(path, s).second && s.kind != TarKind::directory) {
      findings.push_back({path, "member appears twice"});
    }
  }
}

void check_conda_zip(const fs::path& package, const std::string& stem,
                     std::vector<Finding>& findings) {
  archive::ZipReader zip = archive::ZipReader::open(package);
  const archive::ZipEntry* meta = zip.find("metadata.json");
  if (meta == nullptr) {
    findings.push_back({"metadata.json", "missing"});
  } else {
    json j = json::parse(zip.read_text(*meta), nullptr, false);
    if (!j.is_object() || !j.contains("conda_pkg_format_version") ||
        j["conda_pkg_format_version"] != 2) {
      findings.push_back(
          {"metadata.json", "conda_pkg_format_version is not 2"});
    }
  }
  std::set<std::string> expected = {"metadata.json", "pkg-" + stem + ".tar.zst",
                                    "info-" + stem + ".tar.zst"};
  for (const std::string& name : expected) {
    if (name != "metadata.json" && zip.find(name) == nullptr) {
      findings.push_back({name, "missing"});
    }
  }
  for (const archive::ZipEntry& e : zip.entries()) {
    if (expected.count(e.name) == 0) {
      findings.push_back({e.name, "unexpected member of a .conda"});
    }
  }
}

void check_index(const Contents& c, const std::string& stem,
                 std::vector<Finding>& findings) {
  auto it = c.info_text.find("info/index.json");
  if (it == c.info_text.end()) {
    findings.push_back({"info/index.json", "missing"});
    return;
  }
  json j = json::parse(it->second, nullptr, false);
  if (!j.is_object()) {
    findings.push_back({"info/index.json", "not a JSON object"});
    return;
  }
  bool complete = true;
  for (const char* key : {"name", "version", "build"}) {
    if (!j.contains(key) || !j[key].is_string()) {
      findings.push_back({"info/index.json", std::string("'") + key +
                                                 "' missing or not a string"});
      complete = false;
    }
  }
  if (!j.contains("build_number") || !j["build_number"].is_number_unsigned()) {
    findings.push_back(
        {"info/index.json", "'build_number' missing or not an integer"});
  }
  if (j.contains("depends") && !j["depends"].is_array()) {
    findings.push_back({"info/index.json", "'depends' is not an array"});
  }
  if (complete) {
    std::string expected = j["name"].get<std::string>() + "-" +
                           j["version"].get<std::string>() + "-" +
                           j["build"].get<std::string>();
    if (expected != stem) {
      findings.push_back({"info/index.json",
                          "name-version-build '" + expected +
                              "' does not match the file name '" + stem + "'"});
    }
  }
}

void check_paths(const Contents& c, std::vector<Finding>& findings) {
  std::vector<PathRecord> records;
  auto it = c.info_text.find("info/paths.json");
  bool have_paths = it != c.info_text.end();
  if (!have_paths) {
    findings.push_back({"info/paths.json", "missing"});
  } else {
    try {
      records = parse_paths_json(it->second, "info/paths.json");
    } catch (const Error& e) {
      findings.push_back({"info/paths.json", e.message()});
      have_paths = false;
    }
  }
  auto kind_of =
      [&](const std::string& p) -> std::optional<detail::MemberKind> {
    auto m = c.members.find(p);
    if (m == c.members.end()) return std::nullopt;
    TarKind k = m->second.kind;
    return detail::MemberKind{k, m->second.link_target};
  };

  std::set<std::string> listed;
  for (const PathRecord& r : records) {
    if (!listed.insert(r.path).second) {
      findings.push_back({r.path, "listed twice in info/paths.json"});
    }
    auto m = c.members.find(r.path);
    if (m == c.members.end()) {
      findings.push_back({r.path, "listed in info/paths.json but missing"});
      continue;
    }
    const Seen& s = m->second;
    TarKind want = r.type == PathType::hardlink   ? TarKind::file
                   : r.type == PathType::softlink ? TarKind::symlink
                                                  : TarKind::directory;
    if (s.kind != want) {
      findings.push_back(
          {r.path, std::string("paths.json says ") + path_type_name(r.type) +
                       ", member is a " + archive::tar_kind_name(s.kind)});
      continue;
    }
    if (r.type == PathType::hardlink) {
      if (s.size != r.size) {
        findings.push_back({r.path, "size " + std::to_string(s.size) +
                                        " but paths.json says " +
                                        std::to_string(r.size)});
      }
      if (!r.sha256.empty() && s.sha256 != r.sha256) {
        findings.push_back({r.path, "sha256 " + s.sha256 +
                                        " but paths.json says " + r.sha256});
      }
    } else if (r.type == PathType::softlink && !r.sha256.empty()) {
      // Producers differ: accept the target file's hash or the hash of the
      // link text.
      Sha256 h;
      h.update(s.link_target);
      std::string text_hash = Sha256::hex(h.finish());
      std::optional<std::string> file =
          detail::resolve_softlink(r.path, s.link_target, kind_of);
      std::string file_hash = file ? c.members.at(*file).sha256 : "";
      if (r.sha256 != text_hash && r.sha256 != file_hash) {
        findings.push_back({r.path, "softlink sha256 " + r.sha256 +
                                        " matches neither its target nor the"
                                        " link text"});
      }
    }
  }
  if (have_paths) {
    for (const auto& [path, s] : c.members) {
      if (detail::is_info_path(path) || s.kind == TarKind::directory) continue;
      if (listed.count(path) == 0) {
        findings.push_back({path, "member not listed in info/paths.json"});
      }
    }
  }

  auto files = c.info_text.find("info/files");
  if (files == c.info_text.end()) {
    findings.push_back({"info/files", "missing"});
    return;
  }
  std::set<std::string> in_files;
  std::istringstream lines(files->second);
  for (std::string line; std::getline(lines, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (!line.empty()) in_files.insert(line);
  }
  std::set<std::string> reference = listed;
  if (!have_paths) {
    for (const auto& [path, s] : c.members) {
      if (!detail::is_info_path(path) && s.kind != TarKind::directory) {
        reference.insert(path);
      }
    }
  }
  for (const std::string& p : in_files) {
    if (reference.count(p) == 0) {
      findings.push_back(
          {"info/files", p + ": listed but not in the package" +
                             std::string(have_paths ? "'s paths.json" : "")});
    }
  }
  for (const std::string& p : reference) {
    if (in_files.count(p) == 0) {
      findings.push_back({"info/files", p + ": missing from info/files"});
    }
  }
}

}  // namespace

std::vector<Finding> verify(const fs::path& package) {
  std::vector<Finding> findings;
  const std::string stem = stem_of(package);
  if (format_of(package) == PackageFormat::conda) {
    check_conda_zip(package, stem, findings);
  }
  Contents contents;
  detail::for_each_component(
      package, [&](archive::TarReader& reader, const std::string& component) {
        read_component(reader, component, contents, findings);
      });
  check_index(contents, stem, findings);
  check_paths(contents, findings);
  return findings;
}

}  // namespace libpkg::conda
