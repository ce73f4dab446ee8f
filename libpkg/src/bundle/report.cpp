// SPDX-License-Identifier: BSD-3-Clause
// The show report (JSON and text) and the repair plan's JSON/text forms.
// The JSON schemas are documented in docs/repair.md; change both together.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "libpkg/bundle/analyze.hpp"
#include "libpkg/bundle/repair.hpp"

using nlohmann::json;

namespace libpkg::bundle {
namespace {

json optional_string(const std::optional<std::string>& s) {
  return s ? json(*s) : json(nullptr);
}

json versions_json(const std::vector<abi::VersionRequirement>& reqs) {
  // Highest numeric version per prefix.
  std::map<std::string, abi::VersionTag> best;
  for (const auto& r : reqs) {
    auto tag = abi::parse_version_tag(r.version);
    if (!tag) continue;
    auto it = best.find(tag->prefix);
    if (it == best.end() || it->second < *tag) best[tag->prefix] = *tag;
  }
  json out = json::object();
  for (const auto& [prefix, tag] : best) out[prefix] = tag.version();
  return out;
}

json blocker_json(const deps::Blocker& b) {
  return {{"kind", deps::blocker_kind_name(b.kind)},
          {"file", b.file},
          {"detail", b.detail},
          {"from", b.from},
          {"symbols", b.symbols}};
}

json verdict_json(const deps::PolicyVerdict& v) {
  json blockers = json::array();
  for (const auto& b : v.blockers) blockers.push_back(blocker_json(b));
  return {{"satisfied", v.satisfied}, {"blockers", blockers}};
}

const deps::PolicyVerdict* find_verdict(const deps::Evaluation& e,
                                        const deps::Policy* p) {
  for (const auto& v : e.verdicts)
    if (v.policy == p) return &v;
  return nullptr;
}

std::string best_tag(const deps::Evaluation& e, const std::string& arch) {
  return e.best ? e.best->tag(arch) : "linux_" + arch;
}

// Why the wheel is not compatible as it is with the most compatible policy
// it reaches after repair (e.g. a libpython NEEDED, an external library):
// what `repair` fixes.
std::vector<const deps::Blocker*> fixed_by_repair(const WheelAnalysis& a) {
  std::vector<const deps::Blocker*> out;
  if (!a.after_repair.best || a.after_repair.best == a.as_is.best) return out;
  for (const auto& v : a.as_is.verdicts)
    if (v.policy == a.after_repair.best)
      for (const auto& b : v.blockers) out.push_back(&b);
  return out;
}

}  // namespace

std::string show_json(const WheelAnalysis& a, int indent) {
  json doc;
  doc["schema"] = "libpkg-show/1";
  doc["wheel"] = a.wheel.string();
  doc["name"] = a.name.distribution;
  doc["version"] = a.name.version;
  doc["arch"] = a.arch;
  doc["libc"] = deps::libc_name(a.libc);
  doc["libc_source"] = a.libc_source;
  doc["tags"] = {{"current", a.name.platform_tags},
                 {"as_is", best_tag(a.as_is, a.arch)},
                 {"after_repair", best_tag(a.after_repair, a.arch)}};
  json binaries = json::array();
  for (const auto& b : a.binaries) {
    json external = json::array();
    for (const auto& [soname, path] : b.facts.external)
      external.push_back({{"soname", soname},
                          {"path", path.empty() ? json(nullptr) : json(path)}});
    binaries.push_back({{"path", b.member},
                        {"extension", b.extension},
                        {"needed", b.needed},
                        {"rpath", optional_string(b.rpath)},
                        {"runpath", optional_string(b.runpath)},
                        {"external", external},
                        {"max_versions", versions_json(b.facts.versions)}});
  }
  doc["binaries"] = binaries;
  json externals = json::array();
  for (const auto& e : a.externals) {
    const bool graft = a.would_graft(e);
    externals.push_back(
        {{"soname", e.soname},
         {"path", e.path.string()},
         {"realpath", e.realpath.string()},
         {"needed_by",
          std::vector<std::string>(e.needed_by.begin(), e.needed_by.end())},
         {"graft", graft},
         {"included", e.included},
         {"max_versions", versions_json(e.facts.versions)}});
  }
  doc["external_libraries"] = externals;
  json missing = json::array();
  for (const auto& [soname, by] : a.missing)
    missing.push_back(
        {{"soname", soname},
         {"needed_by", std::vector<std::string>(by.begin(), by.end())}});
  doc["missing"] = missing;
  doc["excluded"] = a.excluded;
  json policies = json::array();
  for (const auto& v : a.as_is.verdicts) {
    const deps::PolicyVerdict* after = find_verdict(a.after_repair, v.policy);
    policies.push_back(
        {{"name", v.policy->name},
         {"tag", v.policy->tag(a.arch)},
         {"tags", v.policy->tags(a.arch)},
         {"as_is", verdict_json(v)},
         {"after_repair", after ? verdict_json(*after) : json(nullptr)}});
  }
  doc["policies"] = policies;
  json maxv = json::object();
  for (const auto& [prefix, r] : a.after_repair.max_versions)
    maxv[prefix] = {{"version", r.tag.version()},
                    {"file", r.file},
                    {"library", r.library},
                    {"symbols", r.symbols}};
  doc["max_versions"] = maxv;
  return doc.dump(indent);
}

std::string show_text(const WheelAnalysis& a) {
  std::string out;
  const std::string as_is = best_tag(a.as_is, a.arch);
  const std::string after = best_tag(a.after_repair, a.arch);
  out += fmt::format("{}: {} ELF file{} for {} ({}, from {})\n",
                     a.wheel.filename().string(), a.binaries.size(),
                     a.binaries.size() == 1 ? "" : "s", a.arch,
                     deps::libc_name(a.libc), a.libc_source);
  // auditwheel's sentence, word for word: scripts grep `auditwheel show`
  // output for it.
  out +=
      fmt::format("{} is consistent with the following platform tag: \"{}\".\n",
                  a.wheel.filename().string(), as_is);
  if (after != as_is) {
    out += fmt::format("after repair (bundling), it can be {}\n", after);
    auto fixed = fixed_by_repair(a);
    if (!fixed.empty()) out += fmt::format("not {} as it is:\n", after);
    for (std::size_t i = 0; i < fixed.size() && i < 8; ++i)
      out += "  " + fixed[i]->message() + "\n";
    if (fixed.size() > 8)
      out += fmt::format("  ... and {} more\n", fixed.size() - 8);
  }
  if (!a.after_repair.max_versions.empty()) {
    out += "highest versioned symbols needed:\n";
    for (const auto& [prefix, r] : a.after_repair.max_versions) {
      out += fmt::format("  {:<10} {} from {}, by {}", prefix, r.tag.version(),
                         r.library, r.file);
      if (!r.symbols.empty()) out += fmt::format(" ({})", r.symbols.front());
      out += "\n";
    }
  }
  std::vector<const ExternalLibrary*> grafts;
  for (const auto& e : a.externals)
    if (a.would_graft(e)) grafts.push_back(&e);
  if (!grafts.empty()) {
    out += "libraries outside the wheel that repair would bundle:\n";
    for (const auto* e : grafts)
      out += fmt::format("  {} => {} (needed by {})\n", e->soname,
                         e->path.string(), fmt::join(e->needed_by, ", "));
  } else {
    out += "no library outside the wheel needs bundling\n";
  }
  for (const auto& [soname, by] : a.missing)
    out += fmt::format("  {} => not found (needed by {})\n", soname,
                       fmt::join(by, ", "));
  // Why the more compatible tags are out of reach after repair: the
  // nearest one in full, the others as one line each.
  std::vector<const deps::PolicyVerdict*> blocked;
  for (const auto& v : a.after_repair.verdicts) {
    if (v.satisfied) break;
    blocked.push_back(&v);
  }
  if (!blocked.empty()) out += "more compatible tags and what blocks them:\n";
  for (std::size_t i = 0; i < blocked.size(); ++i) {
    const deps::PolicyVerdict& v = *blocked[i];
    const bool nearest = i + 1 == blocked.size();
    const std::size_t show = nearest ? 8 : 1;
    out += fmt::format("  {} ({} blocker{}):\n", v.policy->tag(a.arch),
                       v.blockers.size(), v.blockers.size() == 1 ? "" : "s");
    for (std::size_t j = 0; j < v.blockers.size() && j < show; ++j)
      out += "    " + v.blockers[j].message() + "\n";
    if (v.blockers.size() > show)
      out += fmt::format("    ... and {} more\n", v.blockers.size() - show);
  }
  return out;
}

std::string RepairPlan::to_json(int indent) const {
  json doc;
  doc["schema"] = "libpkg-repair-plan/1";
  doc["wheel"] = wheel.string();
  doc["output"] = output_name;
  doc["plat"] = policy;
  doc["tags"] = platform_tags;
  doc["graft_dir"] = graft_dir;
  json g = json::array();
  for (const auto& x : grafts)
    g.push_back({{"soname", x.soname},
                 {"source", x.source.string()},
                 {"member", x.member},
                 {"keep_name", x.keep_name},
                 {"sha256", x.sha256},
                 {"reason", x.reason},
                 {"needed_by", x.needed_by}});
  doc["grafts"] = g;
  json e = json::array();
  for (const auto& x : edits) {
    json rn = json::object();
    for (const auto& [from, to] : x.replace_needed) rn[from] = to;
    e.push_back({{"member", x.member},
                 {"graft", x.graft},
                 {"replace_needed", rn},
                 {"remove_needed", x.remove_needed},
                 {"set_soname", optional_string(x.set_soname)},
                 {"rpath", optional_string(x.rpath)},
                 {"rpath_tag",
                  x.rpath_tag == elf::RpathTag::runpath ? "runpath" : "rpath"},
                 {"why", x.why}});
  }
  doc["edits"] = e;
  doc["excluded"] = excluded;
  json m = json::array();
  for (const auto& [soname, by] : missing)
    m.push_back(
        {{"soname", soname},
         {"needed_by", std::vector<std::string>(by.begin(), by.end())}});
  doc["missing"] = m;
  doc["notes"] = notes;
  doc["strip"] = strip;
  doc["strip_flag"] = strip_flag;
  return doc.dump(indent);
}

std::string RepairPlan::to_text() const {
  std::string out;
  out += fmt::format("{} -> {}\n", wheel.filename().string(), output_name);
  out += fmt::format("target {} (tags {})\n", policy,
                     fmt::join(platform_tags, ", "));
  if (grafts.empty()) out += "nothing to bundle\n";
  for (const auto& g : grafts)
    out +=
        fmt::format("graft {} => {}  [{}; needed by {}]\n", g.source.string(),
                    g.member, g.reason, fmt::join(g.needed_by, ", "));
  for (const auto& e : edits) {
    std::vector<std::string> ops;
    if (e.set_soname) ops.push_back("SONAME " + *e.set_soname);
    for (const auto& [from, to] : e.replace_needed)
      ops.push_back(fmt::format("NEEDED {} -> {}", from, to));
    for (const auto& n : e.remove_needed) ops.push_back("remove NEEDED " + n);
    if (e.rpath)
      ops.push_back(e.rpath->empty()
                        ? std::string("remove RPATH/RUNPATH")
                        : fmt::format("{} {}",
                                      e.rpath_tag == elf::RpathTag::runpath
                                          ? "RUNPATH"
                                          : "RPATH",
                                      *e.rpath));
    if (ops.empty()) continue;
    out += fmt::format("edit {}: {}\n", e.member, fmt::join(ops, "; "));
  }
  for (const auto& x : excluded) out += "excluded " + x + "\n";
  for (const auto& n : notes) out += "note: " + n + "\n";
  return out;
}

}  // namespace libpkg::bundle
