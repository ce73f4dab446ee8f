// SPDX-License-Identifier: BSD-3-Clause
// plan_repair: decides the target tag, the grafts and every file's edits.
#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "bundle/patterns.hpp"
#include "libpkg/archive/file_digest.hpp"
#include "libpkg/base/error.hpp"
#include "libpkg/base/sha256.hpp"
#include "libpkg/base/thread_pool.hpp"
#include "libpkg/bundle/repair.hpp"
#include "libpkg/deps/resolve.hpp"

namespace fs = std::filesystem;

namespace libpkg::bundle {

std::vector<std::string> default_keep_names() {
  return {"libnvrtc-builtins*", "libcudnn*", "libcublas*"};
}

namespace {

std::string parent_dir(const std::string& member) {
  auto slash = member.rfind('/');
  return slash == std::string::npos ? "" : member.substr(0, slash);
}

}  // namespace

// Split at the first dot, as auditwheel and the PyTorch scripts do.
std::string hashed_name(const std::string& soname, const std::string& sha) {
  const std::string h8 = sha.substr(0, 8);
  const auto dot = soname.find('.');
  std::string stem = soname.substr(0, dot);
  std::string rest = dot == std::string::npos ? "" : soname.substr(dot);
  if (stem.ends_with("-" + h8)) return soname;
  return stem + "-" + h8 + rest;
}

std::string origin_relative(const std::string& member, const std::string& dir) {
  const std::string from = parent_dir(member);
  fs::path rel = fs::path(dir).lexically_relative(from.empty() ? "." : from);
  std::string r = rel.generic_string();
  if (r.empty() || r == ".") return "$ORIGIN";
  return "$ORIGIN/" + r;
}

namespace {

std::string describe_blockers(const deps::PolicyVerdict& verdict,
                              std::size_t max) {
  std::string out;
  for (std::size_t i = 0; i < verdict.blockers.size() && i < max; ++i)
    out += "\n  " + verdict.blockers[i].message();
  if (verdict.blockers.size() > max)
    out += fmt::format("\n  ... and {} more", verdict.blockers.size() - max);
  return out;
}

class Planner {
 public:
  Planner(const WheelAnalysis& a, const RepairOptions& o) : a_(a), o_(o) {}

  RepairPlan run() {
    check_rpath_first();
    plan_.wheel = a_.wheel;
    decide_strip();
    plan_.excluded = a_.excluded;
    // Missing libraries first: that error is more precise than "no policy
    // admits the wheel", which they would cause.
    check_missing();
    choose_target();
    choose_grafts();
    plan_binary_edits();
    plan_graft_edits();
    name_output();
    return std::move(plan_);
  }

 private:
  const deps::PolicyVerdict* verdict_for(const deps::Policy* p) const {
    for (const auto& v : a_.after_repair.verdicts)
      if (v.policy == p) return &v;
    return nullptr;
  }

  void choose_target() {
    const std::string& plat = o_.plat;
    const deps::Policy* best = a_.after_repair.best;
    const bool auto_plat = plat == "auto" || plat.empty();
    if (auto_plat) {
      target_ = best;
    } else {
      target_ = a_.policies->find(plat);
      if (!target_)
        throw Error(Errc::usage, plat,
                    "unknown platform tag (expected a manylinux/musllinux "
                    "policy name or alias, 'linux' or 'auto')");
      // An arch suffix must name the wheel's arch.
      for (const char* arch : {"x86_64", "i686", "aarch64", "ppc64le", "ppc64",
                               "s390x", "armv7l", "riscv64", "loongarch64"})
        if (plat.ends_with(std::string("_") + arch) && arch != a_.arch &&
            !plat.ends_with("_" + a_.arch))
          throw Error(Errc::usage, a_.wheel.string(),
                      fmt::format("--plat {} is for {}, but the wheel's "
                                  "binaries are {}",
                                  plat, arch, a_.arch));
    }
    if (!target_)
      throw Error(Errc::usage, a_.wheel.string(), "no policy applies");
    if (target_->priority > 0 && target_->libc != a_.libc)
      throw Error(
          Errc::usage, a_.wheel.string(),
          fmt::format("--plat {}: the wheel's binaries use {} (decided from "
                      "{})",
                      target_->name, deps::libc_name(a_.libc), a_.libc_source));
    const deps::PolicyVerdict* v = verdict_for(target_);
    if (v && !v->satisfied)
      throw Error(
          Errc::usage, a_.wheel.string(),
          fmt::format("cannot repair to {}: the wheel needs more than "
                      "it allows (the most compatible reachable tag "
                      "is {}):{}",
                      target_->tag(a_.arch), best ? best->tag(a_.arch) : "none",
                      describe_blockers(*v, 8)));
    plan_.policy = target_->name;
    if (auto_plat && target_->priority == 0) refuse_unrepairable();
    if (target_->priority == 0 && best && best->priority == 0) {
      // Nothing better than linux_<arch> is reachable: say why (one note,
      // for the most permissive policy, the last of the family; earlier
      // notes are kept).
      const auto earlier = static_cast<std::ptrdiff_t>(plan_.notes.size());
      for (const auto& verdict : a_.after_repair.verdicts)
        if (!verdict.satisfied && verdict.policy->priority > 0) {
          plan_.notes.push_back(
              fmt::format("no manylinux tag is reachable; even the most "
                          "permissive policy, {}, is blocked by:{}",
                          verdict.policy->name, describe_blockers(verdict, 5)));
        }
      if (plan_.notes.size() > static_cast<std::size_t>(earlier) + 1)
        plan_.notes.erase(plan_.notes.begin() + earlier, plan_.notes.end() - 1);
    }
    std::vector<std::string> tags = target_->tags(a_.arch);
    if (!o_.only_plat && best && best->priority > target_->priority)
      for (auto& t : best->tags(a_.arch)) tags.push_back(t);
    std::sort(tags.begin(), tags.end());
    tags.erase(std::unique(tags.begin(), tags.end()), tags.end());
    if (!o_.update_tags) tags = a_.name.platform_tags;
    plan_.platform_tags = tags;
  }

  // `--plat auto` on a wheel no policy admits even after bundling
  // (too-recent symbol versions, black-listed symbols, Python ABI): exit 2
  // naming the blockers of the most permissive policy (the newest: what
  // still blocks it blocks every other), as auditwheel does.
  // `--plat linux` asks for the linux_<arch> wheel explicitly. With
  // --ignore-missing, missing libraries alone don't make it unrepairable:
  // the user chose to ship without them.
  void refuse_unrepairable() const {
    // Verdicts run from the most compatible policy to the most permissive.
    const deps::PolicyVerdict* least = nullptr;
    for (const auto& verdict : a_.after_repair.verdicts)
      if (verdict.policy->priority > 0) least = &verdict;
    if (!least) return;  // no policy of this family covers the arch
    if (o_.ignore_missing &&
        std::all_of(least->blockers.begin(), least->blockers.end(),
                    [](const deps::Blocker& b) {
                      return b.kind == deps::BlockerKind::missing_library;
                    }))
      return;
    throw Error(Errc::usage, a_.wheel.string(),
                fmt::format("no platform policy admits this wheel, even "
                            "after bundling; even the most permissive, {}, "
                            "is blocked by:{}\n(--plat linux writes a "
                            "linux_{} wheel anyway)",
                            least->policy->tag(a_.arch),
                            describe_blockers(*least, 8), a_.arch));
  }

  // Relative rpath_first entries must name directories of the install
  // root: no way out of it, no $ORIGIN (they are made relative here).
  void check_rpath_first() const {
    for (const auto& dir : o_.rpath_first) {
      if (dir.starts_with("/")) continue;
      const std::string norm =
          fs::path(dir).lexically_normal().generic_string();
      if (dir.empty() || dir.find('$') != std::string::npos ||
          norm.starts_with("..") || norm == ".")
        throw Error(Errc::usage, dir.empty() ? "''" : dir,
                    "a first search-path entry must be an absolute path or a "
                    "directory of the install root (e.g. nvidia/cublas/lib)");
    }
  }

  const RepairOptions::IncludeRule* include_rule(
      const ExternalLibrary& ext) const {
    for (const auto& r : o_.include_rules)
      if (glob_match(r.match, ext.soname) ||
          glob_match(r.match, ext.path.string()) ||
          glob_match(r.match, ext.realpath.string()))
        return &r;
    return nullptr;
  }

  void check_missing() {
    if (a_.missing.empty()) return;
    if (o_.ignore_missing) {
      plan_.missing = a_.missing;
      for (const auto& [soname, by] : a_.missing)
        plan_.notes.push_back(
            fmt::format("{} (needed by {}) was not found and is not bundled",
                        soname, fmt::join(by, ", ")));
      return;
    }
    std::string what;
    for (const auto& [soname, by] : a_.missing)
      what += fmt::format("\n  {} needs {}, which was not found",
                          fmt::join(by, ", "), soname);
    throw Error(Errc::not_found, a_.wheel.string(),
                "dependencies not found (add their directory with "
                "--lib-path or LD_LIBRARY_PATH, exclude them with "
                "--exclude, or pass --ignore-missing):" +
                    what);
  }

  bool target_allows(std::string_view soname) const {
    // "linux" has no whitelist: bundle what no policy of the family allows.
    if (target_->lib_whitelist.empty()) {
      for (const deps::Policy* p : a_.policies->family(a_.libc))
        if (p->allows_library(soname)) return true;
      return false;
    }
    return target_->allows_library(soname);
  }

  void choose_grafts() {
    plan_.graft_dir =
        o_.lib_dir ? *o_.lib_dir : a_.name.distribution + o_.lib_sdir;
    while (plan_.graft_dir.ends_with("/")) plan_.graft_dir.pop_back();
    if (plan_.graft_dir.empty() || plan_.graft_dir.starts_with("/") ||
        plan_.graft_dir.find("..") != std::string::npos)
      throw Error(Errc::usage, plan_.graft_dir,
                  "the graft directory must be a relative path inside the "
                  "wheel");
    std::vector<const ExternalLibrary*> chosen;
    for (const auto& ext : a_.externals) {
      if (is_libpython(ext.soname)) continue;
      if (!ext.included && target_allows(ext.soname)) continue;
      chosen.push_back(&ext);
    }
    std::vector<std::string> sha(chosen.size());
    PoolRef pool(o_.pool, o_.threads);
    pool.parallel_for(chosen.size(), [&](std::size_t i) {
      sha[i] = Sha256::hex(
          archive::file_digest(chosen[i]->realpath, o_.cache.get()));
    });
    std::set<std::string> members;
    for (const auto& e : a_.zip->entries()) members.insert(e.name);
    for (std::size_t i = 0; i < chosen.size(); ++i) {
      const ExternalLibrary& ext = *chosen[i];
      Graft g;
      g.soname = ext.soname;
      g.source = ext.path;
      g.sha256 = sha[i];
      const RepairOptions::IncludeRule* rule =
          ext.included ? include_rule(ext) : nullptr;
      g.keep_name = (ext.included && !(rule && rule->rename)) ||
                    matches_any(o_.keep_names, ext.soname);
      g.new_soname = g.keep_name ? ext.soname : hashed_name(ext.soname, sha[i]);
      g.member = plan_.graft_dir + "/" + g.new_soname;
      if (rule && !rule->reason.empty())
        g.reason = rule->reason;
      else if (ext.included)
        g.reason = "--include (loaded with dlopen; keeps its name)";
      else
        g.reason = fmt::format("not allowed by {}", target_->name);
      g.needed_by.assign(ext.needed_by.begin(), ext.needed_by.end());
      if (members.count(g.member))
        throw Error(Errc::usage, a_.wheel.string(),
                    fmt::format("cannot graft {} as {}: the wheel already has "
                                "a member of that name",
                                ext.soname, g.member));
      renamed_[g.soname] = g.new_soname;
      plan_.grafts.push_back(std::move(g));
    }
  }

  bool any_included() const {
    for (const auto& g : plan_.grafts)
      if (g.keep_name && a_.external(g.soname)->included) return true;
    return false;
  }

  // Whether the output wheel has the graft directory.
  bool graft_dir_present() const {
    if (!plan_.grafts.empty()) return true;
    const std::string prefix = plan_.graft_dir + "/";
    for (const auto& e : a_.zip->entries())
      if (e.name.starts_with(prefix)) return true;
    return false;
  }

  // rpath_first, then existing entries that resolve inside the wheel, then
  // the graft dir (when `graft_dir`).
  std::string new_rpath(const PackageBinary& b, bool graft_dir) const {
    const std::string old = b.runpath ? *b.runpath : b.rpath.value_or("");
    const fs::path& root = a_.tree;
    const std::string origin = b.file.parent_path().string();
    std::vector<std::string> kept;
    for (const auto& dir : o_.rpath_first) {
      std::string entry =
          dir.starts_with("/") ? dir : origin_relative(b.member, dir);
      if (std::find(kept.begin(), kept.end(), entry) == kept.end())
        kept.push_back(entry);
    }
    for (const auto& entry : deps::split_path_list(old)) {
      if (entry.empty()) continue;
      fs::path dir =
          fs::path(deps::expand_dst(entry, origin, "", "")).lexically_normal();
      std::string rel = dir.lexically_relative(root).generic_string();
      if (!rel.empty() && !rel.starts_with("..") && dir.is_absolute() &&
          std::find(kept.begin(), kept.end(), entry) == kept.end())
        kept.push_back(entry);
    }
    std::string graft = origin_relative(b.member, plan_.graft_dir);
    if (graft_dir && std::find(kept.begin(), kept.end(), graft) == kept.end())
      kept.push_back(graft);
    return fmt::format("{}", fmt::join(kept, ":"));
  }

  void plan_binary_edits() {
    const bool dlopen_grafts = any_included();
    const bool everywhere = o_.rpath_all || !o_.rpath_first.empty();
    const bool graft_dir = graft_dir_present();
    for (const auto& b : a_.binaries) {
      FileEdit e;
      e.member = b.member;
      e.rpath_tag = o_.rpath_tag;
      bool needs_graft_dir = false;
      for (const auto& n : b.needed) {
        if (is_libpython(n)) {
          e.remove_needed.push_back(n);
          e.why.push_back(
              fmt::format("{}: libpython is provided by the interpreter", n));
          continue;
        }
        auto it = renamed_.find(n);
        if (it == renamed_.end()) continue;
        needs_graft_dir = true;
        if (it->second != n) e.replace_needed[n] = it->second;
      }
      if (dlopen_grafts && b.imports_dlopen && !needs_graft_dir) {
        needs_graft_dir = true;
        e.why.push_back("imports dlopen and --include grafted libraries");
      }
      if (needs_graft_dir || everywhere) {
        std::string rp = new_rpath(b, needs_graft_dir || graft_dir);
        const auto& current =
            o_.rpath_tag == elf::RpathTag::runpath ? b.runpath : b.rpath;
        const bool other_tag = o_.rpath_tag == elf::RpathTag::runpath
                                   ? b.rpath.has_value()
                                   : b.runpath.has_value();
        const bool unchanged =
            rp.empty() ? !b.rpath && !b.runpath : current == rp && !other_tag;
        if (!unchanged) {
          e.rpath = rp;
          e.why.push_back(!o_.rpath_first.empty()
                              ? "search path: the first entries, then the "
                                "graft directory"
                          : needs_graft_dir
                              ? "search path to the graft directory"
                              : "search path of every file: entries inside "
                                "the wheel and the graft directory");
        }
      }
      if (!e.replace_needed.empty())
        e.why.push_back("NEEDED renamed to the grafted copies");
      if (e.replace_needed.empty() && e.remove_needed.empty() && !e.rpath)
        continue;
      plan_.edits.push_back(std::move(e));
    }
  }

  void plan_graft_edits() {
    for (const auto& g : plan_.grafts) {
      const ExternalLibrary& ext = *a_.external(g.soname);
      FileEdit e;
      e.member = g.member;
      e.graft = true;
      e.rpath_tag = o_.rpath_tag;
      if (!g.keep_name) {
        e.set_soname = g.new_soname;
        e.why.push_back("SONAME matches the grafted file name");
      }
      bool needs_grafts = false;
      for (const auto& n : ext.needed) {
        if (is_libpython(n)) {
          e.remove_needed.push_back(n);
          continue;
        }
        auto it = renamed_.find(n);
        if (it == renamed_.end()) continue;
        needs_grafts = true;
        if (it->second != n) e.replace_needed[n] = it->second;
      }
      elf::ElfFile lib = elf::ElfFile::open(ext.realpath);
      const bool has_path = lib.rpath() || lib.runpath();
      // auditwheel's rule before 6.7: a graft that had a search path gets
      // $ORIGIN in its place (its build-time entries would leak), so what it
      // loads by name from its own directory (cuDNN dlopens
      // libcudnn_graph.so.9 & co.) is still found once it sits next to them.
      // auditwheel 6.7 clears it instead (found then only through the
      // DT_RPATH of whatever loaded the library, if at all). With
      // rpath_all every graft gets it, as build_common.sh gave $ORIGIN to
      // every library of lib/.
      if (needs_grafts) {
        e.rpath = "$ORIGIN";
        e.why.push_back("finds the other grafted libraries next to it");
      } else if (has_path) {
        e.rpath = "$ORIGIN";
        e.why.push_back(
            "its build-time search path becomes $ORIGIN (what it loads by "
            "name from its own directory is found next to it)");
      } else if (o_.rpath_all || !o_.rpath_first.empty()) {
        e.rpath = "$ORIGIN";
        e.why.push_back("search path of every file: $ORIGIN for a graft");
      }
      plan_.edits.push_back(std::move(e));
    }
  }

  // auditwheel's --strip-level; its deprecated --strip is `all`.
  void decide_strip() {
    static const std::map<std::string, std::string> kFlags = {
        {"none", ""},
        {"debug", "-g"},
        {"unneeded", "--strip-unneeded"},
        {"all", "-s"}};
    auto it = kFlags.find(o_.strip_level);
    if (it == kFlags.end())
      throw Error(Errc::usage, a_.wheel.string(),
                  fmt::format("invalid strip level '{}' (none, debug, "
                              "unneeded, all)",
                              o_.strip_level));
    if (o_.strip && o_.strip_level != "none")
      throw Error(Errc::usage, a_.wheel.string(),
                  "Cannot specify both --strip and --strip-level");
    plan_.strip_flag = o_.strip ? "-s" : it->second;
    plan_.strip = !plan_.strip_flag.empty();
  }

  void name_output() {
    wheel::WheelName out = a_.name;
    out.platform_tags = plan_.platform_tags;
    plan_.output_name = out.format();
  }

  const WheelAnalysis& a_;
  const RepairOptions& o_;
  RepairPlan plan_;
  const deps::Policy* target_ = nullptr;
  std::map<std::string, std::string> renamed_;  // soname → grafted name
};

}  // namespace

RepairPlan plan_repair(const WheelAnalysis& analysis,
                       const RepairOptions& options) {
  return Planner(analysis, options).run();
}

}  // namespace libpkg::bundle
