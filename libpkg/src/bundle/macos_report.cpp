// SPDX-License-Identifier: BSD-3-Clause
// The macOS repair plan as JSON (schema libpkg-macos-repair-plan/1, in
// docs/repair.md; change both together) and as text.
#include "bundle/macos_report.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "libpkg/bundle/macos_repair.hpp"

using nlohmann::json;

namespace libpkg::bundle {

namespace {

const char* refs_name(MacosRefs r) {
  return r == MacosRefs::rpath ? "rpath" : "loader-path";
}

}  // namespace

json macos_closure_json(const std::vector<MacosGraft>& grafts,
                        const std::vector<MacosRedirect>& redirects,
                        const std::vector<MacosFileEdit>& edits,
                        const std::vector<std::string>& excluded,
                        const std::vector<std::string>& notes) {
  json doc;
  json g = json::array();
  for (const auto& x : grafts)
    g.push_back({{"name", x.name},
                 {"source", x.source.string()},
                 {"realpath", x.realpath.string()},
                 {"member", x.member},
                 {"id", x.id},
                 {"install_names", x.install_names},
                 {"needed_by", x.needed_by},
                 {"sha256", x.sha256}});
  doc["grafts"] = g;
  json r = json::array();
  for (const auto& x : redirects)
    r.push_back({{"source", x.source.string()},
                 {"member", x.member},
                 {"needed_by", x.needed_by}});
  doc["redirects"] = r;
  json e = json::array();
  for (const auto& x : edits) {
    json changes = json::array();
    for (const auto& [from, to] : x.changes) changes.push_back({from, to});
    e.push_back({{"member", x.member},
                 {"graft", x.graft},
                 {"id", x.id ? json(*x.id) : json(nullptr)},
                 {"changes", changes},
                 {"rpaths_before", x.rpaths_before},
                 {"rpaths_after",
                  x.rpaths_after ? json(*x.rpaths_after) : json(nullptr)},
                 {"why", x.why}});
  }
  doc["edits"] = e;
  doc["excluded"] = excluded;
  doc["notes"] = notes;
  return doc;
}

std::string MacosRepairPlan::to_json(int indent) const {
  json doc;
  doc["schema"] = "libpkg-macos-repair-plan/1";
  doc["wheel"] = wheel.string();
  doc["output"] = output_name;
  doc["tags"] = platform_tags;
  json versions = json::object();
  for (const auto& [arch, v] : arch_versions) versions[arch] = v.str();
  doc["arch_versions"] = versions;
  doc["archs"] = archs;
  doc["lib_dir"] = lib_dir;
  doc["refs"] = refs_name(refs);
  doc.update(macos_closure_json(grafts, redirects, edits, excluded, notes));
  doc["sign"] = sign;
  return doc.dump(indent);
}

std::string MacosRepairPlan::to_text() const {
  std::string out =
      fmt::format("{} → {}\n", wheel.filename().string(), output_name);
  out += fmt::format("  tags: {}; archs: {}; refs: {}\n",
                     fmt::join(platform_tags, "."), fmt::join(archs, ","),
                     refs_name(refs));
  for (const auto& g : grafts)
    out += fmt::format("  bundle {} → {} (needed by {})\n", g.source.string(),
                       g.member, fmt::join(g.needed_by, ", "));
  for (const auto& r : redirects)
    out +=
        fmt::format("  already in the wheel: {} → {} (needed by {})\n",
                    r.source.string(), r.member, fmt::join(r.needed_by, ", "));
  for (const auto& e : edits)
    out += fmt::format("  edit {}: {}\n", e.member, fmt::join(e.why, "; "));
  for (const auto& x : excluded) out += fmt::format("  excluded {}\n", x);
  for (const auto& n : notes) out += fmt::format("  note: {}\n", n);
  return out;
}

}  // namespace libpkg::bundle
