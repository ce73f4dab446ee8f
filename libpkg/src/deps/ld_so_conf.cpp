// SPDX-License-Identifier: BSD-3-Clause
// System search directories: ld.so.conf (glibc) and ld-musl-<arch>.path.
#include <glob.h>

#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

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

}  // namespace

std::string under_root(const std::filesystem::path& root,
                       std::string_view path) {
  if (root.empty() || root == "/") return std::string(path);
  std::string in_root = confine(path);
  return trimmed_root(root) + (in_root == "/" ? "" : in_root);
}

std::vector<std::string> parse_musl_path_file(
    const std::filesystem::path& file, const std::filesystem::path& root) {
  std::ifstream in(file);
  std::vector<std::string> out;
  if (!in) return out;
  std::stringstream text;
  text << in.rdbuf();
  std::string all = text.str();
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
  std::string pattern = under_root(root, "/etc/ld-musl-*.path");
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
      full = detail::under_root(root, pattern);
    } else if (root.empty() || root == "/") {
      full = (from.parent_path() / pattern).string();
    } else {
      // Relative to the including file's directory, taken inside the root
      // (`from` is always under it: every file parsed came from under_root).
      std::string dir = from.parent_path().string();
      std::string prefix = detail::trimmed_root(root);
      std::string_view in_root(dir);
      if (in_root.starts_with(prefix)) in_root.remove_prefix(prefix.size());
      full = detail::under_root(root, std::string(in_root) + "/" + pattern);
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
    std::error_code ec;
    auto canonical = std::filesystem::weakly_canonical(conf, ec);
    std::string key = ec ? conf.string() : canonical.string();
    if (!visited.insert(key).second) return;
    std::ifstream in(conf);
    if (!in) return;  // ldconfig only warns about unreadable files
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
