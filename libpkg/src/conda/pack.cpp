// SPDX-License-Identifier: BSD-3-Clause
// pack(): staged prefix + metadata -> info/ files -> .conda / .tar.bz2.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <map>
#include <set>

#include "libpkg/archive/source.hpp"
#include "libpkg/base/error.hpp"
#include "libpkg/base/fd.hpp"
#include "libpkg/base/thread_pool.hpp"
#include "libpkg/conda/package.hpp"
#include "tree.hpp"

namespace libpkg::conda {
namespace fs = std::filesystem;
using archive::TarEntry;
using archive::TarKind;

namespace {

const std::set<std::string> kGenerated = {"info/index.json", "info/paths.json",
                                          "info/files", "info/about.json",
                                          "info/has_prefix"};

TarEntry text_member(const std::string& path, const std::string& text) {
  TarEntry e;
  e.path = path;
  e.kind = TarKind::file;
  e.mode = 0644;
  e.content = archive::bytes_source(std::string_view(text), path);
  return e;
}

// Reads in bounded chunks (see ContentScanner for why not mmap).
FileScan scan_file(const fs::path& path, std::string_view placeholder) {
  Fd fd = open_regular(path);
  ContentScanner scanner(placeholder);
  read_chunks(fd.get(), path.string(), std::size_t{4} << 20,
              [&](std::span<const u8> piece) { scanner.update(piece); });
  return scanner.finish();
}

}  // namespace

PackResult pack(const fs::path& prefix, const CondaMetadata& input,
                const PackOptions& options) {
  const CondaMetadata meta = complete_metadata(input);
  std::vector<detail::StagedEntry> staged = detail::walk_tree(prefix);

  std::vector<const detail::StagedEntry*> pkg_entries;
  std::vector<const detail::StagedEntry*> user_info;
  for (const detail::StagedEntry& e : staged) {
    if (detail::is_info_path(e.path)) {
      if (kGenerated.count(e.path) != 0) {
        throw Error(Errc::usage, e.source.string(),
                    "collides with the generated " + e.path);
      }
      user_info.push_back(&e);
    } else {
      pkg_entries.push_back(&e);
    }
  }

  // One pass per file: hash, classify, search the prefix. The same bytes
  // are read again by the tar writer (from the page cache).
  std::vector<FileScan> scans(pkg_entries.size());
  PoolRef pool(options.pool, options.threads);
  pool.parallel_for(pkg_entries.size(), [&](std::size_t i) {
    const detail::StagedEntry& e = *pkg_entries[i];
    if (e.kind != TarKind::file) return;
    scans[i] = scan_file(e.source, options.placeholder);
  });
  std::map<std::string, std::size_t> index_of;
  for (std::size_t i = 0; i < pkg_entries.size(); ++i) {
    index_of[pkg_entries[i]->path] = i;
  }
  auto kind_of =
      [&](const std::string& path) -> std::optional<detail::MemberKind> {
    auto it = index_of.find(path);
    if (it == index_of.end()) return std::nullopt;
    const detail::StagedEntry& e = *pkg_entries[it->second];
    return detail::MemberKind{e.kind, e.link_target};
  };

  PackResult result;
  for (std::size_t i = 0; i < pkg_entries.size(); ++i) {
    const detail::StagedEntry& e = *pkg_entries[i];
    PathRecord r;
    r.path = e.path;
    if (e.kind == TarKind::file) {
      r.type = PathType::hardlink;
      r.sha256 = Sha256::hex(scans[i].sha256);
      r.size = scans[i].size;
      if (scans[i].has_prefix) {
        r.prefix_placeholder = options.placeholder;
        r.file_mode = scans[i].mode;
      }
    } else if (e.kind == TarKind::symlink) {
      // As conda-build: a link to a file records that file's hash and size;
      // any other link the hash of its target string and size 0.
      r.type = PathType::softlink;
      std::optional<std::string> file =
          detail::resolve_softlink(e.path, e.link_target, kind_of);
      if (file) {
        const FileScan& s = scans[index_of.at(*file)];
        r.sha256 = Sha256::hex(s.sha256);
        r.size = s.size;
      } else {
        Sha256 h;
        h.update(e.link_target);
        r.sha256 = Sha256::hex(h.finish());
        r.size = 0;
      }
    } else {
      r.type = PathType::directory;
    }
    result.paths.push_back(std::move(r));
  }

  std::vector<TarEntry> info;
  for (const detail::StagedEntry* e : user_info) {
    info.push_back(detail::to_tar_entry(*e));
  }
  info.push_back(text_member("info/about.json", render_about_json(meta)));
  info.push_back(text_member("info/files", render_files(result.paths)));
  std::string has_prefix = render_has_prefix(result.paths);
  if (!has_prefix.empty()) {
    info.push_back(text_member("info/has_prefix", has_prefix));
  }
  info.push_back(text_member("info/index.json",
                             render_index_json(meta, options.timestamp_ms)));
  info.push_back(
      text_member("info/paths.json", render_paths_json(result.paths)));
  std::sort(info.begin(), info.end(), [](const TarEntry& a, const TarEntry& b) {
    return a.path < b.path;
  });

  std::vector<TarEntry> pkg;
  pkg.reserve(pkg_entries.size());
  for (const detail::StagedEntry* e : pkg_entries) {
    pkg.push_back(detail::to_tar_entry(*e));
  }

  detail::WriteSettings settings;
  settings.formats = options.formats;
  settings.zstd_level = options.zstd_level;
  settings.bzip2_level = options.bzip2_level;
  settings.threads = options.threads;
  settings.pool = pool.get();
  settings.cache = options.cache;
  settings.progress = options.progress;
  // Floor division, so timestamps before 1970 stay consistent.
  settings.mtime = options.timestamp_ms >= 0
                       ? options.timestamp_ms / 1000
                       : -((-options.timestamp_ms + 999) / 1000);
  result.outputs = detail::write_package_files(
      options.out_dir, package_stem(meta), info, pkg, settings, &result.sizes);
  return result;
}

}  // namespace libpkg::conda
