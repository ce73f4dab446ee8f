// SPDX-License-Identifier: BSD-3-Clause
// plan_macos_tree_bundle / apply_macos_tree_bundle: see
// libpkg/bundle/macos_tree.hpp.
#include "libpkg/bundle/macos_tree.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>

#include "bundle/macos_closure.hpp"
#include "bundle/macos_report.hpp"
#include "libpkg/base/atomic_file.hpp"
#include "libpkg/base/error.hpp"
#include "libpkg/base/fd.hpp"
#include "libpkg/base/mapped_file.hpp"
#include "libpkg/base/overlay.hpp"
#include "libpkg/base/result.hpp"
#include "libpkg/macho/view.hpp"

namespace fs = std::filesystem;
namespace lm = libpkg::macho;

namespace libpkg::bundle {
namespace {

// The first 4 bytes of `file` (fewer for a shorter file).
std::vector<u8> head_of(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::vector<u8> head(4);
  in.read(reinterpret_cast<char*>(head.data()), 4);
  head.resize(static_cast<std::size_t>(in.gcount()));
  return head;
}

// The tree's Mach-O files, relative and sorted. A fat magic is also Java's
// class-file magic: such a file that does not parse is not Mach-O; any
// other magic that does not parse is bad input.
std::vector<std::string> tree_machos(const fs::path& tree,
                                     const std::vector<std::string>& skip,
                                     const std::string& where) {
  std::vector<std::string> out;
  for (auto it = fs::recursive_directory_iterator(tree);
       it != fs::recursive_directory_iterator(); ++it) {
    const std::string rel = it->path().lexically_relative(tree).string();
    if (it.depth() == 0 &&
        std::find(skip.begin(), skip.end(), rel) != skip.end()) {
      if (it->is_directory() && !it->is_symlink())
        it.disable_recursion_pending();
      continue;
    }
    if (it->is_symlink() || !it->is_regular_file()) continue;
    const std::vector<u8> head = head_of(it->path());
    if (head.size() < 4 || !lm::MachOFile::has_magic(head)) continue;
    Result<lm::MachOFile> f = attempt({Errc::format, Errc::unsupported}, [&] {
      return lm::MachOFile::open(it->path());
    });
    if (!f) {
      if (head[0] == 0xca && head[1] == 0xfe) continue;
      throw Error(Errc::format, where,
                  fmt::format("{}: {}", rel, f.error().message()));
    }
    out.push_back(rel);
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

MacosTreeBundlePlan plan_macos_tree_bundle(const fs::path& tree,
                                           const std::vector<std::string>& skip,
                                           const MacosRepairOptions& options,
                                           const std::string& where) {
  const std::string named = where.empty() ? tree.string() : where;
  require_directory(tree, "tree");
  MacosTreeBundlePlan plan;
  plan.tree = fs::weakly_canonical(tree);
  plan.lib_dir = options.lib_dir.value_or("lib");
  plan.binaries = tree_machos(plan.tree, skip, named);
  if (plan.binaries.empty())
    throw Error(Errc::usage, named, "no Mach-O files in the tree");
  take_closure(
      plan_macos_closure(
          {named, plan.tree, plan.binaries, plan.lib_dir, "tree"}, options),
      plan);
  return plan;
}

void apply_macos_tree_bundle(const MacosTreeBundlePlan& plan,
                             const fs::path& staging) {
  std::map<std::string, const MacosFileEdit*> edit_of;
  for (const auto& e : plan.edits) edit_of[e.member] = &e;
  create_output_directory(staging / plan.lib_dir);
  for (const auto& g : plan.grafts)
    if (!edit_of.count(g.member))
      copy_file_atomically(g.realpath, staging / g.member, 0755);
  // Temporary file + rename: a staged hard link to the input gets a new
  // inode, so the input keeps its bytes.
  for (const auto& e : plan.edits) {
    const fs::path out = staging / e.member;
    write_overlay(MappedFile::open(e.file), *e.overlay, out, WriteMode::atomic);
    if (e.graft) fs::permissions(out, fs::perms(0755), fs::perm_options::add);
  }
}

std::vector<std::string> MacosTreeBundlePlan::lines() const {
  std::vector<std::string> out;
  for (const auto& g : grafts)
    out.push_back(fmt::format("bundle {} → {} (needed by {})",
                              g.source.string(), g.member,
                              fmt::join(g.needed_by, ", ")));
  for (const auto& r : redirects)
    out.push_back(fmt::format("already in the tree: {} → {} (needed by {})",
                              r.source.string(), r.member,
                              fmt::join(r.needed_by, ", ")));
  for (const auto& e : edits)
    out.push_back(fmt::format("edit {}: {}", e.member, fmt::join(e.why, "; ")));
  for (const auto& x : excluded) out.push_back("excluded " + x);
  for (const auto& n : notes) out.push_back("note: " + n);
  return out;
}

std::string MacosTreeBundlePlan::to_json(int indent) const {
  nlohmann::json doc =
      macos_closure_json(grafts, redirects, edits, excluded, notes);
  doc["schema"] = "libpkg-macos-tree-bundle/1";
  doc["tree"] = tree.string();
  doc["lib_dir"] = lib_dir;
  doc["binaries"] = binaries;
  doc["archs"] = archs;
  return doc.dump(indent);
}

}  // namespace libpkg::bundle
