// SPDX-License-Identifier: BSD-3-Clause
// System search directories: ld.so.conf (glibc) and ld-musl-<arch>.path.
#include <glob.h>
#include <sys/stat.h>
#include <unistd.h>

#include <deque>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "libpkg/base/fd.hpp"
#include "libpkg/deps/resolve.hpp"
#include "libpkg/elf/format.hpp"
#include "system_paths.hpp"

namespace libpkg::deps {

namespace detail {

namespace {

// `path` as a process chrooted at the root sees it: "." and empty parts
// dropped, ".." removing the previous part and stopping at "/".
std::string confine(std::string_view path) {
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  while (start <= path.size()) {
    std::size_t end = path.find('/', start);
    if (end == std::string_view::npos) end = path.size();
    std::string_view part = path.substr(start, end - start);
    if (part == "..") {
      if (!parts.empty()) parts.pop_back();
    } else if (!part.empty() && part != ".") {
      parts.push_back(part);
    }
    start = end + 1;
  }
  std::string out;
  for (auto part : parts) {
    out += '/';
    out += part;
  }
  return out.empty() ? "/" : out;
}

std::string trimmed_root(const std::filesystem::path& root) {
  std::string out = root.string();
  while (out.size() > 1 && out.back() == '/') out.pop_back();
  return out;
}

// Puts the components of `path` in front of `todo`, empty ones dropped.
void push_parts(std::deque<std::string>& todo, std::string_view path) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (start <= path.size()) {
    std::size_t end = path.find('/', start);
    if (end == std::string_view::npos) end = path.size();
    if (end > start) parts.emplace_back(path.substr(start, end - start));
    start = end + 1;
  }
  todo.insert(todo.begin(), parts.begin(), parts.end());
}

// As many symbolic links as the kernel follows in one lookup (MAXSYMLINKS).
constexpr int kMaxSymlinks = 40;

}  // namespace

std::string resolve_in_root(const std::filesystem::path& root,
                            std::string_view path) {
  if (root.empty() || root == "/") return std::string(path);
  // Walked one component at a time, as the kernel does for a process
  // chrooted at `root`: ".." stops at the root, and a symbolic link met on
  // the way is read and its target walked in its place, an absolute target
  // from the root again. A lexical join would follow a link inside the
  // tree (etc/ld.so.conf.d/x.conf -> /etc/host.conf, opt/lib -> /usr/lib)
  // out to the host.
  const std::string base = trimmed_root(root);
  std::vector<std::string> done;
  std::deque<std::string> todo;
  push_parts(todo, path);
  int links = 0;
  auto joined = [&] {
    std::string out = base;
    for (const auto& part : done) out += "/" + part;
    return out;
  };
  while (!todo.empty()) {
    std::string part = std::move(todo.front());
    todo.pop_front();
    if (part == ".") continue;
    if (part == "..") {
      if (!done.empty()) done.pop_back();
      continue;
    }
    done.push_back(std::move(part));
    const std::string here = joined();
    struct stat st {};
    if (::lstat(here.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) continue;
    // Past the kernel's limit the path is left as it is: it names nothing.
    if (++links > kMaxSymlinks) continue;
    std::string target(static_cast<std::size_t>(st.st_size) + 1, '\0');
    ssize_t n = ::readlink(here.c_str(), target.data(), target.size());
    if (n < 0 || static_cast<std::size_t>(n) >= target.size()) continue;
    target.resize(static_cast<std::size_t>(n));
    done.pop_back();
    if (target.starts_with('/')) done.clear();
    push_parts(todo, target);
  }
  return joined();
}

std::string in_root(const std::filesystem::path& root,
                    const std::string& host_path) {
  if (root.empty() || root == "/") return host_path;
  const std::string base = trimmed_root(root);
  if (host_path != base && !host_path.starts_with(base + "/")) return host_path;
  return resolve_in_root(root, std::string_view(host_path).substr(base.size()));
}

std::string under_root(const std::filesystem::path& root,
                       std::string_view path) {
  if (root.empty() || root == "/") return std::string(path);
  std::string inside = confine(path);
  return trimmed_root(root) + (inside == "/" ? "" : inside);
}

std::vector<std::string> parse_musl_path_file(
    const std::filesystem::path& file, const std::filesystem::path& root) {
  std::vector<std::string> out;
  // Unreadable (or a FIFO, refused without blocking): no directories, as
  // musl's loader reads it.
  auto text = try_read_regular_file(in_root(root, file.string()));
  if (!text) return out;
  const std::string& all = text.value();
  size_t start = 0;
  while (start <= all.size()) {
    size_t end = all.find_first_of(":\n", start);
    if (end == std::string::npos) end = all.size();
    std::string entry = all.substr(start, end - start);
    if (!entry.empty()) out.push_back(under_root(root, entry));
    start = end + 1;
  }
  return out;
}

std::map<std::string, std::vector<std::string>> read_musl_path_files(
    const std::filesystem::path& root) {
  std::map<std::string, std::vector<std::string>> out;
  std::string pattern = resolve_in_root(root, "/etc/ld-musl-*.path");
  glob_t g{};
  if (::glob(pattern.c_str(), 0, nullptr, &g) == 0) {
    constexpr std::string_view prefix = "ld-musl-", suffix = ".path";
    for (size_t i = 0; i < g.gl_pathc; ++i) {
      std::string file = g.gl_pathv[i];
      std::string base = std::filesystem::path(file).filename().string();
      std::string arch = base.substr(
          prefix.size(), base.size() - prefix.size() - suffix.size());
      out[arch] = parse_musl_path_file(file, root);
    }
  }
  globfree(&g);
  return out;
}

std::string musl_arch_name(const elf::ElfFile& elf) {
  bool le = elf.is_little_endian();
  switch (elf.machine()) {
    case elf::EM_X86_64:
      return elf.is_64() ? "x86_64" : "x32";
    case elf::EM_386:
      return "i386";
    case elf::EM_AARCH64:
      return le ? "aarch64" : "aarch64_be";
    case elf::EM_ARM:
      // Hard-float is the common case (Alpine armhf/armv7).
      return le ? "armhf" : "armebhf";
    case elf::EM_PPC64:
      return le ? "powerpc64le" : "powerpc64";
    case elf::EM_PPC:
      return "powerpc";
    case elf::EM_S390:
      return "s390x";
    case elf::EM_RISCV:
      return elf.is_64() ? "riscv64" : "riscv32";
    case elf::EM_LOONGARCH:
      return "loongarch64";
    case elf::EM_MIPS:
      return elf.is_64() ? (le ? "mips64el" : "mips64")
                         : (le ? "mipsel" : "mips");
    default:
      return "";
  }
}

}  // namespace detail

namespace {

struct ConfParser {
  std::filesystem::path root;
  std::set<std::string> visited;  // conf files already read: ends cycles
  std::vector<std::string> dirs;
  std::set<std::string> seen_dirs;

  void add_dir(std::string dir) {
    // ldconfig drops trailing slashes and ignores repeated directories.
    while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
    // Relative directories make no sense in the cache (ldconfig warns);
    // they are not searched.
    if (dir.empty() || dir[0] != '/') return;
    std::string real = detail::under_root(root, dir);
    if (seen_dirs.insert(real).second) dirs.push_back(std::move(real));
  }

  void include(const std::filesystem::path& from, const std::string& pattern) {
    std::string full;
    if (pattern.starts_with('/')) {
      full = detail::resolve_in_root(root, pattern);
    } else if (root.empty() || root == "/") {
      full = (from.parent_path() / pattern).string();
    } else {
      // Relative to the including file's directory, taken inside the root
      // (`from` is always under it: every file parsed came from under_root).
      std::string dir = from.parent_path().string();
      std::string prefix = detail::trimmed_root(root);
      std::string_view rel(dir);
      if (rel.starts_with(prefix)) rel.remove_prefix(prefix.size());
      full = detail::resolve_in_root(root, std::string(rel) + "/" + pattern);
    }
    glob_t g{};
    // glob sorts its matches (as ldconfig relies on); a pattern without
    // matches is not an error.
    if (::glob(full.c_str(), 0, nullptr, &g) == 0) {
      std::vector<std::string> files(g.gl_pathv, g.gl_pathv + g.gl_pathc);
      globfree(&g);
      for (const auto& f : files) parse(f);
    } else {
      globfree(&g);
    }
  }

  void parse(const std::filesystem::path& conf) {
    // The file the name reaches (inside the root under --root) is both the
    // file read and the key that ends include cycles.
    std::string file = detail::in_root(root, conf.string());
    if (root.empty() || root == "/") {
      std::error_code ec;
      auto canonical = std::filesystem::weakly_canonical(conf, ec);
      if (!ec) file = canonical.string();
    }
    if (!visited.insert(file).second) return;
    // ldconfig only warns about unreadable files (a FIFO is refused without
    // blocking).
    auto text = try_read_regular_file(file);
    if (!text) return;
    std::istringstream in(text.value());
    std::string line;
    while (std::getline(in, line)) {
      // '#' starts a comment anywhere: the format has no quoting.
      if (auto hash = line.find('#'); hash != std::string::npos)
        line.resize(hash);
      auto is_space = [](char c) {
        return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v';
      };
      size_t b = 0;
      while (b < line.size() && is_space(line[b])) ++b;
      size_t e = line.size();
      while (e > b && is_space(line[e - 1])) --e;
      std::string_view cp(line.data() + b, e - b);
      if (cp.empty()) continue;
      // ldconfig matches "include" exactly and "hwcap" in any case.
      auto keyword = [&](std::string_view word, bool any_case) {
        if (cp.size() <= word.size()) return false;
        for (size_t k = 0; k < word.size(); ++k) {
          char c = cp[k];
          if (any_case && c >= 'A' && c <= 'Z') c = static_cast<char>(c + 32);
          if (c != word[k]) return false;
        }
        return cp[word.size()] == ' ' || cp[word.size()] == '\t';
      };
      if (keyword("include", false)) {
        // Several patterns may follow, separated by blanks.
        std::string_view rest = cp.substr(8);
        size_t i = 0;
        while (i < rest.size()) {
          while (i < rest.size() && (rest[i] == ' ' || rest[i] == '\t')) ++i;
          size_t j = i;
          while (j < rest.size() && rest[j] != ' ' && rest[j] != '\t') ++j;
          if (j > i) include(conf, std::string(rest.substr(i, j - i)));
          i = j;
        }
      } else if (keyword("hwcap", true)) {
        continue;  // obsolete; ldconfig ignores it too
      } else {
        add_dir(std::string(cp));
      }
    }
  }
};

}  // namespace

std::vector<std::string> parse_ld_so_conf(const std::filesystem::path& conf,
                                          const std::filesystem::path& root) {
  ConfParser parser;
  parser.root = root;
  parser.parse(conf);
  return std::move(parser.dirs);
}

}  // namespace libpkg::deps
