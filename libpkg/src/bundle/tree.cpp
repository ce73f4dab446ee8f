// SPDX-License-Identifier: BSD-3-Clause
// plan_tree_bundle / apply_tree_bundle / stage_tree: see bundle/tree.hpp.
#include "libpkg/bundle/tree.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <nlohmann/json.hpp>

#include "bundle/patterns.hpp"
#include "libpkg/archive/file_digest.hpp"
#include "libpkg/base/atomic_file.hpp"
#include "libpkg/base/error.hpp"
#include "libpkg/base/fd.hpp"
#include "libpkg/base/sha256.hpp"
#include "libpkg/elf/sniff.hpp"

namespace fs = std::filesystem;

namespace libpkg::bundle {
namespace {

bool is_elf_file(const fs::path& p) {
  return elf::sniff_elf_file(p).has_value();
}

struct TreeElf {
  std::string rel;  // generic path relative to the tree
  fs::path path;
  std::vector<std::string> needed;
  std::optional<std::string> rpath, runpath, soname;
};

std::string join(const std::vector<std::string>& parts, std::string_view sep) {
  std::string out;
  for (const auto& p : parts) {
    if (!out.empty()) out += sep;
    out += p;
  }
  return out;
}

std::optional<std::string> opt_string(std::optional<std::string_view> v) {
  return v ? std::optional<std::string>(std::string(*v)) : std::nullopt;
}

bool inside(const fs::path& p, const fs::path& root) {
  fs::path rel = p.lexically_normal().lexically_relative(root);
  return !rel.empty() && *rel.begin() != "..";
}

class TreePlanner {
 public:
  TreePlanner(const fs::path& tree, const TreeBundleOptions& o)
      : o_(o), resolver_(o.search) {
    plan_.tree = tree;
    plan_.lib_dir = o.lib_dir;
    plan_.rpath_tag = o.rpath_tag;
  }

  TreeBundlePlan run() {
    const fs::path lib = plan_.tree / o_.lib_dir;
    require_directory(plan_.tree, "tree");
    if (!fs::is_directory(lib))
      throw Error(
          Errc::usage, plan_.tree.string(),
          fmt::format("no {}/ directory to bundle libraries into", o_.lib_dir));
    scan();
    choose_policy();
    for (const TreeElf& e : elfs_) resolve(e.path, e.rel);
    for (const TreeLibraryRequest& r : o_.include) request(r);
    report_missing();
    name_grafts();
    plan_edits();
    return std::move(plan_);
  }

 private:
  void scan() {
    for (auto it = fs::recursive_directory_iterator(plan_.tree);
         it != fs::recursive_directory_iterator(); ++it) {
      fs::path rel = it->path().lexically_relative(plan_.tree);
      if (it.depth() == 0 &&
          std::find(o_.skip_entries.begin(), o_.skip_entries.end(),
                    rel.string()) != o_.skip_entries.end()) {
        if (it->is_directory()) it.disable_recursion_pending();
        continue;
      }
      if (rel.parent_path() == fs::path(o_.lib_dir))
        provided_.insert(rel.filename().string());  // files and symlinks
      if (it->is_symlink() || !it->is_regular_file()) continue;
      if (!is_elf_file(it->path())) continue;
      elf::ElfFile f = elf::ElfFile::open(it->path());
      if (!f.has_dynamic()) continue;  // objects, static executables
      if (!libc_) libc_ = deps::libc_of(f);
      TreeElf e{rel.generic_string(),
                it->path(),
                {},
                opt_string(f.rpath()),
                opt_string(f.runpath()),
                opt_string(f.soname())};
      for (auto n : f.needed()) e.needed.emplace_back(n);
      if (e.soname) provided_.insert(*e.soname);
      elfs_.push_back(std::move(e));
    }
    std::sort(elfs_.begin(), elfs_.end(),
              [](const TreeElf& a, const TreeElf& b) { return a.rel < b.rel; });
    plan_.elf_files = elfs_.size();
  }

  void choose_policy() {
    const deps::PolicySet& set =
        o_.policies ? *o_.policies : deps::PolicySet::builtin();
    if (!o_.policy.empty()) {
      policy_ = set.find(o_.policy);
      if (!policy_)
        throw Error(Errc::usage, o_.policy, "unknown platform policy");
    } else {
      auto family = set.family(libc_.value_or(deps::Libc::glibc));
      if (!family.empty()) policy_ = family.back();
    }
    plan_.policy = policy_ ? policy_->name : "none";
  }

  bool excluded(const deps::LibraryNode& n) const {
    if (matches_any(o_.exclude, n.soname)) return true;
    return n.path && matches_any(o_.exclude, n.path->string());
  }

  bool system(std::string_view soname) const {
    return is_libpython(soname) || (policy_ && policy_->allows_library(soname));
  }

  // Resolves the closure of `file` (a tree file or a requested library)
  // and records what lies outside the tree.
  void resolve(const fs::path& file, const std::string& who) {
    auto prune = [&](const deps::LibraryNode& n) {
      return provided_.contains(n.soname) || system(n.soname) || excluded(n);
    };
    deps::LddTree t = resolver_.tree(file, prune);
    for (const deps::LibraryNode& n : t.libraries) {
      if (provided_.contains(n.soname) || system(n.soname)) continue;
      const std::string needer =
          n.needed_by == t.path.string() || n.needed_by.empty() ? who
                                                                : n.needed_by;
      if (excluded(n)) {
        if (std::find(plan_.excluded.begin(), plan_.excluded.end(), n.soname) ==
            plan_.excluded.end())
          plan_.excluded.push_back(n.soname);
        continue;
      }
      if (!n.path) {
        missing_[n.soname].insert(needer);
        continue;
      }
      const fs::path real = n.realpath.value_or(*n.path);
      if (!o_.bundle_external) {
        plan_.external.emplace(n.soname, real.string());
        continue;
      }
      add_graft(
          n.soname, real,
          fmt::format("needed by {}, not allowed by {}", needer, plan_.policy),
          false, needer);
    }
  }

  void add_graft(const std::string& soname, const fs::path& source,
                 std::string reason, bool keep, const std::string& needer) {
    auto it = graft_index_.find(soname);
    if (it != graft_index_.end()) {
      TreeGraft& g = plan_.grafts[it->second];
      if (!needer.empty() && std::find(g.needed_by.begin(), g.needed_by.end(),
                                       needer) == g.needed_by.end())
        g.needed_by.push_back(needer);
      g.keep_name = g.keep_name || keep;
      return;
    }
    TreeGraft g;
    g.soname = soname;
    g.source = source;
    g.reason = std::move(reason);
    g.keep_name = keep;
    if (!needer.empty()) g.needed_by.push_back(needer);
    graft_index_.emplace(soname, plan_.grafts.size());
    plan_.external.erase(soname);
    plan_.grafts.push_back(std::move(g));
  }

  // Where the loader would find `soname` for the tree's files: the first
  // compatible file in LD_LIBRARY_PATH, the extra paths, the system dirs.
  std::optional<fs::path> search(const std::string& soname) const {
    std::vector<std::string> dirs = o_.search.ld_library_path;
    dirs.insert(dirs.end(), o_.search.extra_paths.begin(),
                o_.search.extra_paths.end());
    const auto& sys = resolver_.system_dirs();
    dirs.insert(dirs.end(), sys.begin(), sys.end());
    for (const auto& d : dirs) {
      fs::path p = fs::path(d) / soname;
      std::error_code ec;
      if (!fs::is_regular_file(p, ec) || !is_elf_file(p)) continue;
      if (!elfs_.empty()) {
        elf::ElfFile requester = elf::ElfFile::open(elfs_.front().path);
        if (!deps::compatible(requester, elf::ElfFile::open(p))) continue;
      }
      return p;
    }
    return std::nullopt;
  }

  void request(const TreeLibraryRequest& r) {
    std::optional<fs::path> path;
    std::string soname;
    if (r.spec.find('/') != std::string::npos) {
      std::error_code ec;
      if (fs::exists(r.spec, ec)) {
        path = fs::canonical(r.spec);
        elf::ElfFile f = elf::ElfFile::open(*path);
        auto so = f.soname();
        soname = so ? std::string(*so) : fs::path(r.spec).filename().string();
      } else {
        soname = fs::path(r.spec).filename().string();
      }
    } else {
      soname = r.spec;
      if (provided_.contains(soname)) {
        plan_.notes.push_back(
            fmt::format("{} ({}) is already in the tree", soname, r.reason));
        return;
      }
      if (auto it = graft_index_.find(soname); it != graft_index_.end()) {
        plan_.grafts[it->second].keep_name |= r.keep_name;
        return;
      }
      if (auto p = search(soname)) path = fs::canonical(*p);
    }
    if (provided_.contains(soname)) {
      plan_.notes.push_back(
          fmt::format("{} ({}) is already in the tree", soname, r.reason));
      return;
    }
    if (!path) {
      if (r.optional) {
        plan_.notes.push_back(
            fmt::format("{} ({}) not found; not bundled", r.spec, r.reason));
        return;
      }
      throw Error(Errc::not_found, r.spec,
                  fmt::format("library to bundle ({}) not found{}", r.reason,
                              r.spec.find('/') == std::string::npos
                                  ? " in the library search path"
                                  : ""));
    }
    add_graft(soname, *path, r.reason, r.keep_name, "");
    resolve(*path, soname);
  }

  void report_missing() {
    for (auto& [soname, needers] : missing_) {
      if (graft_index_.contains(soname)) continue;
      if (!o_.ignore_missing)
        throw Error(Errc::not_found, *needers.begin(),
                    fmt::format("needs {}, which is neither in the tree nor "
                                "found on this system",
                                soname));
      plan_.missing[soname] = needers;
    }
  }

  void name_grafts() {
    const fs::path lib = plan_.tree / o_.lib_dir;
    for (TreeGraft& g : plan_.grafts) {
      g.sha256 = Sha256::hex(archive::file_digest(g.source, o_.cache.get()));
      g.keep_name =
          g.keep_name || !o_.hash_names || matches_any(o_.keep_names, g.soname);
      g.file_name = g.keep_name ? g.soname : hashed_name(g.soname, g.sha256);
      if (g.file_name != g.soname) renamed_[g.soname] = g.file_name;
      std::error_code ec;
      if (fs::symlink_status(lib / g.file_name, ec).type() !=
          fs::file_type::not_found)
        throw Error(Errc::usage, (lib / g.file_name).string(),
                    fmt::format("already exists; cannot graft {} there",
                                g.source.string()));
    }
  }

  // RPATH: the entry to lib/ first, then the file's own $ORIGIN-relative
  // entries that stay inside the tree (absolute paths are build or machine
  // paths: dropped).
  std::optional<std::string> new_rpath(
      const std::string& rel, const std::optional<std::string>& rpath,
      const std::optional<std::string>& runpath) const {
    const std::string wanted = origin_relative(rel, o_.lib_dir);
    const fs::path origin = (plan_.tree / rel).parent_path();
    auto expand = [&](const std::string& e) {
      return fs::path(deps::expand_dst(e, origin.string(), "lib64", ""))
          .lexically_normal();
    };
    std::vector<std::string> entries = {wanted};
    const std::optional<std::string>& current = runpath ? runpath : rpath;
    if (current) {
      for (const auto& e : deps::split_path_list(*current)) {
        if (!(e.starts_with("$ORIGIN") || e.starts_with("${ORIGIN}"))) continue;
        fs::path d = expand(e);
        if (!inside(d, plan_.tree) && d != plan_.tree.lexically_normal())
          continue;
        bool dup = false;
        for (const auto& kept : entries) dup = dup || expand(kept) == d;
        if (!dup) entries.push_back(e);
      }
    }
    std::string value = join(entries, ":");
    bool tag_ok = o_.rpath_tag == elf::RpathTag::keep ||
                  (o_.rpath_tag == elf::RpathTag::runpath ? runpath.has_value()
                                                          : !runpath);
    if (current && *current == value && tag_ok) return std::nullopt;
    return value;
  }

  void plan_edits() {
    for (const TreeElf& e : elfs_) {
      TreeEdit edit;
      edit.file = e.rel;
      for (const auto& n : e.needed)
        if (auto it = renamed_.find(n); it != renamed_.end())
          edit.replace_needed[n] = it->second;
      edit.old_rpath = e.runpath ? e.runpath : e.rpath;
      edit.rpath = new_rpath(e.rel, e.rpath, e.runpath);
      if (!edit.replace_needed.empty() || edit.rpath)
        plan_.edits.push_back(std::move(edit));
    }
    for (const TreeGraft& g : plan_.grafts) {
      elf::ElfFile f = elf::ElfFile::open(g.source);
      TreeEdit edit;
      edit.graft = true;
      edit.file = o_.lib_dir + "/" + g.file_name;
      for (auto n : f.needed())
        if (auto it = renamed_.find(std::string(n)); it != renamed_.end())
          edit.replace_needed[std::string(n)] = it->second;
      if (g.file_name != g.soname) edit.set_soname = g.file_name;
      auto rp = opt_string(f.rpath()), rn = opt_string(f.runpath());
      edit.old_rpath = rn ? rn : rp;
      // The source's $ORIGIN entries meant its system directory: only the
      // graft directory itself is kept.
      edit.rpath = "$ORIGIN";
      if (edit.old_rpath == "$ORIGIN" &&
          (rn.has_value() == (o_.rpath_tag != elf::RpathTag::rpath)))
        edit.rpath.reset();
      plan_.edits.push_back(std::move(edit));
    }
  }

  const TreeBundleOptions& o_;
  deps::Resolver resolver_;
  TreeBundlePlan plan_;
  std::vector<TreeElf> elfs_;
  std::set<std::string> provided_;
  std::optional<deps::Libc> libc_;
  const deps::Policy* policy_ = nullptr;
  std::map<std::string, std::size_t> graft_index_;
  std::map<std::string, std::set<std::string>> missing_;
  std::map<std::string, std::string> renamed_;
};

const char* tag_name(elf::RpathTag tag) {
  switch (tag) {
    case elf::RpathTag::rpath:
      return "RPATH";
    case elf::RpathTag::runpath:
      return "RUNPATH";
    case elf::RpathTag::keep:
      break;
  }
  return "RPATH/RUNPATH";
}

}  // namespace

TreeBundlePlan plan_tree_bundle(const fs::path& tree,
                                const TreeBundleOptions& options) {
  return TreePlanner(tree, options).run();
}

void apply_tree_bundle(const TreeBundlePlan& plan, const fs::path& tree) {
  const fs::path lib = tree / plan.lib_dir;
  for (const TreeGraft& g : plan.grafts)
    copy_file_atomically(g.source, lib / g.file_name, 0644);
  for (const TreeEdit& e : plan.edits) {
    elf::EditOptions eo;
    for (const auto& [from, to] : e.replace_needed)
      eo.replace_needed.emplace_back(from, to);
    eo.set_soname = e.set_soname;
    if (e.rpath) {
      eo.rpath_op = elf::RpathOp::set;
      eo.rpath = *e.rpath;
      eo.rpath_tag = plan.rpath_tag;
    }
    if (eo.empty()) continue;
    const fs::path file = tree / e.file;
    // atomic: a new inode renamed over the old name, so a hard link to the
    // input tree is replaced, not written through.
    elf::edit_file(file, file, eo, WriteMode::atomic);
  }
}

std::vector<std::string> TreeBundlePlan::lines() const {
  std::vector<std::string> out;
  out.push_back(fmt::format(
      "{} ELF files; system libraries per {}; {} into {}/", elf_files, policy,
      grafts.empty() ? std::string("nothing to bundle")
                     : fmt::format("{} librar{} to bundle", grafts.size(),
                                   grafts.size() == 1 ? "y" : "ies"),
      lib_dir));
  for (const TreeGraft& g : grafts)
    out.push_back(fmt::format("bundle {} -> {}/{}{} ({})", g.source.string(),
                              lib_dir, g.file_name,
                              g.keep_name ? " (name kept)" : "", g.reason));
  std::size_t rpaths = 0, needed = 0;
  for (const TreeEdit& e : edits) {
    rpaths += e.rpath.has_value();
    needed += e.replace_needed.size();
  }
  if (rpaths)
    out.push_back(fmt::format("set {} $ORIGIN-relative to {}/ in {} file{}",
                              tag_name(rpath_tag), lib_dir, rpaths,
                              rpaths == 1 ? "" : "s"));
  if (needed)
    out.push_back(fmt::format("rewrite {} NEEDED entr{} to bundled names",
                              needed, needed == 1 ? "y" : "ies"));
  for (const auto& [soname, path] : external)
    out.push_back(fmt::format("left external: {} ({})", soname, path));
  for (const auto& s : excluded)
    out.push_back(fmt::format("never bundled: {} (machine library)", s));
  for (const auto& [soname, needers] : missing)
    out.push_back(
        fmt::format("missing: {} (needed by {})", soname, *needers.begin()));
  for (const auto& n : notes) out.push_back(n);
  return out;
}

std::string TreeBundlePlan::to_json(int indent) const {
  nlohmann::json j;
  j["schema"] = "libpkg-tree-bundle/1";
  j["tree"] = tree.string();
  j["lib_dir"] = lib_dir;
  j["policy"] = policy;
  j["rpath_tag"] = tag_name(rpath_tag);
  j["elf_files"] = elf_files;
  j["grafts"] = nlohmann::json::array();
  for (const TreeGraft& g : grafts)
    j["grafts"].push_back({{"soname", g.soname},
                           {"source", g.source.string()},
                           {"file_name", g.file_name},
                           {"keep_name", g.keep_name},
                           {"reason", g.reason},
                           {"sha256", g.sha256},
                           {"needed_by", g.needed_by}});
  j["edits"] = nlohmann::json::array();
  for (const TreeEdit& e : edits) {
    nlohmann::json je = {{"file", e.file},
                         {"graft", e.graft},
                         {"replace_needed", e.replace_needed}};
    je["set_soname"] = e.set_soname ? nlohmann::json(*e.set_soname) : nullptr;
    je["rpath"] = e.rpath ? nlohmann::json(*e.rpath) : nullptr;
    je["old_rpath"] = e.old_rpath ? nlohmann::json(*e.old_rpath) : nullptr;
    j["edits"].push_back(std::move(je));
  }
  j["external"] = external;
  j["excluded"] = excluded;
  nlohmann::json missing_j = nlohmann::json::object();
  for (const auto& [s, n] : missing) missing_j[s] = n;
  j["missing"] = missing_j;
  j["notes"] = notes;
  return j.dump(indent);
}

void stage_tree(const fs::path& input, const fs::path& staging,
                const std::vector<std::string>& skip,
                const std::vector<std::string>& only) {
  require_directory(input, "tree");
  fs::create_directories(staging);
  if (!fs::is_empty(staging))
    throw Error(Errc::usage, staging.string(), "staging directory not empty");
  auto listed = [](const std::vector<std::string>& v, const std::string& s) {
    return std::find(v.begin(), v.end(), s) != v.end();
  };
  for (auto it = fs::recursive_directory_iterator(input);
       it != fs::recursive_directory_iterator(); ++it) {
    fs::path rel = it->path().lexically_relative(input);
    if (it.depth() == 0 && (listed(skip, rel.string()) ||
                            (!only.empty() && !listed(only, rel.string())))) {
      if (it->is_directory() && !it->is_symlink())
        it.disable_recursion_pending();
      continue;
    }
    const fs::path dst = staging / rel;
    fs::file_status st = it->symlink_status();
    if (fs::is_symlink(st)) {
      fs::create_symlink(fs::read_symlink(it->path()), dst);
    } else if (fs::is_directory(st)) {
      fs::create_directory(dst);
      fs::permissions(
          dst, fs::status(it->path()).permissions() | fs::perms::owner_all);
    } else if (fs::is_regular_file(st)) {
      if (::link(it->path().c_str(), dst.c_str()) != 0) {
        // Across file systems (or where hard links are refused) a copy
        // does the same job at the cost of the bytes.
        if (errno != EXDEV && errno != EPERM && errno != EMLINK)
          throw_errno(dst.string(), "link");
        copy_file_atomically(it->path(), dst, 0644);
      }
    } else {
      throw Error(Errc::usage, it->path().string(),
                  "not a regular file, directory or symlink");
    }
  }
}

}  // namespace libpkg::bundle
