// SPDX-License-Identifier: BSD-3-Clause
// plan_macos_closure: resolve the closures of a set of Mach-O files with
// dyld's rules, decide what to bundle and how every reference and run path
// changes, and plan each edit (preflight and signature) before anything is
// written. Where the files come from (a wheel unpacked to scratch, a
// libtorch tree) is the caller's business (macos_plan.cpp, macos_tree.cpp).
#include "bundle/macos_closure.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <tuple>

#include "bundle/macos_resolve.hpp"
#include "bundle/patterns.hpp"
#include "libpkg/archive/file_digest.hpp"
#include "libpkg/base/error.hpp"
#include "libpkg/base/sha256.hpp"
#include "libpkg/base/thread_pool.hpp"
#include "libpkg/deps/dyld.hpp"
#include "libpkg/macho/editor.hpp"
#include "libpkg/macho/format.hpp"
#include "libpkg/macho/view.hpp"

namespace fs = std::filesystem;
namespace lm = libpkg::macho;

namespace libpkg::bundle {
namespace {

std::string parent_of(const std::string& member) {
  auto slash = member.rfind('/');
  return slash == std::string::npos ? "" : member.substr(0, slash);
}

std::string leaf_of(const std::string& path) {
  return fs::path(path).filename().string();
}

// The directory `to_dir` relative to the directory of `from_member`, as a
// run path: "@loader_path" or "@loader_path/../.dylibs".
std::string loader_path_dir(const std::string& from_member,
                            const std::string& to_dir) {
  fs::path rel =
      fs::path("/" + to_dir)
          .lexically_normal()
          .lexically_relative(
              fs::path("/" + parent_of(from_member)).lexically_normal());
  std::string r = rel.generic_string();
  while (!r.empty() && r.back() == '/') r.pop_back();
  return r.empty() || r == "." ? "@loader_path" : "@loader_path/" + r;
}

std::vector<std::string> required_archs(const std::vector<std::string>& in) {
  std::set<std::string> out;
  for (const auto& a : in) {
    if (a == "universal2" || a == "intel") {
      out.insert("x86_64");
      if (a == "universal2") out.insert("arm64");
    } else {
      out.insert(a);
    }
  }
  return {out.begin(), out.end()};
}

// One file of the output that may need an edit: a wheel member or a graft.
struct Node {
  std::string member;
  fs::path file;
  bool graft = false;
  std::optional<std::string> id;  // grafts
};

class ClosurePlanner {
 public:
  ClosurePlanner(const MacosClosureInput& in, const MacosRepairOptions& options)
      : in_(in), options_(options) {}

  MacosClosure run() {
    for (const auto& m : in_.binaries) {
      member_of_[fs::weakly_canonical(in_.tree / m).string()] = m;
      by_leaf_[leaf_of(m)].push_back(m);
    }
    graph_ = resolve_macos_closures(members_files(), resolve_options());
    check_interpreter();
    classify();
    check_missing();
    check_archs();
    plan_edits();
    return std::move(out_);
  }

 private:
  std::vector<fs::path> members_files() const {
    std::vector<fs::path> out;
    for (const auto& m : in_.binaries) out.push_back(in_.tree / m);
    return out;
  }

  MacosResolveOptions resolve_options() const {
    MacosResolveOptions o;
    o.dyld.library_path = options_.dyld_library_path;
    o.dyld.executable_path = options_.executable_path;
    o.threads = options_.threads;
    o.pool = options_.pool;
    return o;
  }

  // The interpreter's library is never bundled (delocate copies the Python
  // framework into .dylibs, delocate#142): an extension that links it is
  // a build error, reported before anything else unless --exclude'd.
  void check_interpreter() {
    std::vector<std::string> linked;
    for (const auto& [path, member] : member_of_)
      for (const MacosEdge& e : graph_.edges_from(path)) {
        if (!deps::is_python_library(e.install_name)) continue;
        if (excluded(e.install_name, e.to ? *e.to : "")) continue;
        std::string what =
            fmt::format("{} ({}) links {}", member, e.arch, e.install_name);
        if (std::find(linked.begin(), linked.end(), what) == linked.end())
          linked.push_back(what);
      }
    if (!linked.empty())
      throw Error(Errc::format, in_.where,
                  fmt::format("{}: an extension module must not link the "
                              "Python interpreter's library (the "
                              "interpreter that imports it provides those "
                              "symbols; it is never bundled): relink with "
                              "-undefined dynamic_lookup, or --exclude it to "
                              "leave the reference as it is",
                              fmt::join(linked, "; ")));
  }

  bool excluded(const std::string& install_name, const std::string& path) {
    if (options_.exclude.empty()) return false;
    if (matches_any(options_.exclude, install_name) ||
        matches_any(options_.exclude, leaf_of(install_name)) ||
        (!path.empty() && matches_any(options_.exclude, path))) {
      if (std::find(out_.excluded.begin(), out_.excluded.end(), install_name) ==
          out_.excluded.end())
        out_.excluded.push_back(install_name);
      return true;
    }
    return false;
  }

  // Walks the reachable part of the graph from the wheel's members: each
  // library found outside the wheel is pointed at the wheel's own file of
  // that name (a redirect: never copied again, and what it needs does not
  // matter) or becomes a graft, whose own dependencies are followed.
  void classify() {
    std::vector<std::string> queue;
    for (const auto& [path, member] : member_of_) queue.push_back(path);
    std::set<std::string> seen(queue.begin(), queue.end());
    std::map<std::string, std::string> graft_by_leaf;  // leaf → realpath
    for (std::size_t next = 0; next < queue.size(); ++next) {
      const std::string from = queue[next];
      reachable_.insert(from);
      for (const MacosEdge& e : graph_.edges_from(from)) {
        if (!e.to || member_of_.count(*e.to)) continue;  // system or inside
        if (excluded(e.install_name, *e.to)) continue;
        note_user(*e.to, e.found, e.install_name, from);
        if (!seen.insert(*e.to).second) continue;
        const std::string leaf = leaf_of(e.found.string());
        auto in_wheel = by_leaf_.find(leaf);
        if (in_wheel != by_leaf_.end()) {
          if (in_wheel->second.size() > 1)
            throw Error(
                Errc::format, in_.where,
                fmt::format("{} needs {} and the wheel has {} members named "
                            "{} ({} and {}): cannot choose",
                            display(from), e.install_name,
                            in_wheel->second.size(), leaf, in_wheel->second[0],
                            in_wheel->second[1]));
          target_member_[*e.to] = in_wheel->second.front();
          redirected_.push_back(*e.to);
          continue;
        }
        auto [it, fresh] = graft_by_leaf.emplace(leaf, *e.to);
        if (!fresh)
          throw Error(
              Errc::format, in_.where,
              fmt::format("two different libraries named {}: {} and {} "
                          "(one directory cannot hold both; --exclude one)",
                          leaf, it->second, *e.to));
        target_member_[*e.to] = in_.lib_dir + "/" + leaf;
        grafted_.push_back(*e.to);
        queue.push_back(*e.to);
      }
    }
    for (const auto& real : redirected_) {
      const Users& u = users_.at(real);
      out_.redirects.push_back(
          {u.source, target_member_.at(real), u.needed_by});
    }
    for (const auto& real : grafted_) {
      const Users& u = users_.at(real);
      MacosGraft g;
      g.member = target_member_.at(real);
      g.name = leaf_of(g.member);
      g.source = u.source;
      g.realpath = real;
      g.id = options_.refs == MacosRefs::rpath ? "@rpath/" + g.name
                                               : "/DLC/" + g.member;
      g.install_names = u.install_names;
      g.needed_by = u.needed_by;
      out_.grafts.push_back(std::move(g));
    }
    // The SBOM names each graft by the hash of the file as found, memoized
    // under the file's identity as the Linux repair's graft names are.
    PoolRef pool(options_.pool, options_.threads);
    pool.parallel_for(out_.grafts.size(), [&](std::size_t i) {
      out_.grafts[i].sha256 = Sha256::hex(
          archive::file_digest(out_.grafts[i].realpath, options_.cache.get()));
    });
  }

  struct Users {
    fs::path source;
    std::vector<std::string> install_names, needed_by;
  };
  void note_user(const std::string& real, const fs::path& found,
                 const std::string& install_name, const std::string& from) {
    Users& u = users_[real];
    if (u.source.empty()) u.source = found;
    auto add = [](std::vector<std::string>& v, const std::string& s) {
      if (std::find(v.begin(), v.end(), s) == v.end()) v.push_back(s);
    };
    add(u.install_names, install_name);
    add(u.needed_by, display(from));
  }

  // A wheel file or a graft by its member name, anything else by its path.
  std::string display(const std::string& path) const {
    if (auto it = member_of_.find(path); it != member_of_.end())
      return it->second;
    if (std::find(grafted_.begin(), grafted_.end(), path) != grafted_.end())
      return target_member_.at(path);
    return path;
  }

  void check_missing() {
    std::vector<std::string> missing;
    for (const auto& from : reachable_)
      for (const MacosEdge& e : graph_.edges_from(from)) {
        if (e.to || e.status == deps::DyldStatus::system) continue;
        if (excluded(e.install_name, "")) continue;
        std::string what =
            e.status == deps::DyldStatus::wrong_arch
                ? fmt::format(
                      "{} ({}) needs {}: found only for other "
                      "architectures ({})",
                      display(from), e.arch, e.install_name,
                      fmt::join(e.tried, "; "))
                : fmt::format("{} ({}) needs {}: not found", display(from),
                              e.arch, e.install_name);
        if (e.kind == "weak") {
          out_.notes.push_back("weak dependency not bundled: " + what);
          continue;
        }
        missing.push_back(what);
      }
    if (!missing.empty())
      throw Error(Errc::not_found, in_.where,
                  fmt::format("{} (use --dyld-library-path DIR, or --exclude "
                              "for a library another wheel provides)",
                              fmt::join(missing, "; ")));
  }

  std::vector<Node> nodes() const {
    std::vector<Node> out;
    for (const auto& m : in_.binaries) out.push_back({m, in_.tree / m});
    for (const auto& g : out_.grafts)
      out.push_back({g.member, g.realpath, true, g.id});
    return out;
  }

  void check_archs() {
    const std::vector<std::string> need =
        required_archs(options_.require_archs);
    std::set<std::string> all;
    std::vector<std::string> lacking;
    for (const Node& n : nodes()) {
      lm::MachOFile f = lm::MachOFile::open(n.file);
      std::set<std::string> have;
      for (const auto& s : f.slices()) {
        std::string a = s.arch() == "arm64e" ? "arm64" : s.arch();
        have.insert(a);
        all.insert(a);
      }
      std::vector<std::string> absent;
      for (const auto& a : need)
        if (!have.count(a)) absent.push_back(a);
      if (!absent.empty())
        lacking.push_back(fmt::format("{} ({} only; needs {})", n.member,
                                      fmt::join(have, ","),
                                      fmt::join(absent, ",")));
    }
    out_.archs.assign(all.begin(), all.end());
    if (!lacking.empty())
      throw Error(Errc::format, in_.where,
                  fmt::format("--require-archs {}: {}",
                              fmt::join(options_.require_archs, ","),
                              fmt::join(lacking, "; ")));
  }

  // The new name of a reference from `node` to the library at `real`.
  std::string new_reference(const Node& node, const std::string& real) const {
    const std::string& target = target_member_.at(real);
    if (options_.refs == MacosRefs::rpath) return "@rpath/" + leaf_of(target);
    return loader_path_dir(node.member, parent_of(target)) + "/" +
           leaf_of(target);
  }

  // The edit of one slice of `node`; `why` collects the reasons.
  lm::EditOptions slice_edit(const Node& node, const lm::Slice& slice,
                             const std::string& from,
                             std::vector<std::string>& why) const {
    lm::EditOptions o;
    o.sign = options_.sign;
    o.archs = {slice.arch()};
    if (node.id && slice.id() && *slice.id() != *node.id) o.id = node.id;
    std::vector<std::string> wanted_rpaths;
    for (const MacosEdge& e : graph_.edges_from(from)) {
      if (e.arch != slice.arch() || !e.to) continue;
      auto t = target_member_.find(*e.to);
      if (t == target_member_.end()) continue;  // inside, system, excluded
      std::string to = new_reference(node, *e.to);
      if (to != e.install_name &&
          std::find(o.changes.begin(), o.changes.end(),
                    std::pair{e.install_name, to}) == o.changes.end()) {
        o.changes.emplace_back(e.install_name, to);
        why.push_back(fmt::format(
            "{} → {} ({})", e.install_name, to,
            std::find(redirected_.begin(), redirected_.end(), *e.to) !=
                    redirected_.end()
                ? "already in the " + in_.container
                : "bundled"));
      }
      if (options_.refs == MacosRefs::rpath) {
        std::string r = loader_path_dir(node.member, parent_of(t->second));
        if (std::find(wanted_rpaths.begin(), wanted_rpaths.end(), r) ==
            wanted_rpaths.end())
          wanted_rpaths.push_back(r);
      }
    }
    // Run paths: keep @-relative ones (once each), drop build-tree paths
    // unless asked to keep them, then add what the references need.
    std::vector<std::string> before, kept;
    for (const auto& r : slice.rpaths()) before.emplace_back(r.path);
    for (const auto& r : before) {
      bool keep = r.starts_with("@") || options_.keep_rpaths;
      if (!keep) {
        why.push_back("drop rpath " + r);
        continue;
      }
      if (std::find(kept.begin(), kept.end(), r) != kept.end()) {
        why.push_back("drop duplicate rpath " + r);
        continue;
      }
      kept.push_back(r);
    }
    std::vector<std::string> added;
    for (const auto& r : wanted_rpaths)
      if (std::find(kept.begin(), kept.end(), r) == kept.end()) {
        added.push_back(r);
        why.push_back("add rpath " + r);
      }
    if (kept == before) {
      o.add_rpaths = added;
    } else {
      o.delete_all_rpaths = true;
      o.add_rpaths = kept;
      o.add_rpaths.insert(o.add_rpaths.end(), added.begin(), added.end());
    }
    if (o.id) why.push_back("id " + *o.id);
    return o;
  }

  void plan_edits() {
    std::vector<Node> all = nodes();
    std::vector<std::optional<MacosFileEdit>> edits(all.size());
    PoolRef pool(options_.pool, options_.threads);
    pool.parallel_for(all.size(),
                      [&](std::size_t i) { edits[i] = plan_node(all[i]); });
    for (auto& e : edits)
      if (e) out_.edits.push_back(std::move(*e));
  }

  // The editor's errors name the file it read, a scratch copy for wheel
  // members: name the wheel (or tree) and the member instead.
  lm::EditPlan plan_named(const Node& node, const lm::MachOFile& file,
                          const lm::EditOptions& o) const {
    try {
      return lm::plan_edit(file, o);
    } catch (const Error& e) {
      std::string what = e.file();
      const std::string path = node.file.string();
      if (what.starts_with(path)) what = node.member + what.substr(path.size());
      throw Error(e.code(), in_.where,
                  fmt::format("{}: {}", what, e.message()));
    }
  }

  std::optional<MacosFileEdit> plan_node(const Node& node) const {
    const std::string from = fs::weakly_canonical(node.file).string();
    lm::MachOFile file = lm::MachOFile::open(node.file);
    MacosFileEdit fe;
    fe.member = node.member;
    fe.graft = node.graft;
    fe.file = node.file;
    std::vector<lm::EditOptions> per_slice;
    bool any = false, rpaths_changed = false;
    std::vector<std::string> after;
    for (const auto& s : file.slices()) {
      if (!s.parsed()) continue;
      for (const auto& r : s.rpaths())
        if (std::find(fe.rpaths_before.begin(), fe.rpaths_before.end(),
                      r.path) == fe.rpaths_before.end())
          fe.rpaths_before.emplace_back(r.path);
      std::vector<std::string> why;
      lm::EditOptions o = slice_edit(node, s, from, why);
      for (const auto& w : why)
        if (std::find(fe.why.begin(), fe.why.end(), w) == fe.why.end())
          fe.why.push_back(w);
      if (o.id) fe.id = o.id;
      for (const auto& c : o.changes)
        if (std::find(fe.changes.begin(), fe.changes.end(), c) ==
            fe.changes.end())
          fe.changes.push_back(c);
      std::vector<std::string> slice_after;
      if (!o.delete_all_rpaths)
        for (const auto& r : s.rpaths()) slice_after.emplace_back(r.path);
      slice_after.insert(slice_after.end(), o.add_rpaths.begin(),
                         o.add_rpaths.end());
      for (const auto& r : slice_after)
        if (std::find(after.begin(), after.end(), r) == after.end())
          after.push_back(r);
      rpaths_changed =
          rpaths_changed || o.delete_all_rpaths || !o.add_rpaths.empty();
      any = any || o.has_operations();
      per_slice.push_back(std::move(o));
    }
    if (!any) return std::nullopt;
    // rpaths_before lists each path once: a dropped duplicate changes the
    // run paths without changing that list.
    if (rpaths_changed) fe.rpaths_after = after;
    // One plan per slice (their run paths and references may differ); the
    // slices do not overlap, so their patches combine into one overlay.
    // A thin file's plan may grow it (an ad-hoc signature is appended).
    Overlay combined(file.bytes().size());
    for (const auto& o : per_slice) {
      if (!o.has_operations()) continue;
      lm::EditPlan p = plan_named(node, file, o);
      if (per_slice.size() == 1) {
        combined = std::move(p.overlay);
        break;
      }
      for (const Patch& patch : p.overlay.patches())
        combined.write(patch.offset, patch.bytes);
      combined.resize(std::max(combined.size(), p.overlay.size()));
    }
    fe.overlay = std::make_shared<const Overlay>(std::move(combined));
    return fe;
  }

  const MacosClosureInput& in_;
  const MacosRepairOptions& options_;
  MacosClosure out_;
  MacosGraph graph_;
  std::map<std::string, std::string> member_of_;  // canonical → member
  std::map<std::string, std::vector<std::string>> by_leaf_;
  std::set<std::string> reachable_;
  std::map<std::string, std::string> target_member_;  // external → member
  std::vector<std::string> grafted_, redirected_;     // in discovery order
  std::map<std::string, Users> users_;
};

}  // namespace

MacosClosure plan_macos_closure(const MacosClosureInput& in,
                                const MacosRepairOptions& options) {
  return ClosurePlanner(in, options).run();
}

}  // namespace libpkg::bundle
