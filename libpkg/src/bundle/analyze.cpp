// SPDX-License-Identifier: BSD-3-Clause
#include "libpkg/bundle/analyze.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <set>

#include "bundle/patterns.hpp"
#include "libpkg/archive/extract.hpp"
#include "libpkg/archive/member_view.hpp"
#include "libpkg/base/error.hpp"
#include "libpkg/base/result.hpp"
#include "libpkg/base/thread_pool.hpp"
#include "libpkg/elf/format.hpp"
#include "libpkg/elf/sniff.hpp"
#include "libpkg/elf/view.hpp"
#include "libpkg/wheel/wheel.hpp"

namespace fs = std::filesystem;

namespace libpkg::bundle {
namespace {

bool is_elf_member(const archive::ZipReader& zip,
                   const archive::ZipEntry& entry) {
  // Smaller than an ELF32 header: not a loadable object.
  if (entry.is_directory() || entry.is_symlink() ||
      entry.uncompressed_size < 52)
    return false;
  const std::vector<u8> head = zip.read_prefix(entry, 4);
  return head.size() == 4 && elf::ElfFile::has_elf_magic(head);
}

bool defines_python_module(const elf::ElfFile& elf, bool* imports_dlopen) {
  bool module = false;
  elf.for_each_dynamic_symbol([&](const elf::Symbol& sym) {
    if (sym.is_defined()) {
      // PyInit_<name> (CPython 3), init<name> (2), _cffi_pypyinit_ (PyPy).
      if (sym.type == 2 /* STT_FUNC */ &&
          (sym.name.starts_with("PyInit_") ||
           sym.name.starts_with("_cffi_pypyinit_")))
        module = true;
    } else if (sym.name == "dlopen" || sym.name == "dlmopen") {
      *imports_dlopen = true;
    }
  });
  return module;
}

// Finds a library named `soname` for --include the way the loader would
// from a requester without RPATH/RUNPATH: LD_LIBRARY_PATH, extra paths,
// system directories; the first file compatible with `like` wins.
fs::path find_included(const deps::Resolver& resolver, std::string_view soname,
                       const elf::ElfFile& like) {
  std::vector<std::string> dirs = resolver.config().ld_library_path;
  for (const auto& d : resolver.config().extra_paths) dirs.push_back(d);
  for (const auto& d : resolver.system_dirs()) dirs.push_back(d);
  for (const auto& dir : dirs) {
    fs::path candidate = fs::path(dir.empty() ? "." : dir) / soname;
    std::error_code ec;
    if (!fs::is_regular_file(candidate, ec)) continue;
    // Not ELF, or ELF the parser refuses: ld.so skips it too. A file that
    // cannot be read is reported, not skipped for something else.
    if (!elf::sniff_elf_file(candidate)) continue;
    Result<elf::ElfFile> lib = attempt({Errc::format, Errc::unsupported}, [&] {
      return elf::ElfFile::open(candidate);
    });
    if (lib && deps::compatible(like, lib.value())) return candidate;
  }
  throw Error(Errc::not_found, std::string(soname),
              "--include: library not found on the search path "
              "(LD_LIBRARY_PATH, --lib-path, system directories)");
}

class Analyzer {
 public:
  Analyzer(const fs::path& wheel_path, const AnalyzeOptions& options)
      : options_(options), pool_(options.pool, options.threads) {
    a_.wheel = wheel_path;
    if (options.policies) {
      a_.policies = options.policies;
    } else {
      a_.policies = &deps::PolicySet::builtin();
    }
  }

  WheelAnalysis run() {
    open_wheel();
    find_binaries();
    check_architecture();
    deps::SearchConfig search = options_.search;
    search.open_elf = [this](const fs::path& p) { return open_any(p); };
    // musl's loader rules for musl wheels (bionic's are glibc-like).
    if (a_.libc == deps::Libc::musl) search.libc = deps::Libc::musl;
    resolver_.emplace(search);
    resolve();
    collect_facts();
    evaluate();
    return std::move(a_);
  }

 private:
  void open_wheel() {
    a_.name = wheel::WheelName::parse(a_.wheel.filename().string());
    a_.zip = std::make_shared<archive::ZipReader>(
        archive::ZipReader::open(a_.wheel));
    archive::check_member_names(*a_.zip, /*allow_symlinks=*/true);
    a_.dist_info = wheel::find_dist_info(*a_.zip, a_.name);
    a_.scratch = std::make_shared<ScratchDir>(
        options_.scratch_parent.empty()
            ? ScratchDir::in_temp("libpkg-repair-")
            : ScratchDir(options_.scratch_parent, ".libpkg-repair-"));
    // Canonical, so files the loader finds through symlinked directories
    // (a /tmp that is a link) are still recognised as the wheel's own.
    tree_ = fs::weakly_canonical(a_.scratch->path()) / "wheel";
    a_.tree = tree_;
  }

  void find_binaries() {
    const archive::ZipReader& zip = *a_.zip;
    const std::string purelib = a_.name.data_dir() + "/purelib/";
    std::vector<const archive::ZipEntry*> elves;
    for (const auto& entry : zip.entries()) {
      if (!is_elf_member(zip, entry)) continue;
      if (entry.name.starts_with(purelib))
        throw Error(Errc::unsupported, a_.wheel.string(),
                    fmt::format("{}: ELF file under .data/purelib: a wheel "
                                "with native code must not be purelib",
                                entry.name));
      elves.push_back(&entry);
    }
    if (elves.empty())
      throw Error(Errc::usage, a_.wheel.string(),
                  "no ELF files: a pure-Python wheel needs no repair");
    a_.binaries.resize(elves.size());
    views_.resize(elves.size());
    for (std::size_t i = 0; i < elves.size(); ++i) {
      a_.binaries[i].member = elves[i]->name;
      a_.binaries[i].file = tree_ / elves[i]->name;
      views_[i] = archive::open_member(a_.zip, *elves[i],
                                       options_.restart_points
                                           ? archive::RestartPoints::use
                                           : archive::RestartPoints::ignore);
      // Handed to the repair only when read sequentially (no index).
      if (!options_.restart_points) a_.binaries[i].view = views_[i];
      lay_out_placeholder(a_.binaries[i].file);
    }
    for (std::size_t i = 0; i < a_.binaries.size(); ++i)
      by_file_[a_.binaries[i].file.lexically_normal().string()] = i;
    inflate_dynamic_sections();
  }

  // Reaching a library's dynamic section means inflating everything before
  // it (most of a CUDA library): done for all members at once on the pool,
  // so the sequential passes below find it filled. Errors are left for
  // those passes, which report them in member order.
  void inflate_dynamic_sections() const {
    PoolRef& pool = pool_;
    pool.parallel_for(views_.size(), [&](std::size_t i) {
      try {
        const elf::ElfFile elf = open_binary(i);
        if (options_.restart_points)
          (void)elf.needed();
        else
          read_whole(elf);
      } catch (const Error&) {
      }
    });
  }

  // A repair reads its members sequentially (no restart points), and a
  // view keeps only the ranges asked for: a read behind what the inflater
  // has passed decodes again from the last resume point before it (up to
  // 8 MiB more than the range, archive/member_view.hpp).
  // The editor reads the section headers and their names, which GNU ld puts
  // behind .dynamic (the data segment follows the code), so the part from
  // .dynamic to the end is kept whole in this pass when it is small
  // (unstripped symbol tables can make it large: then those reads resume).
  // Either way the pass goes on to the member's end: the RECORD check reads
  // every member whole, and takes this pass's digest instead
  // (MemberView::digest()).
  static constexpr u64 kKeptTail = u64{16} << 20;
  static void read_whole(const elf::ElfFile& elf) {
    const ByteView& bytes = elf.bytes();
    if (bytes.size() == 0) return;
    for (const elf::ProgramHeader& ph : elf.program_headers()) {
      if (ph.type != elf::PT_DYNAMIC || ph.offset >= bytes.size()) continue;
      const u64 tail = bytes.size() - ph.offset;
      if (tail <= kKeptTail) bytes.ensure(ph.offset, tail);
      break;
    }
    (void)elf.needed();
    bytes.ensure(bytes.size() - 1, 1);
  }

  // The members are read in place (archive/member_view.hpp); on disk there
  // is only what the loader's search looks at: the directories and an empty
  // file where each ELF member would be unpacked, so $ORIGIN, is_regular and
  // realpath see the unpacked wheel's layout. Names were checked
  // (check_member_names) and the scratch tree is ours: nothing in it is a
  // symlink.
  void lay_out_placeholder(const fs::path& file) const {
    fs::create_directories(file.parent_path());
    const int fd =
        ::open(file.c_str(),
               O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0) throw_errno(file.string(), "cannot create");
    ::close(fd);
  }

  // The ELF file of binary `i`, named by `path` (its placeholder's path, or
  // a path leading there).
  elf::ElfFile open_binary(std::size_t i, const fs::path& path) const {
    return elf::ElfFile(views_[i]->view(path.string()), views_[i]);
  }
  elf::ElfFile open_binary(std::size_t i) const {
    return open_binary(i, a_.binaries[i].file);
  }

  // The resolver's opener: members of the wheel come from the archive, any
  // other file from the file system.
  elf::ElfFile open_any(const fs::path& path) const {
    std::error_code ec;
    fs::path canon = fs::weakly_canonical(path, ec);
    if (ec) canon = path;
    auto it = by_file_.find(canon.lexically_normal().string());
    if (it != by_file_.end()) return open_binary(it->second, path);
    return elf::ElfFile::open(path);
  }

  void check_architecture() {
    std::string first_member;
    std::string libc_member;  // the first binary that states its libc
    std::optional<deps::Libc> stated;
    for (std::size_t i = 0; i < a_.binaries.size(); ++i) {
      PackageBinary& b = a_.binaries[i];
      elf::ElfFile elf = open_binary(i);
      std::string arch = deps::policy_arch(elf);
      if (arch.empty())
        throw Error(
            Errc::unsupported, a_.wheel.string(),
            fmt::format("{}: {}", b.member, deps::unsupported_machine(elf)));
      if (a_.arch.empty()) {
        a_.arch = arch;
        first_member = b.member;
      } else if (arch != a_.arch) {
        throw Error(Errc::unsupported, a_.wheel.string(),
                    fmt::format("ELF files for two architectures: {} is {}, "
                                "{} is {}",
                                first_member, a_.arch, b.member, arch));
      }
      if (auto libc = deps::libc_of(elf)) {
        if (!stated) {
          stated = libc;
          libc_member = b.member;
        } else if (*libc != *stated) {
          throw Error(Errc::unsupported, a_.wheel.string(),
                      fmt::format("{} is built for {} and {} for {}: one "
                                  "libc family per wheel",
                                  libc_member, deps::libc_name(*stated),
                                  b.member, deps::libc_name(*libc)));
        }
      }
      for (std::string_view n : elf.needed()) b.needed.emplace_back(n);
      if (auto r = elf.rpath()) b.rpath = std::string(*r);
      if (auto r = elf.runpath()) b.runpath = std::string(*r);
      b.extension = defines_python_module(elf, &b.imports_dlopen);
    }
    decide_libc(stated, libc_member);
    check_tag_architecture(first_member);
  }

  // The file name's platform tags must be for the binaries' architecture
  // (auditwheel: "Invalid binary wheel: no ELF executable or shared library
  // file ... for x86_64 architecture"): an aarch64 wheel named *_x86_64
  // would otherwise be analysed and retagged as if the name were right.
  // Android tags spell the NDK ABI (arm64_v8a), others the machine.
  void check_tag_architecture(const std::string& member) const {
    if (a_.arch.empty()) return;
    const std::string plain = "_" + a_.arch;
    const std::string spelled =
        "_" + std::string(deps::policy_tag_arch(a_.libc, a_.arch));
    for (const auto& tag : a_.name.platform_tags) {
      if (tag == "any" || tag.ends_with(plain) || tag.ends_with(spelled))
        continue;
      throw Error(Errc::unsupported, a_.wheel.string(),
                  fmt::format("platform tag {} is not for {}, the "
                              "architecture of its ELF files (e.g. {})",
                              tag, a_.arch, member));
    }
  }

  // The binaries' own word, else the extension suffixes, else the wheel's
  // tag, else --libc; otherwise the wheel is undecidable and we say so
  // (guessing glibc offered manylinux tags to musl wheels).
  void decide_libc(std::optional<deps::Libc> stated,
                   const std::string& member) {
    if (stated) {
      a_.libc = *stated;
      a_.libc_source = member + " (interpreter or libc NEEDED)";
      if (options_.libc && *options_.libc != *stated)
        throw Error(Errc::usage, a_.wheel.string(),
                    fmt::format("--libc {}: {} is built for {}",
                                deps::libc_name(*options_.libc), member,
                                deps::libc_name(*stated)));
      return;
    }
    std::optional<deps::Libc> found;
    std::string source;
    auto consider = [&](deps::Libc libc, std::string why) {
      if (found && *found != libc)
        throw Error(
            Errc::unsupported, a_.wheel.string(),
            fmt::format("{} says {}, but {} says {}: pass --libc only if you "
                        "know better than the file names",
                        source, deps::libc_name(*found), why,
                        deps::libc_name(libc)));
      if (!found) source = std::move(why);
      found = libc;
    };
    for (const auto& b : a_.binaries)
      if (auto libc = deps::libc_from_extension_suffix(b.member))
        consider(*libc, "extension suffix of " + b.member);
    if (!found) {
      for (const auto& tag : a_.name.platform_tags) {
        std::string_view t = tag;
        if (t.starts_with("musllinux_"))
          consider(deps::Libc::musl, "wheel tag " + tag);
        else if (t.starts_with("manylinux"))
          consider(deps::Libc::glibc, "wheel tag " + tag);
        else if (t.starts_with("android_"))
          consider(deps::Libc::bionic, "wheel tag " + tag);
      }
    }
    if (options_.libc) {
      if (found && *found != *options_.libc)
        throw Error(Errc::usage, a_.wheel.string(),
                    fmt::format("--libc {}: {} says {}",
                                deps::libc_name(*options_.libc), source,
                                deps::libc_name(*found)));
      a_.libc = *options_.libc;
      a_.libc_source = "--libc";
      return;
    }
    if (!found)
      throw Error(
          Errc::usage, a_.wheel.string(),
          "cannot tell whether the binaries are for glibc, musl or bionic: "
          "none has an interpreter or a libc NEEDED, no extension suffix "
          "names the libc (-linux-musl.so, -linux-android.so, or "
          "-linux-gnu.so from CPython 3.11 on) and the wheel's tag is not "
          "manylinux/musllinux/android; pass --libc glibc|musl|bionic");
    a_.libc = *found;
    a_.libc_source = source;
  }

  // Inside the unpacked wheel?
  std::optional<std::size_t> package_index(const deps::LibraryNode& node) {
    const auto& p = node.realpath ? node.realpath : node.path;
    if (!p) return std::nullopt;
    std::error_code ec;
    fs::path canon = fs::weakly_canonical(*p, ec);
    if (ec) canon = *p;
    auto it = by_file_.find(canon.lexically_normal().string());
    if (it != by_file_.end()) return it->second;
    return std::nullopt;
  }

  bool is_system(std::string_view soname) const {
    for (const deps::Policy* p : a_.policies->family(a_.libc))
      if (p->allows_library(soname)) return true;
    return false;
  }

  bool allowed_everywhere(std::string_view soname) const {
    for (const deps::Policy* p : a_.policies->family(a_.libc))
      if (!p->allows_library(soname)) return false;
    return true;
  }

  bool is_excluded(const deps::LibraryNode& node) const {
    if (matches_any(options_.exclude, node.soname)) return true;
    if (node.path && matches_any(options_.exclude, node.path->string()))
      return true;
    return node.realpath &&
           matches_any(options_.exclude, node.realpath->string());
  }

  bool prune(const deps::LibraryNode& node) {
    if (is_system(node.soname) || is_libpython(node.soname)) return true;
    if (is_excluded(node)) {
      excluded_.insert(node.soname);
      return true;
    }
    return false;
  }

  // Records the externals of one tree; `root_name` names the tree's root in
  // needed_by lists.
  void absorb_tree(const deps::LddTree& tree, const std::string& root_name,
                   std::map<std::string, std::string>* facts_external) {
    // Who asked, in the names the report uses: members for files of the
    // wheel, sonames otherwise.
    std::map<std::string, std::string> display;
    display[tree.path.string()] = root_name;
    for (const auto& node : tree.libraries)
      if (auto idx = package_index(node))
        display[node.soname] = a_.binaries[*idx].member;
    auto requester = [&](const std::string& name) {
      auto it = display.find(name);
      return it == display.end() ? name : it->second;
    };
    for (const auto& node : tree.libraries) {
      if (excluded_.count(node.soname) || is_libpython(node.soname)) continue;
      if (package_index(node)) continue;
      if (node.via == deps::FoundVia::not_found || !node.path) {
        // A library some policy allows is the target system's: it need not
        // exist here (a foreign-architecture wheel analysed without its
        // sysroot; its symbol versions are in the binary's version needs).
        // It still blocks the policies that don't allow it (evaluate).
        if (is_system(node.soname)) {
          if (facts_external) (*facts_external)[node.soname] = "";
          continue;
        }
        // Provided elsewhere (e.g. by another wheel): not missing either.
        if (matches_any(options_.exclude, node.soname)) {
          excluded_.insert(node.soname);
          continue;
        }
        a_.missing[node.soname].insert(requester(node.needed_by));
        if (facts_external) (*facts_external)[node.soname] = "";
        continue;
      }
      ExternalLibrary& ext = external_slot(node);
      ext.needed_by.insert(requester(node.needed_by));
      if (facts_external) (*facts_external)[node.soname] = node.path->string();
    }
  }

  ExternalLibrary& external_slot(const deps::LibraryNode& node) {
    auto it = external_index_.find(node.soname);
    if (it != external_index_.end()) return a_.externals[it->second];
    ExternalLibrary ext;
    ext.soname = node.soname;
    ext.path = *node.path;
    ext.realpath = node.realpath ? *node.realpath : *node.path;
    ext.needed = node.needed;
    ext.system = is_system(node.soname);
    external_index_[node.soname] = a_.externals.size();
    a_.externals.push_back(std::move(ext));
    return a_.externals.back();
  }

  void resolve() {
    auto prune_fn = [this](const deps::LibraryNode& n) { return prune(n); };
    for (auto& b : a_.binaries) {
      b.tree = resolver_->tree(b.file, prune_fn);
      absorb_tree(b.tree, b.member, &b.facts.external);
    }
    if (options_.include.empty()) return;
    elf::ElfFile like = open_binary(0);
    for (const auto& inc : options_.include) {
      fs::path path = inc.find('/') != std::string::npos
                          ? fs::path(inc)
                          : find_included(*resolver_, inc, like);
      elf::ElfFile lib = elf::ElfFile::open(path);
      std::string why;
      if (!deps::compatible(like, lib, &why))
        throw Error(Errc::unsupported, path.string(),
                    "--include: not loadable by the wheel's binaries: " + why);
      deps::LibraryNode root;
      root.soname =
          lib.soname() ? std::string(*lib.soname()) : path.filename().string();
      root.path = path;
      std::error_code ec;
      root.realpath = fs::canonical(path, ec);
      if (ec) root.realpath = path;
      root.via = deps::FoundVia::path;
      for (std::string_view n : lib.needed()) root.needed.emplace_back(n);
      ExternalLibrary& ext = external_slot(root);
      if (!ext.included) {
        // Asked for by path: that copy is bundled, even when a binary's
        // NEEDED found another one on the search path.
        ext.path = *root.path;
        ext.realpath = *root.realpath;
        ext.needed = root.needed;
      }
      ext.included = true;
      ext.needed_by.insert("--include");
      deps::LddTree tree = resolver_->tree(path, prune_fn);
      absorb_tree(tree, root.soname, nullptr);
    }
    satisfy_missing_with_included();
  }

  // A NEEDED that the search path doesn't find but an included library
  // provides is not missing: the bundled copy will be found in the graft
  // directory (e.g. a CUDA library given by path, outside the search path).
  void satisfy_missing_with_included() {
    for (auto& ext : a_.externals) {
      if (!ext.included) continue;
      auto it = a_.missing.find(ext.soname);
      if (it == a_.missing.end()) continue;
      for (const auto& by : it->second) ext.needed_by.insert(by);
      a_.missing.erase(it);
      for (auto& b : a_.binaries) {
        auto f = b.facts.external.find(ext.soname);
        if (f != b.facts.external.end() && f->second.empty())
          f->second = ext.path.string();
      }
    }
  }

  void collect_facts() {
    PoolRef& pool = pool_;
    pool.parallel_for(a_.binaries.size(), [&](std::size_t i) {
      PackageBinary& b = a_.binaries[i];
      auto external = std::move(b.facts.external);
      b.facts = deps::binary_facts(open_binary(i), b.member);
      b.facts.external = std::move(external);
    });
    pool.parallel_for(a_.externals.size(), [&](std::size_t i) {
      ExternalLibrary& ext = a_.externals[i];
      ext.facts =
          deps::binary_facts(elf::ElfFile::open(ext.realpath), ext.soname);
      ext.facts.grafted = true;
    });
    a_.excluded.assign(excluded_.begin(), excluded_.end());
  }

  void evaluate() {
    std::vector<deps::BinaryFacts> facts;
    for (const auto& b : a_.binaries) facts.push_back(b.facts);
    deps::EvaluateOptions as_is;
    as_is.libraries_block = true;
    as_is.libc = a_.libc;
    as_is.isa_ext_check = options_.isa_ext_check;
    a_.as_is = deps::evaluate(facts, *a_.policies, as_is);
    // A library every policy allows (libc, libm, ...) is never bundled, so
    // its own requirements don't matter; any other may be grafted for some
    // policy, and evaluate() counts it for the policies that don't allow it.
    for (const auto& ext : a_.externals)
      if (!allowed_everywhere(ext.soname)) facts.push_back(ext.facts);
    deps::EvaluateOptions grafted;
    grafted.libraries_block = false;
    grafted.libc = a_.libc;
    grafted.isa_ext_check = options_.isa_ext_check;
    a_.after_repair = deps::evaluate(facts, *a_.policies, grafted);
  }

  const AnalyzeOptions& options_;
  // One pool for the analysis (the caller's, or one made for it).
  mutable PoolRef pool_;
  std::optional<deps::Resolver> resolver_;  // once the libc is known
  WheelAnalysis a_;
  fs::path tree_;
  std::map<std::string, std::size_t> by_file_;
  std::vector<std::shared_ptr<const archive::MemberView>> views_;  // binaries
  std::map<std::string, std::size_t> external_index_;
  std::set<std::string> excluded_;
};

}  // namespace

const ExternalLibrary* WheelAnalysis::external(std::string_view soname) const {
  for (const auto& e : externals)
    if (e.soname == soname) return &e;
  return nullptr;
}

const PackageBinary* WheelAnalysis::binary(std::string_view member) const {
  for (const auto& b : binaries)
    if (b.member == member) return &b;
  return nullptr;
}

bool WheelAnalysis::would_graft(const ExternalLibrary& lib) const {
  if (lib.included) return true;
  const deps::Policy* best = after_repair.best;
  if (best && best->priority > 0) return !best->allows_library(lib.soname);
  return !lib.system;
}

bool is_pure_wheel(const fs::path& wheel) {
  archive::ZipReader zip = archive::ZipReader::open(wheel);
  const auto& entries = zip.entries();
  return std::none_of(
      entries.begin(), entries.end(),
      [&](const archive::ZipEntry& e) { return is_elf_member(zip, e); });
}

WheelAnalysis analyze_wheel(const fs::path& wheel,
                            const AnalyzeOptions& options) {
  return Analyzer(wheel, options).run();
}

}  // namespace libpkg::bundle
