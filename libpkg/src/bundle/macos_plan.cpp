// SPDX-License-Identifier: BSD-3-Clause
// plan_macos_repair: unpack the Mach-O members, resolve their closures with
// dyld's rules, decide what to bundle and how every reference and run path
// changes, and plan each edit (preflight and signature) before anything is
// written.
#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <tuple>

#include "bundle/macos_resolve.hpp"
#include "bundle/patterns.hpp"
#include "libpkg/archive/extract.hpp"
#include "libpkg/base/error.hpp"
#include "libpkg/base/result.hpp"
#include "libpkg/base/thread_pool.hpp"
#include "libpkg/bundle/macos_repair.hpp"
#include "libpkg/macho/editor.hpp"
#include "libpkg/macho/format.hpp"
#include "libpkg/macho/view.hpp"
#include "libpkg/wheel/wheel.hpp"

namespace fs = std::filesystem;
namespace lm = libpkg::macho;

namespace libpkg::bundle {
namespace {

bool is_macho_member(const archive::ZipReader& zip,
                     const archive::ZipEntry& entry) {
  // Smaller than a mach header: not a loadable image.
  if (entry.is_directory() || entry.is_symlink() ||
      entry.uncompressed_size < 28)
    return false;
  return lm::MachOFile::has_magic(zip.read_prefix(entry, 4));
}

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

// The minos of a slice as a tag version; none without a macOS platform
// command.
std::optional<wheel::MacosVersion> slice_minos(const lm::Slice& s) {
  auto pv = s.platform_version();
  if (!pv) return std::nullopt;
  // LC_BUILD_VERSION for another platform (iOS, ...) says nothing here.
  if (pv->command == lm::kLcBuildVersion && pv->platform != 1)
    return std::nullopt;
  return wheel::MacosVersion{pv->minos >> 16, (pv->minos >> 8) & 0xff};
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

class Planner {
 public:
  Planner(const fs::path& wheel, const MacosRepairOptions& options)
      : options_(options) {
    plan_.wheel = wheel;
    plan_.refs = options.refs;
    plan_.sign = options.sign;
  }

  MacosRepairPlan run() {
    open_wheel();
    unpack();
    graph_ = resolve_macos_closures(members_files(), resolve_options());
    choose_lib_dir();
    classify();
    check_missing();
    check_archs();
    plan_edits();
    retag();
    return std::move(plan_);
  }

 private:
  void open_wheel() {
    plan_.name = wheel::WheelName::parse(plan_.wheel.filename().string());
    plan_.zip = std::make_shared<archive::ZipReader>(
        archive::ZipReader::open(plan_.wheel));
    archive::check_member_names(*plan_.zip, /*allow_symlinks=*/true);
    plan_.dist_info = wheel::find_dist_info(*plan_.zip, plan_.name);
    plan_.scratch = std::make_shared<ScratchDir>(
        options_.scratch_parent.empty()
            ? ScratchDir::in_temp("libpkg-macos-repair-")
            : ScratchDir(options_.scratch_parent, ".libpkg-macos-repair-"));
    // Canonical, so paths dyld's rules reach through symlinked directories
    // are still recognised as the wheel's own.
    plan_.tree = fs::weakly_canonical(plan_.scratch->path()) / "wheel";
  }

  void unpack() {
    const archive::ZipReader& zip = *plan_.zip;
    std::set<const archive::ZipEntry*> wanted;
    for (const auto& e : zip.entries())
      if (is_macho_member(zip, e)) wanted.insert(&e);
    archive::ExtractOptions eo;
    eo.threads = options_.threads;
    eo.max_expansion = 0;  // the zip reader's limits apply
    eo.select = [&](const archive::ZipEntry& e) { return wanted.count(&e); };
    if (!wanted.empty()) archive::extract(zip, plan_.tree, eo);
    for (const auto& e : zip.entries()) {
      if (!wanted.count(&e)) continue;
      fs::path file = plan_.tree / e.name;
      // A fat magic is also Java's class-file magic: such a member that
      // does not parse is not a Mach-O file. Anything else is bad input.
      Result<lm::MachOFile> f = attempt({Errc::format, Errc::unsupported}, [&] {
        return lm::MachOFile::open(file);
      });
      if (!f) {
        auto head = zip.read_prefix(e, 4);
        if (head[0] == 0xca && head[1] == 0xfe) continue;
        throw Error(Errc::format, plan_.wheel.string(),
                    fmt::format("{}: {}", e.name, f.error().message()));
      }
      plan_.binaries.push_back(e.name);
      member_of_[fs::weakly_canonical(file).string()] = e.name;
    }
    if (plan_.binaries.empty())
      throw Error(Errc::usage, plan_.wheel.string(),
                  "no Mach-O files: a pure-Python wheel needs no repair");
    for (const auto& m : plan_.binaries) by_leaf_[leaf_of(m)].push_back(m);
  }

  std::vector<fs::path> members_files() const {
    std::vector<fs::path> out;
    for (const auto& m : plan_.binaries) out.push_back(plan_.tree / m);
    return out;
  }

  MacosResolveOptions resolve_options() const {
    MacosResolveOptions o;
    o.dyld.library_path = options_.dyld_library_path;
    o.dyld.executable_path = options_.executable_path;
    o.threads = options_.threads;
    return o;
  }

  void choose_lib_dir() {
    if (options_.lib_dir) {
      std::string d = *options_.lib_dir;
      while (!d.empty() && d.back() == '/') d.pop_back();
      fs::path p(d);
      if (d.empty() || p.is_absolute() ||
          std::any_of(p.begin(), p.end(),
                      [](const fs::path& c) { return c == ".." || c == "."; }))
        throw Error(Errc::usage, d,
                    "--lib-dir must be a relative directory inside the wheel");
      plan_.lib_dir = d;
      return;
    }
    // delocate's rule: the package named like the distribution, else the
    // first top-level package, else "<name>.dylibs" at the root.
    std::set<std::string> tops;
    for (const auto& e : plan_.zip->entries()) {
      auto slash = e.name.find('/');
      if (slash == std::string::npos) continue;
      std::string top = e.name.substr(0, slash);
      if (top == plan_.dist_info || top.ends_with(".data")) continue;
      tops.insert(top);
    }
    const std::string want =
        wheel::escape_distribution(plan_.name.distribution);
    std::string pkg;
    for (const auto& t : tops)
      if (wheel::escape_distribution(t) == want) pkg = t;
    if (pkg.empty() && !tops.empty()) pkg = *tops.begin();
    plan_.lib_dir =
        pkg.empty() ? want + options_.lib_sdir : pkg + "/" + options_.lib_sdir;
  }

  bool excluded(const std::string& install_name, const std::string& path) {
    if (options_.exclude.empty()) return false;
    if (matches_any(options_.exclude, install_name) ||
        matches_any(options_.exclude, leaf_of(install_name)) ||
        (!path.empty() && matches_any(options_.exclude, path))) {
      if (std::find(plan_.excluded.begin(), plan_.excluded.end(),
                    install_name) == plan_.excluded.end())
        plan_.excluded.push_back(install_name);
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
                Errc::format, plan_.wheel.string(),
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
              Errc::format, plan_.wheel.string(),
              fmt::format("two different libraries named {}: {} and {} "
                          "(one directory cannot hold both; --exclude one)",
                          leaf, it->second, *e.to));
        target_member_[*e.to] = plan_.lib_dir + "/" + leaf;
        grafted_.push_back(*e.to);
        queue.push_back(*e.to);
      }
    }
    for (const auto& real : redirected_) {
      const Users& u = users_.at(real);
      plan_.redirects.push_back(
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
      plan_.grafts.push_back(std::move(g));
    }
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
          plan_.notes.push_back("weak dependency not bundled: " + what);
          continue;
        }
        missing.push_back(what);
      }
    if (!missing.empty())
      throw Error(Errc::not_found, plan_.wheel.string(),
                  fmt::format("{} (use --dyld-library-path DIR, or --exclude "
                              "for a library another wheel provides)",
                              fmt::join(missing, "; ")));
  }

  std::vector<Node> nodes() const {
    std::vector<Node> out;
    for (const auto& m : plan_.binaries) out.push_back({m, plan_.tree / m});
    for (const auto& g : plan_.grafts)
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
    plan_.archs.assign(all.begin(), all.end());
    if (!lacking.empty())
      throw Error(Errc::format, plan_.wheel.string(),
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
                ? "already in the wheel"
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
    ThreadPool pool(options_.threads);
    pool.parallel_for(all.size(),
                      [&](std::size_t i) { edits[i] = plan_node(all[i]); });
    for (auto& e : edits)
      if (e) plan_.edits.push_back(std::move(*e));
  }

  std::optional<MacosFileEdit> plan_node(const Node& node) const {
    const std::string from = fs::weakly_canonical(node.file).string();
    lm::MachOFile file = lm::MachOFile::open(node.file);
    MacosFileEdit fe;
    fe.member = node.member;
    fe.graft = node.graft;
    fe.file = node.file;
    std::vector<lm::EditOptions> per_slice;
    bool any = false;
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
      any = any || !o.empty();
      per_slice.push_back(std::move(o));
    }
    if (!any) return std::nullopt;
    if (after != fe.rpaths_before) fe.rpaths_after = after;
    // One plan per slice (their run paths and references may differ); the
    // slices do not overlap, so their patches combine into one overlay.
    // A thin file's plan may grow it (an ad-hoc signature is appended).
    Overlay combined(file.bytes().size());
    for (const auto& o : per_slice) {
      if (o.empty()) continue;
      lm::EditPlan p = lm::plan_edit(file, o);
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

  void retag() {
    std::vector<wheel::MacosBinary> bins;
    for (const Node& n : nodes()) {
      lm::MachOFile f = lm::MachOFile::open(n.file);
      for (const auto& s : f.slices())
        if (s.parsed())
          if (auto v = slice_minos(s)) bins.push_back({n.member, s.arch(), *v});
    }
    if (bins.empty()) {
      plan_.platform_tags = plan_.name.platform_tags;
      plan_.notes.push_back(
          "no Mach-O file states a minimum macOS version: platform tags kept");
    } else {
      wheel::MacosTagOptions to;
      to.target = options_.target;
      wheel::MacosTagResult r =
          wheel::compute_macos_platform_tags(bins, to, plan_.wheel.string());
      plan_.platform_tags = r.platform_tags;
      plan_.arch_versions = r.arch_versions;
    }
    plan_.output_name =
        wheel::with_platform_tags(plan_.name, plan_.platform_tags).format();
  }

  const MacosRepairOptions& options_;
  MacosRepairPlan plan_;
  MacosGraph graph_;
  std::map<std::string, std::string> member_of_;  // canonical → member
  std::map<std::string, std::vector<std::string>> by_leaf_;
  std::set<std::string> reachable_;
  std::map<std::string, std::string> target_member_;  // external → member
  std::vector<std::string> grafted_, redirected_;     // in discovery order
  std::map<std::string, Users> users_;
};

}  // namespace

bool is_macos_wheel(const fs::path& wheel) {
  wheel::WheelName name = wheel::WheelName::parse(wheel.filename().string());
  return std::any_of(
      name.platform_tags.begin(), name.platform_tags.end(),
      [](const std::string& t) { return wheel::is_macos_platform_tag(t); });
}

MacosRepairPlan plan_macos_repair(const fs::path& wheel,
                                  const MacosRepairOptions& options) {
  return Planner(wheel, options).run();
}

}  // namespace libpkg::bundle
