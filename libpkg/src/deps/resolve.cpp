// SPDX-License-Identifier: BSD-3-Clause
// The loader's search: which file each DT_NEEDED name loads, breadth first
// over the closure of one ELF file. See resolve.hpp for the rules.
#include "libpkg/deps/resolve.hpp"

#include <deque>
#include <memory>
#include <string>
#include <unordered_set>
#include <vector>

#include "libpkg/base/error.hpp"
#include "system_paths.hpp"

namespace libpkg::deps {

namespace fs = std::filesystem;

namespace {

bool is_dir(const std::string& path) {
  std::error_code ec;
  return fs::is_directory(path, ec);
}

// The directory $ORIGIN names for an object: the directory of the path it
// was opened by, made absolute (ld.so does the same with a relative name).
std::string origin_of(const elf::ElfFile& elf) {
  fs::path p(elf.name());
  std::error_code ec;
  fs::path abs = fs::absolute(p, ec);
  if (ec) abs = p;
  std::string dir = abs.parent_path().string();
  return dir.empty() ? std::string("/") : dir;
}

// ld.so drops trailing slashes and reads an empty entry as the current
// directory.
std::string normalize_dir(std::string dir) {
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  if (dir.empty()) dir = ".";
  return dir;
}

std::string join_dir(const std::string& dir, std::string_view name) {
  std::string out = dir;
  if (out.empty() || out.back() != '/') out += '/';
  out += name;
  return out;
}

bool is_regular(const std::string& path) {
  std::error_code ec;
  return fs::is_regular_file(path, ec);  // follows symlinks
}

std::string real_path(const std::string& path) {
  std::error_code ec;
  fs::path real = fs::canonical(path, ec);
  return ec ? path : real.string();
}

struct Expander {
  std::string lib, platform;
  std::string operator()(std::string_view entry, const elf::ElfFile& owner) {
    return expand_dst(entry, origin_of(owner), lib, platform);
  }
};

}  // namespace

const LibraryNode* LddTree::find(std::string_view soname) const {
  for (const auto& lib : libraries)
    if (lib.soname == soname) return &lib;
  return nullptr;
}

std::vector<std::string> LddTree::missing() const {
  std::vector<std::string> out;
  for (const auto& lib : libraries)
    if (lib.via == FoundVia::not_found) out.push_back(lib.soname);
  return out;
}

Resolver::Resolver(SearchConfig config) : config_(std::move(config)) {
  const fs::path& root = config_.root;
  auto existing_defaults = [&](std::initializer_list<const char*> dirs) {
    std::vector<std::string> out;
    for (const char* d : dirs) {
      std::string dir = detail::under_root(root, d);
      if (!is_dir(detail::in_root(root, dir))) continue;
      bool in_conf = false;
      for (const auto& c : conf_dirs_) in_conf |= c == dir;
      if (!in_conf) out.push_back(std::move(dir));
    }
    return out;
  };
  if (config_.system_dirs) {
    for (const auto& d : *config_.system_dirs)
      system_dirs_.push_back(normalize_dir(d));
    return;
  }
  if (config_.libc == Libc::glibc) {
    for (auto& d :
         parse_ld_so_conf(detail::under_root(root, "/etc/ld.so.conf"), root))
      if (is_dir(detail::in_root(root, d))) conf_dirs_.push_back(std::move(d));
    default_dirs64_ =
        existing_defaults({"/lib64", "/usr/lib64", "/lib", "/usr/lib"});
    default_dirs32_ = existing_defaults({"/lib", "/usr/lib"});
    system_dirs_ = conf_dirs_;
    system_dirs_.insert(system_dirs_.end(), default_dirs64_.begin(),
                        default_dirs64_.end());
    return;
  }
  // musl reads /etc/ld-musl-<arch>.path for its own architecture; all
  // present are read now so that lookups need no I/O later.
  musl_paths_ = detail::read_musl_path_files(root);
  default_dirs64_ = existing_defaults({"/lib", "/usr/local/lib", "/usr/lib"});
  default_dirs32_ = default_dirs64_;
  system_dirs_ =
      musl_paths_.size() == 1 ? musl_paths_.begin()->second : default_dirs64_;
}

const std::vector<std::string>& Resolver::system_dirs() const {
  return system_dirs_;
}

std::vector<Resolver::SearchEntry> Resolver::system_entries(
    const elf::ElfFile& requester) const {
  std::vector<SearchEntry> out;
  if (config_.system_dirs) {
    for (const auto& d : system_dirs_)
      out.push_back({d, FoundVia::default_dir, d});
    return out;
  }
  if (config_.libc == Libc::musl) {
    auto it = musl_paths_.find(detail::musl_arch_name(requester));
    if (it != musl_paths_.end()) {
      for (const auto& d : it->second)
        out.push_back({normalize_dir(d), FoundVia::ld_so_conf, d});
      return out;
    }
  } else {
    for (const auto& d : conf_dirs_)
      out.push_back({d, FoundVia::ld_so_conf, d});
  }
  for (const auto& d : requester.is_64() ? default_dirs64_ : default_dirs32_)
    out.push_back({d, FoundVia::default_dir, d});
  return out;
}

std::vector<Resolver::SearchEntry> Resolver::search_list(
    const elf::ElfFile& requester,
    const std::vector<const elf::ElfFile*>& chain) const {
  Expander expand{config_.lib, config_.platform};
  if (expand.lib.empty()) expand.lib = requester.is_64() ? "lib64" : "lib";
  if (expand.platform.empty()) {
    expand.platform = policy_arch(requester);
    if (expand.platform.empty()) expand.platform = requester.machine_name();
  }
  std::vector<SearchEntry> out;
  auto add_list = [&](std::string_view list, const elf::ElfFile& owner,
                      FoundVia via) {
    for (const auto& raw : split_path_list(list)) {
      // musl skips empty entries; glibc reads them as ".".
      if (raw.empty() && config_.libc == Libc::musl) continue;
      out.push_back({normalize_dir(expand(raw, owner)), via, raw});
    }
  };
  // LD_LIBRARY_PATH's $ORIGIN is the executable's (the analysed file's).
  const elf::ElfFile& main_object = chain.empty() ? requester : *chain.front();
  auto add_environment = [&] {
    bool skip_empty = config_.libc == Libc::musl;
    for (const auto& raw : config_.ld_library_path)
      if (!(raw.empty() && skip_empty))
        out.push_back({normalize_dir(expand(raw, main_object)),
                       FoundVia::ld_library_path, raw});
    for (const auto& raw : config_.extra_paths)
      if (!(raw.empty() && skip_empty))
        out.push_back({normalize_dir(expand(raw, main_object)),
                       FoundVia::extra_path, raw});
  };
  // The requester, then the objects that loaded it, nearest first.
  std::vector<const elf::ElfFile*> loaders{&requester};
  loaders.insert(loaders.end(), chain.rbegin(), chain.rend());

  if (config_.libc == Libc::musl) {
    add_environment();
    for (const elf::ElfFile* obj : loaders) {
      auto runpath = obj->runpath();
      auto list = runpath ? runpath : obj->rpath();
      if (!list) continue;
      FoundVia via = obj != &requester ? FoundVia::inherited_rpath
                     : runpath         ? FoundVia::runpath
                                       : FoundVia::rpath;
      add_list(*list, *obj, via);
    }
  } else {
    // A requester with DT_RUNPATH uses no DT_RPATH at all, not even its
    // loaders'; a loader's own DT_RPATH counts only if it has no DT_RUNPATH.
    if (!requester.runpath()) {
      for (const elf::ElfFile* obj : loaders) {
        if (obj->runpath()) continue;
        if (auto rpath = obj->rpath())
          add_list(
              *rpath, *obj,
              obj == &requester ? FoundVia::rpath : FoundVia::inherited_rpath);
      }
    }
    add_environment();
    if (auto runpath = requester.runpath())
      add_list(*runpath, requester, FoundVia::runpath);
  }
  auto system = system_entries(requester);
  out.insert(out.end(), system.begin(), system.end());
  return out;
}

LddTree Resolver::tree(
    const fs::path& file,
    const std::function<bool(const LibraryNode&)>& prune) const {
  return tree(
      config_.open_elf ? config_.open_elf(file) : elf::ElfFile::open(file),
      file, prune);
}

LddTree Resolver::tree(
    const elf::ElfFile& opened_root, const fs::path& file,
    const std::function<bool(const LibraryNode&)>& prune) const {
  LddTree result;
  result.path = file;
  auto open = [&](const fs::path& path) {
    return std::make_unique<elf::ElfFile>(
        config_.open_elf ? config_.open_elf(path) : elf::ElfFile::open(path));
  };
  // Opened (once) by the given name, so that a missing or non-ELF file is
  // reported as such. $ORIGIN is the directory of the file's real path (as
  // ld.so takes it from /proc/self/exe): the same bytes are viewed under
  // that name rather than the file read again.
  auto root = std::make_unique<elf::ElfFile>(opened_root);
  std::error_code ec;
  fs::path real = fs::canonical(file, ec);
  if (!ec && real != file) {
    auto keep = std::make_shared<elf::ElfFile>(std::move(*root));
    root = std::make_unique<elf::ElfFile>(keep->bytes().renamed(real.string()),
                                          keep);
  }
  if (auto interp = root->interpreter())
    result.interpreter = std::string(*interp);
  for (auto n : root->needed()) result.needed.emplace_back(n);
  if (auto r = root->rpath()) result.rpath = std::string(*r);
  if (auto r = root->runpath()) result.runpath = std::string(*r);

  struct Pending {
    const elf::ElfFile* elf;
    std::vector<const elf::ElfFile*> chain;  // loaders above, root first
    std::string name;                        // for needed_by
  };
  std::vector<std::unique_ptr<elf::ElfFile>> opened;
  opened.push_back(std::move(root));
  std::deque<Pending> queue;
  queue.push_back({opened.front().get(), {}, file.string()});
  std::unordered_set<std::string> resolved;  // sonames

  while (!queue.empty()) {
    Pending item = std::move(queue.front());
    queue.pop_front();
    std::optional<std::vector<SearchEntry>> list;  // computed when needed
    for (std::string_view needed : item.elf->needed()) {
      std::string soname(needed);
      if (resolved.count(soname)) continue;
      LibraryNode node;
      node.soname = soname;
      node.needed_by = item.name;
      std::unique_ptr<elf::ElfFile> found;

      auto try_candidate = [&](const std::string& candidate, FoundVia via,
                               const std::string& raw) {
        // Under --root the file a chrooted loader reaches (links in the
        // tree followed inside it); the candidate's name is what it prints.
        const std::string target = detail::in_root(config_.root, candidate);
        if (!is_regular(target)) return false;
        std::unique_ptr<elf::ElfFile> lib;
        try {
          lib = open(target);
        } catch (const Error& e) {
          node.skipped.push_back({candidate, "not loadable: " + e.message()});
          return false;
        }
        std::string why;
        if (!compatible(*item.elf, *lib, &why)) {
          node.skipped.push_back({candidate, why});
          return false;
        }
        node.path = candidate;
        node.realpath = real_path(target);
        node.via = via;
        node.search_dir = raw;
        found = std::move(lib);
        return true;
      };

      if (soname.find('/') != std::string::npos) {
        try_candidate(soname, FoundVia::path, "");
      } else {
        if (!list) list = search_list(*item.elf, item.chain);
        for (const auto& entry : *list)
          if (try_candidate(join_dir(entry.dir, soname), entry.via, entry.raw))
            break;
      }
      if (found) {
        for (auto n : found->needed()) node.needed.emplace_back(n);
        if (auto r = found->rpath()) node.rpath = std::string(*r);
        if (auto r = found->runpath()) node.runpath = std::string(*r);
      }
      resolved.insert(soname);
      result.libraries.push_back(std::move(node));
      if (found && !(prune && prune(result.libraries.back()))) {
        Pending next{found.get(), item.chain, soname};
        next.chain.push_back(item.elf);
        opened.push_back(std::move(found));
        queue.push_back(std::move(next));
      }
    }
  }
  return result;
}

}  // namespace libpkg::deps
