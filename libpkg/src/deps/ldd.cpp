// SPDX-License-Identifier: BSD-3-Clause
#include "libpkg/deps/ldd.hpp"

#include <map>
#include <nlohmann/json.hpp>

#include "libpkg/elf/view.hpp"

namespace libpkg::deps {

namespace {

using Json = nlohmann::ordered_json;

Json path_list(const std::optional<std::string>& list) {
  Json out = Json::array();
  if (list)
    for (const auto& e : split_path_list(*list)) out.push_back(e);
  return out;
}

Json opt_path(const std::optional<std::filesystem::path>& p) {
  return p ? Json(p->string()) : Json(nullptr);
}

Json to_object(const LddReport& report) {
  const LddTree& tree = report.tree;
  Json j;
  j["path"] = tree.path.string();
  std::error_code ec;
  auto real = std::filesystem::canonical(tree.path, ec);
  j["realpath"] = ec ? tree.path.string() : real.string();
  j["interp"] = tree.interpreter ? Json(*tree.interpreter) : Json(nullptr);
  j["libc"] = libc_name(report.libc);
  j["needed"] = tree.needed;
  j["rpath"] = path_list(tree.rpath);
  j["runpath"] = path_list(tree.runpath);
  Json libs = Json::object();
  for (const auto& lib : tree.libraries) {
    Json l;
    l["path"] = opt_path(lib.path);
    l["realpath"] = opt_path(lib.realpath);
    l["via"] = found_via_name(lib.via);
    l["search_dir"] = lib.search_dir;
    l["needed_by"] = lib.needed_by;
    l["needed"] = lib.needed;
    l["rpath"] = path_list(lib.rpath);
    l["runpath"] = path_list(lib.runpath);
    Json skipped = Json::array();
    for (const auto& s : lib.skipped)
      skipped.push_back({{"path", s.path.string()}, {"reason", s.reason}});
    l["skipped"] = skipped;
    libs[lib.soname] = l;
  }
  j["libs"] = libs;  // ordered_json: load order, not sorted
  j["missing"] = tree.missing();
  return j;
}

}  // namespace

std::vector<LddReport> ldd(const std::vector<std::filesystem::path>& files,
                           const SearchConfig& config,
                           std::optional<Libc> force_libc) {
  // Each resolver reads the system configuration (ld.so.conf, the musl path
  // file) once, so files that share a libc share one.
  std::map<Libc, Resolver> resolvers;
  std::vector<LddReport> out;
  out.reserve(files.size());
  for (const auto& file : files) {
    // Read once: for its libc, then resolved from the same mapping.
    const elf::ElfFile root =
        config.open_elf ? config.open_elf(file) : elf::ElfFile::open(file);
    Libc libc = force_libc ? *force_libc : libc_of(root).value_or(Libc::glibc);
    auto it = resolvers.find(libc);
    if (it == resolvers.end()) {
      SearchConfig c = config;
      c.libc = libc;
      it = resolvers.emplace(libc, Resolver(std::move(c))).first;
    }
    out.push_back({it->second.tree(root, file), libc});
  }
  return out;
}

std::string to_json(const LddReport& report, int indent) {
  return to_object(report).dump(indent);
}

std::string to_json(const std::vector<LddReport>& reports, int indent) {
  if (reports.size() == 1) return to_json(reports.front(), indent);
  Json all = Json::array();
  for (const auto& r : reports) all.push_back(to_object(r));
  return all.dump(indent);
}

}  // namespace libpkg::deps
