// SPDX-License-Identifier: BSD-3-Clause
// Staged-tree walking, info/ split, softlink resolution, scratch dirs.
#include "tree.hpp"

#include <stdlib.h>
#include <sys/stat.h>

#include <algorithm>

#include "libpkg/base/error.hpp"
#include "libpkg/base/fd.hpp"

namespace libpkg::conda::detail {
namespace fs = std::filesystem;

namespace {

void walk(const fs::path& root, const fs::path& dir, const std::string& rel,
          std::vector<StagedEntry>& out) {
  std::error_code ec;
  fs::directory_iterator it(dir, ec);
  if (ec) throw Error(Errc::io, dir.string(), "cannot list: " + ec.message());
  bool empty = true;
  for (const fs::directory_entry& child : it) {
    empty = false;
    std::string name = child.path().filename().string();
    std::string path = rel.empty() ? name : rel + "/" + name;
    struct stat st {};
    if (::lstat(child.path().c_str(), &st) != 0) {
      throw_errno(child.path().string(), "lstat");
    }
    StagedEntry e;
    e.path = path;
    e.source = child.path();
    e.mode = st.st_mode & 0777;
    if (S_ISLNK(st.st_mode)) {
      e.kind = archive::TarKind::symlink;
      e.mode = 0777;
      e.link_target = fs::read_symlink(child.path(), ec).string();
      if (ec) throw Error(Errc::io, path, "readlink: " + ec.message());
      out.push_back(std::move(e));
    } else if (S_ISDIR(st.st_mode)) {
      std::size_t before = out.size();
      walk(root, child.path(), path, out);
      if (out.size() == before) {
        e.kind = archive::TarKind::directory;
        out.push_back(std::move(e));
      }
    } else if (S_ISREG(st.st_mode)) {
      e.kind = archive::TarKind::file;
      out.push_back(std::move(e));
    } else {
      throw Error(Errc::usage, child.path().string(),
                  "device nodes, FIFOs and sockets cannot be packaged");
    }
  }
  (void)empty;
}

// Lexically normalises `base_dir/target`; nullopt when it climbs above the
// root.
std::optional<std::string> join_inside(const std::string& base_dir,
                                       const std::string& target) {
  std::vector<std::string> parts;
  auto push = [&](const std::string& s) -> bool {
    std::size_t start = 0;
    while (start <= s.size()) {
      std::size_t end = s.find('/', start);
      if (end == std::string::npos) end = s.size();
      std::string part = s.substr(start, end - start);
      if (part == "..") {
        if (parts.empty()) return false;
        parts.pop_back();
      } else if (!part.empty() && part != ".") {
        parts.push_back(part);
      }
      start = end + 1;
    }
    return true;
  };
  if (!push(base_dir) || !push(target)) return std::nullopt;
  std::string out;
  for (const std::string& p : parts) out += (out.empty() ? "" : "/") + p;
  return out;
}

}  // namespace

std::vector<StagedEntry> walk_tree(const fs::path& root) {
  require_directory(root, "package tree");
  std::vector<StagedEntry> out;
  walk(root, root, "", out);
  std::sort(out.begin(), out.end(),
            [](const StagedEntry& a, const StagedEntry& b) {
              return a.path < b.path;
            });
  return out;
}

bool is_info_path(const std::string& path) {
  return path == "info" || path.rfind("info/", 0) == 0;
}

std::optional<std::string> resolve_softlink(
    const std::string& path, const std::string& target,
    const std::function<std::optional<MemberKind>(const std::string&)>&
        kind_of) {
  std::string current = path;
  std::string link = target;
  for (int hops = 0; hops < 40; ++hops) {
    if (link.empty() || link.front() == '/') return std::nullopt;
    std::size_t slash = current.rfind('/');
    std::string dir =
        slash == std::string::npos ? "" : current.substr(0, slash);
    std::optional<std::string> next = join_inside(dir, link);
    if (!next || next->empty()) return std::nullopt;
    std::optional<MemberKind> kind = kind_of(*next);
    if (!kind) return std::nullopt;
    if (kind->kind == archive::TarKind::file) return next;
    if (kind->kind != archive::TarKind::symlink) return std::nullopt;
    current = *next;
    link = kind->link_target;
  }
  return std::nullopt;
}

archive::TarEntry to_tar_entry(const StagedEntry& e) {
  archive::TarEntry t;
  t.path = e.path;
  t.kind = e.kind;
  t.mode = e.mode;
  t.link_target = e.link_target;
  if (e.kind == archive::TarKind::file)
    t.content = archive::file_source(e.source);
  return t;
}

}  // namespace libpkg::conda::detail
