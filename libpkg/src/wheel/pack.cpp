// SPDX-License-Identifier: BSD-3-Clause
// `wheel pack`: an unpacked wheel tree → a .whl (see wheel.hpp).
#include <libdeflate.h>
#include <sys/stat.h>

#include <algorithm>
#include <regex>
#include <unordered_map>

#include "libpkg/archive/zip_writer.hpp"
#include "libpkg/base/atomic_file.hpp"
#include "libpkg/base/error.hpp"
#include "libpkg/base/fd.hpp"
#include "libpkg/base/mapped_file.hpp"
#include "libpkg/base/sha256.hpp"
#include "libpkg/base/thread_pool.hpp"
#include "libpkg/wheel/metadata.hpp"
#include "libpkg/wheel/record.hpp"
#include "libpkg/wheel/wheel.hpp"

namespace fs = std::filesystem;

namespace libpkg::wheel {

namespace {

struct TreeFile {
  std::string arcname;
  fs::path path;
  u64 size = 0;
  unsigned mode = 0644;
  i64 mtime = 0;
};

// os.walk(top-down) with sorted names: a directory's files, then its
// subdirectories. Symlinks to files are followed; a symlink to a directory
// is refused (os.walk would silently skip it, losing content).
void walk(const fs::path& dir, const std::string& prefix,
          std::vector<TreeFile>& out) {
  std::vector<std::string> names;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end;
       it.increment(ec))
    names.push_back(it->path().filename().string());
  if (ec) throw Error(Errc::io, dir.string(), "cannot list: " + ec.message());
  std::sort(names.begin(), names.end());
  std::vector<std::string> subdirs;
  for (const auto& n : names) {
    fs::path p = dir / n;
    struct stat lst {
    }, st{};
    if (::lstat(p.c_str(), &lst) != 0) throw_errno(p.string(), "lstat");
    if (::stat(p.c_str(), &st) != 0) throw_errno(p.string(), "stat");
    if (S_ISDIR(st.st_mode)) {
      if (S_ISLNK(lst.st_mode))
        throw Error(Errc::unsupported, p.string(),
                    "symlink to a directory inside a wheel tree (wheels "
                    "can't hold directory links; copy or remove it)");
      subdirs.push_back(n);
    } else if (S_ISREG(st.st_mode)) {
      TreeFile f;
      f.arcname = prefix + n;
      f.path = p;
      f.size = static_cast<u64>(st.st_size);
      f.mode = (st.st_mode & 0111) ? 0755 : 0644;
      f.mtime = st.st_mtime;
      out.push_back(std::move(f));
    } else {
      throw Error(Errc::unsupported, p.string(),
                  "not a regular file or directory");
    }
  }
  for (const auto& n : subdirs) walk(dir / n, prefix + n + "/", out);
}

// The wheel's .dist-info directory: exactly one top-level
// "<name>-<version>.dist-info" with a version starting with a digit.
std::string find_tree_dist_info(const fs::path& dir) {
  const std::regex re("^[^-]+-[0-9][^-]*\\.dist-info$");
  std::vector<std::string> found;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end;
       it.increment(ec)) {
    std::string n = it->path().filename().string();
    if (it->is_directory() && std::regex_match(n, re)) found.push_back(n);
  }
  if (ec) throw Error(Errc::io, dir.string(), "cannot list: " + ec.message());
  if (found.size() != 1) {
    std::sort(found.begin(), found.end());
    std::string list;
    for (const auto& f : found) list += " " + f;
    throw Error(Errc::format, dir.string(),
                "expected exactly one <name>-<version>.dist-info directory, "
                "found " +
                    std::to_string(found.size()) + (list.empty() ? "" : ":") +
                    list);
  }
  return found[0];
}

std::string read_text_file(const fs::path& p) {
  auto m = MappedFile::open(p);
  return std::string(reinterpret_cast<const char*>(m.data()), m.size());
}

// Content identity of a tree file with a member of the previous wheel.
struct ReuseCandidate {
  std::size_t file = 0;  // index into the tree files
  const archive::ZipEntry* entry = nullptr;
  std::optional<std::array<u8, 32>> record_sha;
  bool same = false;
  std::array<u8, 32> sha{};
};

void hash_candidate(const TreeFile& f, ReuseCandidate& c) {
  auto m = MappedFile::open(f.path);
  if (m.size() != c.entry->uncompressed_size) return;  // changed meanwhile
  // CRC first (libdeflate's is carry-less-multiply accelerated, several
  // GB/s): a cheap reject for changed files before the SHA-256.
  if (libdeflate_crc32(0, m.data(), m.size()) != c.entry->crc32) return;
  c.sha = Sha256::of({m.data(), m.size()});
  c.same = !c.record_sha || *c.record_sha == c.sha;
}

}  // namespace

PackResult pack(const fs::path& dir, const fs::path& out_dir,
                const PackOptions& options) {
  require_directory(dir, "wheel tree");
  const std::string dist_info = find_tree_dist_info(dir);
  // One pool for the job: hashing the --reuse candidates and the writer.
  PoolRef pool(options.pool, options.threads);
  const std::string record_path = dist_info + "/RECORD";
  const std::string wheel_path = dist_info + "/WHEEL";

  // WHEEL: tags for the file name, and the Build field (maybe overridden).
  fs::path wheel_file = dir / dist_info / "WHEEL";
  if (!fs::is_regular_file(wheel_file))
    throw Error(Errc::format, wheel_file.string(), "missing WHEEL file");
  std::string wheel_text = read_text_file(wheel_file);
  WheelFile wf = WheelFile::parse(wheel_text, wheel_file.string());
  std::optional<std::string> wheel_override;
  if (options.build_tag) {
    if (!options.build_tag->empty() && !is_valid_build_tag(*options.build_tag))
      throw Error(Errc::usage, *options.build_tag,
                  "invalid build tag (must start with a digit)");
    wf.set_build(*options.build_tag);
    wheel_override = wf.format();
  }
  if (wf.tags().empty())
    throw Error(Errc::format, wheel_file.string(), "no Tag lines");

  std::string name_str = dist_info.substr(0, dist_info.size() - 10);
  auto build = wf.build();
  if (build && build->empty()) build.reset();
  std::string file_name = name_str + (build ? "-" + *build : "") + "-" +
                          join_tag_set(wf.python_tags()) + "-" +
                          join_tag_set(wf.abi_tags()) + "-" +
                          join_tag_set(wf.platform_tags()) + ".whl";
  WheelName::parse(file_name);  // rejects names no installer would accept

  std::vector<TreeFile> files;
  walk(dir, "", files);
  // Everything under the .dist-info directory goes last, sorted, so
  // installers that stream the archive see the metadata after the content
  // it describes; RECORD is regenerated.
  std::vector<TreeFile> ordered, meta;
  for (auto& f : files) {
    if (f.arcname == record_path) continue;
    if (f.arcname.compare(0, dist_info.size() + 1, dist_info + "/") == 0)
      meta.push_back(std::move(f));
    else
      ordered.push_back(std::move(f));
  }
  std::sort(meta.begin(), meta.end(),
            [](const auto& a, const auto& b) { return a.arcname < b.arcname; });
  for (auto& f : meta) ordered.push_back(std::move(f));

  // --reuse: find members of the previous wheel with identical content.
  std::optional<archive::ZipReader> old;
  std::vector<ReuseCandidate> candidates;
  if (options.reuse) {
    old.emplace(archive::ZipReader::open(*options.reuse));
    Record old_record;
    std::string old_record_path;
    try {
      old_record_path = find_dist_info(*old, std::nullopt) + "/RECORD";
    } catch (const Error&) {
      // Ambiguous or absent .dist-info: no RECORD rows to trust; CRC and
      // size still identify content.
    }
    if (const auto* e =
            old_record_path.empty() ? nullptr : old->find(old_record_path))
      old_record = Record::parse(old->read_text(*e),
                                 old->name() + ":" + old_record_path);
    std::unordered_map<std::string_view, const RecordRow*> rows;
    for (const auto& r : old_record.rows()) rows.emplace(r.path, &r);
    for (std::size_t i = 0; i < ordered.size(); ++i) {
      if (wheel_override && ordered[i].arcname == wheel_path) continue;
      const archive::ZipEntry* e = old->find(ordered[i].arcname);
      // Only methods we write ourselves: a copied bzip2/lzma member would
      // make the output depend on what produced OLD beyond its content.
      if (!e || e->is_directory() || e->is_symlink() ||
          (e->method != 0 && e->method != 8) ||
          e->uncompressed_size != ordered[i].size)
        continue;
      ReuseCandidate c;
      c.file = i;
      c.entry = e;
      if (auto it = rows.find(e->name); it != rows.end()) {
        c.record_sha = parse_sha256_hash(it->second->hash);
        if (!c.record_sha) continue;  // a row we can't check: recompress
      }
      candidates.push_back(c);
    }
    pool.parallel_for(candidates.size(), [&](std::size_t i) {
      hash_candidate(ordered[candidates[i].file], candidates[i]);
    });
  }
  std::vector<const ReuseCandidate*> reuse_of(ordered.size(), nullptr);
  for (const auto& c : candidates)
    if (c.same) reuse_of[c.file] = &c;

  archive::ZipWriterOptions wopt;
  wopt.threads = options.threads;
  wopt.pool = pool.get();
  wopt.level = options.level;
  wopt.timestamp = options.timestamp;
  wopt.progress = options.progress;
  wopt.cache = options.cache;
  create_output_directory(out_dir);
  fs::path out = out_dir / file_name;
  archive::ZipWriter writer(out, wopt);
  PackResult result;
  result.path = out;
  i64 newest = 315532800;
  for (std::size_t i = 0; i < ordered.size(); ++i) {
    const TreeFile& f = ordered[i];
    archive::ZipMemberAttrs attrs;
    attrs.mode = f.mode;
    attrs.mtime = f.mtime;
    newest = std::max(newest, f.mtime);
    if (const ReuseCandidate* c = reuse_of[i]) {
      writer.add_raw(f.arcname, *old, *c->entry, attrs, c->sha);
      ++result.reused;
    } else if (wheel_override && f.arcname == wheel_path) {
      writer.add_bytes(f.arcname, *wheel_override, attrs);
    } else {
      writer.add_file(f.arcname, f.path, attrs);
    }
  }

  Record record;
  for (const auto& r : writer.flush()) {
    if (!r.sha256)
      throw Error(Errc::io, out.string(),
                  "internal: no SHA-256 for member " + r.name);
    record.add({r.name, record_hash(*r.sha256), r.size});
    result.bytes += r.size;
  }
  record.add({record_path, "", std::nullopt});
  archive::ZipMemberAttrs record_attrs;
  record_attrs.mtime = newest;
  writer.add_bytes(record_path, record.format(), record_attrs);
  result.members = writer.commit().size();
  return result;
}

}  // namespace libpkg::wheel
