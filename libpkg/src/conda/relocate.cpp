// SPDX-License-Identifier: BSD-3-Clause
// Relocation of a staged conda prefix: absolute in-prefix RPATH entries
// become $ORIGIN-relative, outside ones are dropped, $PREFIX/lib is added.
#include "libpkg/conda/relocate.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <mutex>

#include "libpkg/base/error.hpp"
#include "libpkg/base/fd.hpp"
#include "libpkg/base/thread_pool.hpp"
#include "libpkg/elf/sniff.hpp"
#include "libpkg/elf/view.hpp"
#include "tree.hpp"

namespace libpkg::conda {
namespace fs = std::filesystem;

namespace {

constexpr i64 kDtNeeded = 1;

std::vector<std::string> split_entries(const std::string& value) {
  std::vector<std::string> out;
  if (value.empty()) return out;
  std::size_t start = 0;
  for (;;) {
    std::size_t colon = value.find(':', start);
    out.push_back(value.substr(start, colon - start));
    if (colon == std::string::npos) break;
    start = colon + 1;
  }
  return out;
}

std::string normalize_absolute(const std::string& path) {
  std::string s = fs::path(path).lexically_normal().string();
  while (s.size() > 1 && s.back() == '/') s.pop_back();
  return s;
}

bool starts_with_origin(const std::string& entry) {
  return entry.rfind("$ORIGIN", 0) == 0 || entry.rfind("${ORIGIN}", 0) == 0;
}

std::vector<std::string> components(const std::string& path) {
  std::vector<std::string> out;
  for (const fs::path& part : fs::path(path).lexically_normal()) {
    std::string s = part.string();
    if (s.empty() || s == ".") continue;
    out.push_back(s);
  }
  return out;
}

// `$ORIGIN/<path from the file's directory to the prefix directory rel>`.
std::string origin_relative(const std::string& file, const std::string& rel) {
  std::vector<std::string> from = components(file);
  if (!from.empty()) from.pop_back();  // the file's own name
  std::vector<std::string> to = components(rel);
  std::size_t common = 0;
  while (common < from.size() && common < to.size() &&
         from[common] == to[common])
    ++common;
  std::string out = "$ORIGIN";
  for (std::size_t i = common; i < from.size(); ++i) out += "/..";
  for (std::size_t i = common; i < to.size(); ++i) out += "/" + to[i];
  return out;
}

// The prefix-relative directory an absolute entry names, when it is inside
// one of the build prefixes ("" for the prefix itself).
std::optional<std::string> inside_prefix(
    const std::string& entry, const std::vector<std::string>& prefixes) {
  std::string e = normalize_absolute(entry);
  for (const std::string& p : prefixes) {
    if (e == p) return std::string();
    if (p == "/") return e.substr(1);
    if (e.size() > p.size() && e.compare(0, p.size(), p) == 0 &&
        e[p.size()] == '/')
      return e.substr(p.size() + 1);
  }
  return std::nullopt;
}

struct Candidate {
  std::string path;  // prefix-relative
  fs::path source;
};

// Regular files outside info/, in path order.
std::vector<Candidate> regular_files(const fs::path& prefix,
                                     std::size_t& count) {
  std::vector<Candidate> out;
  count = 0;
  for (const detail::StagedEntry& e : detail::walk_tree(prefix)) {
    if (e.kind != archive::TarKind::file) continue;
    ++count;
    if (detail::is_info_path(e.path)) continue;
    out.push_back({e.path, e.source});
  }
  return out;
}

RelocationPlan plan_files(const fs::path& prefix,
                          const RelocateOptions& options) {
  require_directory(prefix, "staged prefix");
  RelocationPlan plan;
  std::vector<Candidate> files = regular_files(prefix, plan.files);
  std::vector<std::optional<FileRelocation>> results(files.size());
  std::vector<std::string> unreadable(files.size());
  std::vector<char> is_elf(files.size(), 0);
  PoolRef pool(options.pool, options.threads);
  pool.parallel_for(files.size(), [&](std::size_t i) {
    const Candidate& c = files[i];
    if (!elf::sniff_elf_file(c.source)) return;
    try {
      elf::ElfFile elf = elf::ElfFile::open(c.source);
      if (!elf.has_dynamic()) return;
      is_elf[i] = 1;
      std::optional<std::string_view> runpath = elf.runpath();
      std::optional<std::string_view> rpath = elf.rpath();
      bool needs = false;
      for (const elf::DynamicEntry& d : elf.dynamic())
        if (d.tag == kDtNeeded) needs = true;
      // Nothing to search for and nothing to fix: leave the file alone.
      if (!needs && !runpath && !rpath) return;
      std::string old_value(runpath ? *runpath : rpath ? *rpath : "");
      std::string old_tag = runpath ? "RUNPATH" : rpath ? "RPATH" : "";
      FileRelocation r =
          relocate_search_path(c.path, old_value, old_tag, options);
      if (runpath && rpath)
        r.notes.push_back(fmt::format(
            "had both RPATH '{}' and RUNPATH; ld.so uses only the RUNPATH",
            *rpath));
      if (r.changed() || !r.notes.empty()) results[i] = std::move(r);
    } catch (const Error& e) {
      if (e.code() != Errc::format && e.code() != Errc::unsupported) throw;
      unreadable[i] = fmt::format("{}: not relocated: {}", c.path, e.message());
    }
  });
  for (std::size_t i = 0; i < files.size(); ++i) {
    if (is_elf[i]) ++plan.elf_files;
    if (results[i]) plan.relocations.push_back(std::move(*results[i]));
    if (!unreadable[i].empty()) plan.notes.push_back(unreadable[i]);
  }
  return plan;
}

// Hard link, or a copy where linking is impossible (another filesystem, a
// file we may not link, the link count limit).
void link_or_copy(const fs::path& from, const fs::path& to) {
  if (::link(from.c_str(), to.c_str()) == 0) return;
  int err = errno;
  if (err != EXDEV && err != EPERM && err != EMLINK && err != EACCES) {
    errno = err;
    throw_errno(to.string(), "cannot link " + from.string());
  }
  std::error_code ec;
  fs::copy_file(from, to, ec);
  if (ec)
    throw Error(Errc::io, to.string(),
                "cannot copy " + from.string() + ": " + ec.message());
}

void stage_tree(const fs::path& prefix, const fs::path& staging) {
  std::error_code ec;
  fs::create_directories(staging, ec);
  if (ec)
    throw Error(Errc::io, staging.string(), "cannot create: " + ec.message());
  if (!fs::is_empty(staging, ec) || ec)
    throw Error(Errc::usage, staging.string(),
                "the staging directory must be empty");
  for (const detail::StagedEntry& e : detail::walk_tree(prefix)) {
    fs::path dest = staging / e.path;
    fs::create_directories(dest.parent_path(), ec);
    if (ec)
      throw Error(Errc::io, dest.parent_path().string(),
                  "cannot create: " + ec.message());
    switch (e.kind) {
      case archive::TarKind::file:
        link_or_copy(e.source, dest);
        break;
      case archive::TarKind::symlink:
        fs::create_symlink(e.link_target, dest, ec);
        if (ec)
          throw Error(Errc::io, dest.string(),
                      "cannot create symlink: " + ec.message());
        break;
      case archive::TarKind::directory:
        fs::create_directory(dest, ec);
        if (!ec) fs::permissions(dest, static_cast<fs::perms>(e.mode), ec);
        if (ec)
          throw Error(Errc::io, dest.string(),
                      "cannot create: " + ec.message());
        break;
      default:
        throw Error(Errc::usage, e.source.string(),
                    "cannot stage this kind of file");
    }
  }
}

}  // namespace

std::size_t RelocationPlan::changed_count() const {
  return static_cast<std::size_t>(
      std::count_if(relocations.begin(), relocations.end(),
                    [](const FileRelocation& r) { return r.changed(); }));
}

FileRelocation relocate_search_path(const std::string& path,
                                    const std::string& old_value,
                                    const std::string& old_tag,
                                    const RelocateOptions& options) {
  std::vector<std::string> prefixes;
  for (const std::string& p : options.build_prefixes) {
    if (p.empty()) continue;
    if (p.front() != '/')
      throw Error(Errc::usage, p,
                  "a build prefix must be an absolute directory");
    prefixes.push_back(normalize_absolute(p));
  }
  FileRelocation r;
  r.path = path;
  r.old_value = old_value;
  r.old_tag = old_tag;
  std::vector<std::string> entries;
  auto add = [&entries](const std::string& e) {
    if (std::find(entries.begin(), entries.end(), e) == entries.end())
      entries.push_back(e);
  };
  for (const std::string& entry : split_entries(old_value)) {
    if (entry.empty()) {
      // ld.so reads an empty entry as the working directory.
      r.notes.push_back("dropped an empty entry (the working directory)");
    } else if (starts_with_origin(entry) || entry.front() == '$') {
      add(entry);  // already relative to the file, or $LIB/$PLATFORM
    } else if (entry.front() == '/') {
      if (std::optional<std::string> rel = inside_prefix(entry, prefixes)) {
        add(origin_relative(path, *rel));
      } else if (options.outside == OutsideRpath::keep) {
        add(entry);
        r.notes.push_back(
            fmt::format("kept '{}' (outside the prefix, as asked)", entry));
      } else {
        r.notes.push_back(
            fmt::format("dropped '{}' (outside the prefix)", entry));
      }
    } else if (options.outside == OutsideRpath::keep) {
      add(entry);
      r.notes.push_back(fmt::format(
          "kept '{}' (relative to the working directory, as asked)", entry));
    } else {
      r.notes.push_back(fmt::format(
          "dropped '{}' (relative to the working directory)", entry));
    }
  }
  for (const std::string& dir : options.add_dirs) {
    if (dir.empty()) continue;
    if (dir.front() == '/' ||
        fs::path(dir).lexically_normal().string().rfind("..", 0) == 0)
      throw Error(Errc::usage, dir,
                  "an added search directory must be relative to the prefix "
                  "and stay inside it");
    add(origin_relative(path, dir));
  }
  for (const std::string& e : entries) {
    if (!r.new_value.empty()) r.new_value += ':';
    r.new_value += e;
  }
  if (r.new_value.empty()) {
    r.new_tag.clear();
  } else if (options.tag == elf::RpathTag::rpath) {
    r.new_tag = "RPATH";
  } else if (options.tag == elf::RpathTag::runpath) {
    r.new_tag = "RUNPATH";
  } else {
    r.new_tag = old_tag.empty() ? "RUNPATH" : old_tag;
  }
  return r;
}

RelocationPlan plan_relocation(const fs::path& prefix,
                               const RelocateOptions& options) {
  return plan_files(prefix, options);
}

RelocationPlan relocate_into(const fs::path& prefix, const fs::path& staging,
                             const RelocateOptions& options) {
  RelocationPlan plan = plan_files(prefix, options);
  stage_tree(prefix, staging);
  PoolRef pool(options.pool, options.threads);
  pool.parallel_for(plan.relocations.size(), [&](std::size_t i) {
    const FileRelocation& r = plan.relocations[i];
    if (!r.changed()) return;
    elf::EditOptions edit;
    if (r.new_value.empty()) {
      edit.rpath_op = elf::RpathOp::remove;
    } else {
      edit.rpath_op = elf::RpathOp::set;
      edit.rpath = r.new_value;
      edit.rpath_tag =
          r.new_tag == "RPATH" ? elf::RpathTag::rpath : elf::RpathTag::runpath;
    }
    fs::path file = staging / r.path;
    // Atomic: a new file renamed over the hard link, never a write into
    // the inode the input prefix shares.
    elf::edit_file(file, file, edit, WriteMode::atomic);
  });
  return plan;
}

}  // namespace libpkg::conda
