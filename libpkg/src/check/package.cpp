// SPDX-License-Identifier: BSD-3-Clause
// Opening the package to check: recognising what the path is, extracting
// archives into a scratch directory with the safe extractor, reading every
// ELF file once (in parallel) and resolving every DT_NEEDED once.
#include "check/package.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <sstream>

#include "base/glob.hpp"
#include "libpkg/archive/extract.hpp"
#include "libpkg/base/error.hpp"
#include "libpkg/base/fd.hpp"
#include "libpkg/base/thread_pool.hpp"
#include "libpkg/conda/package.hpp"
#include "libpkg/elf/sniff.hpp"
#include "libpkg/elf/view.hpp"
#include "libpkg/wheel/wheel.hpp"

namespace fs = std::filesystem;

namespace libpkg::check::detail {
namespace {

bool has_dist_info(const fs::path& dir) {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.is_directory() && e.path().extension() == ".dist-info") return true;
  return false;
}

bool is_libtorch_dir(const fs::path& dir) {
  std::error_code ec;
  return fs::is_regular_file(dir / "build-version", ec) ||
         (fs::is_directory(dir / "lib", ec) &&
          fs::is_directory(dir / "include", ec) &&
          !fs::exists(dir / "info", ec) && !fs::exists(dir / "conda-meta", ec));
}

ArtifactKind classify_directory(const fs::path& dir, std::string* content) {
  std::error_code ec;
  if (fs::exists(dir / "info" / "index.json", ec) ||
      fs::is_directory(dir / "conda-meta", ec))
    return ArtifactKind::conda_tree;
  if (has_dist_info(dir)) return ArtifactKind::site_packages;
  if (is_libtorch_dir(dir)) return ArtifactKind::libtorch_tree;
  if (is_libtorch_dir(dir / "libtorch")) {
    *content = "libtorch";
    return ArtifactKind::libtorch_tree;
  }
  // A package directory inside site-packages (the old install_root,
  // .../site-packages/torch): checked with its siblings as the root, so
  // RPATHs into sibling distributions resolve.
  if (fs::exists(dir / "__init__.py", ec) && has_dist_info(dir.parent_path())) {
    *content = dir.filename().string();
    return ArtifactKind::python_package;
  }
  throw Error(Errc::usage, dir.string(),
              "not a package tree: expected site-packages (*.dist-info), a "
              "package directory inside it, a conda prefix (conda-meta/) or "
              "extracted package (info/index.json), or an unpacked libtorch "
              "(build-version, lib/ and include/)");
}

bool zip_is_libtorch(const archive::ZipReader& zip) {
  if (zip.entries().empty()) return false;
  for (const auto& e : zip.entries())
    if (!e.name.starts_with("libtorch/")) return false;
  return true;
}

void check_package_type(const fs::path& artifact, ArtifactKind kind,
                        const std::optional<std::string>& type) {
  if (!type) return;
  bool ok = false;
  if (*type == "manywheel" || *type == "wheel_macos" || *type == "wheel")
    ok = kind == ArtifactKind::wheel || kind == ArtifactKind::site_packages ||
         kind == ArtifactKind::python_package;
  else if (*type == "conda")
    ok = kind == ArtifactKind::conda || kind == ArtifactKind::conda_tree;
  else if (*type == "libtorch")
    ok = kind == ArtifactKind::libtorch_zip ||
         kind == ArtifactKind::libtorch_tree;
  else
    throw Error(Errc::usage, "",
                fmt::format("unknown package type '{}' (accepted: manywheel, "
                            "wheel_macos, conda, libtorch)",
                            *type));
  if (!ok)
    throw Error(Errc::usage, artifact.string(),
                fmt::format("package type {} expected, but this is a {}", *type,
                            artifact_kind_name(kind)));
}

// Regular files and symlinks under `dir`, relative to `root`, sorted.
std::vector<std::string> list_files(const fs::path& root, const fs::path& dir) {
  std::vector<std::string> files;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    const auto status = it->symlink_status();
    if (fs::is_regular_file(status) || fs::is_symlink(status))
      files.push_back(it->path().lexically_relative(root).generic_string());
  }
  if (ec) throw Error(Errc::io, dir.string(), "cannot list: " + ec.message());
  std::sort(files.begin(), files.end());
  return files;
}

bool exports_python_module(const elf::ElfFile& elf) {
  bool module = false;
  elf.for_each_dynamic_symbol([&](const elf::Symbol& sym) {
    if (sym.is_defined() && (sym.name.starts_with("PyInit_") ||
                             sym.name.starts_with("_cffi_pypyinit_")))
      module = true;
  });
  return module;
}

// nullopt for relocatable objects (.o): they are never loaded.
std::optional<ElfEntry> read_elf(const fs::path& root,
                                 const std::string& member) {
  ElfEntry entry;
  entry.member = member;
  entry.file = root / member;
  elf::ElfFile elf = elf::ElfFile::open(entry.file);
  if (elf.type() == 1 /* ET_REL */) return std::nullopt;
  if (auto s = elf.soname()) entry.soname = std::string(*s);
  for (auto n : elf.needed()) entry.needed.emplace_back(n);
  if (auto r = elf.rpath()) entry.rpath = std::string(*r);
  if (auto r = elf.runpath()) entry.runpath = std::string(*r);
  entry.executable = elf.interpreter().has_value() && entry.soname.empty();
  entry.extension = exports_python_module(elf);
  entry.facts = deps::binary_facts(elf, member);
  entry.dst_lib = elf.is_64() ? "lib64" : "lib";
  entry.dst_platform =
      entry.facts.arch.empty() ? elf.machine_name() : entry.facts.arch;
  return entry;
}

bool under(const fs::path& path, const fs::path& root) {
  auto rel = path.lexically_normal().lexically_relative(root);
  return !rel.empty() && *rel.begin() != "..";
}

// A search entry of `requester` that names a directory under the package
// root which the package doesn't have.
std::optional<std::string> missing_sibling_dir(
    const Package& pkg, const ElfEntry& requester,
    const deps::SearchConfig& search) {
  for (const auto* list : {&requester.rpath, &requester.runpath}) {
    if (!*list) continue;
    for (const auto& raw : deps::split_path_list(**list)) {
      std::string dir = expand_entry(requester, raw, search);
      fs::path p = fs::path(dir).lexically_normal();
      std::error_code ec;
      if (under(p, pkg.root) && !fs::exists(p, ec))
        return p.lexically_relative(pkg.root).generic_string();
    }
  }
  return std::nullopt;
}

void resolve_needs(Package& pkg, const CheckOptions& options) {
  deps::Resolver resolver(options.search);
  std::map<std::string, const ElfEntry*> by_path;  // canonical path → entry
  for (const auto& e : pkg.elfs) {
    std::error_code ec;
    by_path[fs::weakly_canonical(e.file, ec).string()] = &e;
  }
  auto member_of =
      [&](const std::optional<fs::path>& real) -> std::optional<std::string> {
    if (!real) return std::nullopt;
    auto it = by_path.find(real->string());
    if (it != by_path.end()) return it->second->member;
    if (under(*real, pkg.root))
      return real->lexically_relative(pkg.root).generic_string();
    return std::nullopt;
  };

  // (requester, soname) → resolution; a found one beats a missing one (the
  // file may rely on an RPATH inherited from the loader chain it is in).
  std::map<std::pair<std::string, std::string>, ResolvedNeed> best;
  std::vector<deps::LddTree> trees(pkg.elfs.size());
  PoolRef pool(options.pool, options.threads);
  pool.parallel_for(pkg.elfs.size(), [&](std::size_t i) {
    // Libraries outside the package are the system's business: listed,
    // not descended into.
    trees[i] = resolver.tree(pkg.elfs[i].file, [&](const deps::LibraryNode& n) {
      return !n.realpath || !under(*n.realpath, pkg.root);
    });
  });
  for (std::size_t i = 0; i < pkg.elfs.size(); ++i) {
    const deps::LddTree& tree = trees[i];
    std::map<std::string, std::optional<std::string>> member_by_soname;
    for (const auto& node : tree.libraries)
      member_by_soname[node.soname] = member_of(node.realpath);
    for (const auto& node : tree.libraries) {
      std::string requester;
      if (node.needed_by == tree.path.string()) {
        requester = pkg.elfs[i].member;
      } else {
        auto it = member_by_soname.find(node.needed_by);
        if (it == member_by_soname.end() || !it->second) continue;
        requester = *it->second;
      }
      ResolvedNeed need;
      need.requester = requester;
      need.soname = node.soname;
      need.path = node.path;
      need.realpath = node.realpath;
      need.member = member_of(node.realpath);
      auto key = std::make_pair(requester, node.soname);
      auto found = best.find(key);
      if (found == best.end() || (!found->second.path && need.path))
        best[key] = std::move(need);
    }
  }
  for (auto& [key, need] : best) {
    if (!need.path)
      if (const ElfEntry* req = pkg.elf(need.requester))
        need.sibling_dir = missing_sibling_dir(pkg, *req, options.search);
    pkg.needs.push_back(std::move(need));
  }
}

// The dist-info whose RECORD lists files under `dir/`.
std::string owner_of(const fs::path& root, const std::string& dir) {
  std::vector<fs::path> candidates;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(root, ec))
    if (e.is_directory() && e.path().extension() == ".dist-info")
      candidates.push_back(e.path());
  std::sort(candidates.begin(), candidates.end());
  for (const auto& d : candidates) {
    // A dist-info without a RECORD owns nothing (the integrity check says
    // it is missing); one that cannot be read is an error.
    if (!fs::exists(fs::symlink_status(d / "RECORD", ec))) continue;
    std::string text = read_regular_file(d / "RECORD");
    if (text.starts_with(dir + "/") ||
        text.find("\n" + dir + "/") != std::string::npos)
      return d.filename().string();
  }
  return "";
}

// Platform tags from a WHEEL file's "Tag: py-abi-platform" lines.
std::vector<std::string> wheel_file_platforms(const fs::path& wheel_file) {
  std::vector<std::string> tags;
  std::istringstream lines(read_regular_file(wheel_file));
  std::string line;
  while (std::getline(lines, line)) {
    if (!line.starts_with("Tag:")) continue;
    auto value = line.substr(4);
    auto first = value.find_first_not_of(" \t");
    auto last = value.find_last_not_of(" \t\r");
    if (first == std::string::npos) continue;
    value = value.substr(first, last - first + 1);
    auto dash = value.rfind('-');
    if (dash == std::string::npos) continue;
    std::string platform = value.substr(dash + 1);
    if (std::find(tags.begin(), tags.end(), platform) == tags.end())
      tags.push_back(platform);
  }
  return tags;
}

}  // namespace

std::string expand_entry(const ElfEntry& e, std::string_view raw,
                         const deps::SearchConfig& search) {
  return deps::expand_dst(
      raw, e.file.parent_path().string(),
      search.lib.empty() ? e.dst_lib : search.lib,
      search.platform.empty() ? e.dst_platform : search.platform);
}

const ElfEntry* Package::elf(std::string_view member) const {
  auto it = std::lower_bound(
      elfs.begin(), elfs.end(), member,
      [](const ElfEntry& e, std::string_view m) { return e.member < m; });
  return it != elfs.end() && it->member == member ? &*it : nullptr;
}

std::vector<std::string> Package::files_named(std::string_view glob) const {
  std::vector<std::string> out;
  std::string pattern(glob);
  for (const auto& f : files) {
    auto slash = f.rfind('/');
    std::string_view name = slash == std::string::npos
                                ? std::string_view(f)
                                : std::string_view(f).substr(slash + 1);
    if (glob_match(pattern, name)) out.push_back(f);
  }
  return out;
}

std::string unhashed_name(std::string_view name) {
  // <stem>-<8 hex>.<rest>: the hash sits between the last '-' before the
  // first '.' and that '.'.
  auto dot = name.find('.');
  if (dot == std::string_view::npos || dot < 10) return std::string(name);
  if (name[dot - 9] != '-') return std::string(name);
  for (std::size_t i = dot - 8; i < dot; ++i) {
    char c = name[i];
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
      return std::string(name);
  }
  return std::string(name.substr(0, dot - 9)) + std::string(name.substr(dot));
}

Package open_package(const fs::path& artifact, const CheckOptions& options) {
  Package pkg;
  pkg.artifact = artifact;
  std::error_code ec;
  auto status = fs::status(artifact, ec);
  if (ec || !fs::exists(status))
    throw Error(Errc::not_found, artifact.string(),
                "no such file or directory");

  auto make_scratch = [&] {
    pkg.scratch = std::make_shared<ScratchDir>(
        options.scratch_parent.empty()
            ? ScratchDir::in_temp("libpkg-check-")
            : ScratchDir(options.scratch_parent, ".libpkg-check-"));
    return fs::weakly_canonical(pkg.scratch->path()) / "pkg";
  };

  if (fs::is_directory(status)) {
    pkg.kind = classify_directory(artifact, &pkg.content_dir);
    fs::path dir = fs::weakly_canonical(artifact);
    pkg.root =
        pkg.kind == ArtifactKind::python_package ? dir.parent_path() : dir;
    if (pkg.kind == ArtifactKind::python_package) {
      pkg.dist_info = owner_of(pkg.root, pkg.content_dir);
      const fs::path wheel_file = pkg.root / pkg.dist_info / "WHEEL";
      if (!pkg.dist_info.empty() &&
          fs::exists(fs::symlink_status(wheel_file, ec)))
        pkg.platform_tags = wheel_file_platforms(wheel_file);
    }
  } else {
    const std::string name = artifact.filename().string();
    if (name.ends_with(".whl")) {
      pkg.kind = ArtifactKind::wheel;
      pkg.wheel_name = wheel::WheelName::parse(name);
      pkg.zip = std::make_shared<archive::ZipReader>(
          archive::ZipReader::open(artifact));
      pkg.dist_info = wheel::find_dist_info(*pkg.zip, *pkg.wheel_name);
      pkg.platform_tags = pkg.wheel_name->platform_tags;
      pkg.root = make_scratch();
      archive::ExtractOptions xo;
      xo.threads = options.threads;
      xo.pool = options.pool;
      // Hashed while written: the RECORD check uses these digests rather
      // than inflating every member a second time.
      xo.digests = true;
      pkg.member_digests = archive::extract(*pkg.zip, pkg.root, xo).digests;
    } else if (name.ends_with(".conda") || name.ends_with(".tar.bz2")) {
      pkg.kind = ArtifactKind::conda;
      pkg.root = make_scratch();
      conda::extract(artifact, pkg.root);
    } else if (name.ends_with(".zip")) {
      pkg.zip = std::make_shared<archive::ZipReader>(
          archive::ZipReader::open(artifact));
      if (!zip_is_libtorch(*pkg.zip))
        throw Error(Errc::usage, artifact.string(),
                    "a zip that is not a libtorch distribution (members must "
                    "all be under libtorch/)");
      pkg.kind = ArtifactKind::libtorch_zip;
      pkg.content_dir = "libtorch";
      pkg.root = make_scratch();
      archive::ExtractOptions xo;
      xo.threads = options.threads;
      xo.pool = options.pool;
      archive::extract(*pkg.zip, pkg.root, xo);
    } else {
      throw Error(Errc::usage, artifact.string(),
                  "unknown artifact: expected a .whl, .conda, .tar.bz2, a "
                  "libtorch .zip or a directory");
    }
  }
  check_package_type(artifact, pkg.kind, options.expect.package_type);

  pkg.files = list_files(pkg.root, pkg.content_path());
  std::vector<std::string> elf_members, macho_members;
  for (const auto& f : pkg.files) {
    fs::path p = pkg.root / f;
    if (!fs::is_regular_file(fs::symlink_status(p, ec))) continue;
    if (elf::sniff_elf_file(p))
      elf_members.push_back(f);
    else if (sniff_macho_file(p))
      macho_members.push_back(f);
  }
  std::vector<std::optional<ElfEntry>> read(elf_members.size());
  PoolRef pool(options.pool, options.threads);
  pool.parallel_for(elf_members.size(), [&](std::size_t i) {
    try {
      read[i] = read_elf(pkg.root, elf_members[i]);
    } catch (const Error& e) {
      // A corrupt ELF file is bad input, named by its member.
      throw Error(e.code(), elf_members[i], e.message());
    }
  });
  for (auto& e : read)
    if (e) pkg.elfs.push_back(std::move(*e));
  resolve_needs(pkg, options);
  read_machos(pkg, macho_members, options);
  return pkg;
}

}  // namespace libpkg::check::detail
