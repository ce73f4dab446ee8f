// SPDX-License-Identifier: BSD-3-Clause
#include "libpkg/cppdist/libtorch.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <map>

#include "libpkg/archive/zip_writer.hpp"
#include "libpkg/base/atomic_file.hpp"
#include "libpkg/base/error.hpp"
#include "libpkg/base/fd.hpp"

namespace libpkg::cppdist {
namespace fs = std::filesystem;
namespace {

constexpr std::string_view kRoot = "libtorch/";

bool is_layout_dir(std::string_view name) {
  return std::any_of(std::begin(kLibtorchDirs), std::end(kLibtorchDirs),
                     [&](const char* d) { return name == d; });
}

struct TreeEntry {
  fs::path path;
  struct stat st;
};

struct stat lstat_or_throw(const fs::path& p) {
  struct stat st;
  if (::lstat(p.c_str(), &st) != 0) throw_errno(p.string(), "lstat");
  return st;
}

// A symlink inside the tree must stay inside it: relative, and never climbing
// above the tree root from the link's own directory.
void check_symlink(const fs::path& tree, const fs::path& link,
                   const fs::path& rel) {
  fs::path target = fs::read_symlink(link);
  if (target.is_absolute()) {
    throw Error(Errc::usage, link.string(),
                fmt::format("symlink to absolute path '{}' would dangle or "
                            "leak a build path once unzipped",
                            target.string()));
  }
  int depth = 0;
  for (const fs::path& part : rel.parent_path() / target) {
    if (part == "..") {
      if (--depth < 0) break;
    } else if (part != "." && !part.empty()) {
      ++depth;
    }
  }
  if (depth < 0) {
    throw Error(Errc::usage, link.string(),
                fmt::format("symlink target '{}' points outside {}",
                            target.string(), tree.string()));
  }
}

// Every file, directory and symlink under the layout directories, keyed by
// its name in the zip (sorted, so the archive is the same on every machine).
std::map<std::string, TreeEntry> collect(const fs::path& tree, bool skip_other,
                                         std::vector<fs::path>& skipped) {
  require_directory(tree, "tree");
  for (const char* required : {"lib", "include"}) {
    if (!fs::is_directory(tree / required)) {
      throw Error(Errc::usage, tree.string(),
                  fmt::format("no {}/ directory: a libtorch tree needs lib/ "
                              "and include/ (share/ and bin/ optional)",
                              required));
    }
  }
  std::map<std::string, TreeEntry> out;
  for (const fs::directory_entry& top : fs::directory_iterator(tree)) {
    std::string name = top.path().filename().string();
    if (!is_layout_dir(name) || !top.is_directory() || top.is_symlink()) {
      if (skip_other) {
        skipped.push_back(top.path());
        continue;
      }
      throw Error(Errc::usage, top.path().string(),
                  "unexpected entry: the layout is "
                  "libtorch/{lib,include,share,bin} (directories)");
    }
    out.emplace(std::string(kRoot) + name + "/",
                TreeEntry{top.path(), lstat_or_throw(top.path())});
    for (auto it = fs::recursive_directory_iterator(top.path());
         it != fs::recursive_directory_iterator(); ++it) {
      // lexically: fs::relative would resolve symlinks to their targets.
      fs::path rel = it->path().lexically_relative(tree);
      struct stat st = lstat_or_throw(it->path());
      std::string zip_name = std::string(kRoot) + rel.generic_string();
      if (S_ISDIR(st.st_mode)) {
        zip_name += '/';
      } else if (S_ISLNK(st.st_mode)) {
        check_symlink(tree, it->path(), rel);
      } else if (!S_ISREG(st.st_mode)) {
        throw Error(Errc::usage, it->path().string(),
                    "not a regular file, directory or symlink");
      }
      out.emplace(std::move(zip_name), TreeEntry{it->path(), st});
    }
  }
  return out;
}

std::string one_line(std::string_view what, std::string value) {
  if (value.empty() || value.find('\n') != std::string::npos) {
    throw Error(Errc::usage, std::string(what),
                fmt::format("must be one non-empty line, got '{}'", value));
  }
  return value + "\n";
}

}  // namespace

LibtorchPackResult pack_libtorch(const fs::path& tree, const fs::path& out_dir,
                                 const LibtorchPackOptions& options) {
  std::string version = one_line("build-version", options.name.version);
  std::string hash = one_line("build-hash", options.build_hash);
  LibtorchPackResult result;
  create_output_directory(out_dir);
  std::map<std::string, TreeEntry> entries =
      collect(tree, options.skip_other_entries, result.skipped);
  std::sort(result.skipped.begin(), result.skipped.end());

  result.zip = out_dir / zip_name(options.name);
  archive::ZipWriterOptions zo;
  zo.level = options.level;
  zo.threads = options.threads;
  zo.pool = options.pool;
  zo.timestamp = options.timestamp;
  zo.progress = options.progress;
  zo.cache = options.cache;
  archive::ZipWriter zip(result.zip, zo);

  // Generated members (build-version, directories we add) take the tree's
  // own mtime unless a fixed timestamp makes the whole archive reproducible.
  i64 now = options.timestamp.value_or(lstat_or_throw(tree).st_mtim.tv_sec);
  archive::ZipMemberAttrs root_attrs{.mode = 0755, .mtime = now};
  zip.add_directory(std::string(kRoot), root_attrs);
  for (const char* dir : kLibtorchDirs) {
    // bin/ ships empty (builder-scripts.md §2.3); share/ may be absent in
    // a bare install tree but consumers look for it.
    std::string name = std::string(kRoot) + dir + "/";
    if (!entries.contains(name)) zip.add_directory(name, root_attrs);
  }
  // build-hash and build-version sort before the directories' contents in
  // the listing users see first with `unzip -l`.
  zip.add_bytes(std::string(kRoot) + "build-hash", hash,
                {.mode = 0644, .mtime = now});
  zip.add_bytes(std::string(kRoot) + "build-version", version,
                {.mode = 0644, .mtime = now});
  for (auto& [name, e] : entries) {
    archive::ZipMemberAttrs attrs{.mode = e.st.st_mode & 0777,
                                  .mtime = e.st.st_mtim.tv_sec};
    if (S_ISDIR(e.st.st_mode)) {
      zip.add_directory(name, attrs);
    } else if (S_ISLNK(e.st.st_mode)) {
      zip.add_symlink(name, fs::read_symlink(e.path).string(), attrs);
    } else {
      zip.add_file(name, e.path, attrs);
      ++result.files;
      result.bytes += static_cast<u64>(e.st.st_size);
    }
  }
  // The -latest copies come from the bytes just written (the writer's
  // descriptor), not from reopening the zip's path, which another process
  // may have replaced since or which may be a device keeping nothing.
  if (options.write_latest)
    for (const std::string& latest : latest_names(options.name))
      result.latest.push_back(out_dir / latest);
  zip.commit(result.latest);
  // The writer's count, not the file's size now: another process may have
  // replaced the file since (and a device or FIFO keeps no size).
  result.zip_size = zip.size();
  result.latest_sizes.assign(result.latest.size(), result.zip_size);
  return result;
}

std::vector<LayoutProblem> check_libtorch_zip(const archive::ZipReader& zip) {
  std::vector<LayoutProblem> problems;
  auto problem = [&](std::string member, std::string message) {
    problems.push_back({std::move(member), std::move(message)});
  };
  bool has_dir[std::size(kLibtorchDirs)] = {};
  bool lib_has_file = false;
  for (const archive::ZipEntry& e : zip.entries()) {
    if (!e.name.starts_with(kRoot)) {
      problem(e.name, "outside the libtorch/ root directory");
      continue;
    }
    std::string_view rest = std::string_view(e.name).substr(kRoot.size());
    for (std::size_t i = 0; i < std::size(kLibtorchDirs); ++i) {
      std::string_view dir = kLibtorchDirs[i];
      if (rest.starts_with(dir) && rest.size() > dir.size() &&
          rest[dir.size()] == '/') {
        has_dir[i] = true;
        if (i == 0 && !e.is_directory()) lib_has_file = true;
      }
    }
  }
  for (std::size_t i = 0; i < std::size(kLibtorchDirs); ++i) {
    if (!has_dir[i]) {
      problem(fmt::format("{}{}/", kRoot, kLibtorchDirs[i]), "missing");
    }
  }
  if (has_dir[0] && !lib_has_file) {
    problem(std::string(kRoot) + "lib/", "contains no files");
  }

  auto read_line = [&](std::string_view file) -> std::optional<std::string> {
    std::string member = std::string(kRoot) + std::string(file);
    const archive::ZipEntry* e = zip.find(member);
    if (!e) {
      problem(member, "missing");
      return std::nullopt;
    }
    std::string text = zip.read_text(*e);
    if (text.ends_with('\n')) text.pop_back();
    if (text.empty() || text.find('\n') != std::string::npos) {
      problem(member, fmt::format("must be one non-empty line, has {} bytes",
                                  text.size()));
      return std::nullopt;
    }
    return text;
  };
  std::optional<std::string> version = read_line("build-version");
  read_line("build-hash");

  std::string file_name = zip.path().filename().string();
  if (version && !file_name.ends_with("-latest.zip")) {
    try {
      LibtorchName name = parse_zip_name(file_name);
      if (name.version != *version) {
        problem(std::string(kRoot) + "build-version",
                fmt::format("says '{}' but the file name says '{}'", *version,
                            name.version));
      }
    } catch (const Error& e) {
      problem("", e.message());
    }
  }
  return problems;
}

}  // namespace libpkg::cppdist
