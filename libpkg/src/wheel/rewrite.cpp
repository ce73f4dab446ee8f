// SPDX-License-Identifier: BSD-3-Clause
// Member-level wheel rewriting: raw copies + new content + fresh RECORD
// (see wheel.hpp). retag and the repair step are built on it.
#include <algorithm>
#include <iterator>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "libpkg/archive/zip_writer.hpp"
#include "libpkg/base/error.hpp"
#include "libpkg/base/result.hpp"
#include "libpkg/base/sha256.hpp"
#include "libpkg/wheel/record.hpp"
#include "libpkg/wheel/wheel.hpp"

namespace fs = std::filesystem;

namespace libpkg::wheel {

namespace {

struct PlannedMember {
  std::string name;
  const archive::ZipEntry* raw = nullptr;       // copied verbatim when set
  const archive::ZipReader* raw_zip = nullptr;  // raw's archive
  archive::SourcePtr content;  // otherwise compressed from this
  unsigned mode = 0644;
  i64 mtime = 0;
  bool directory = false;
  std::optional<std::array<u8, 32>> sha;  // known digest of a raw copy
};

std::string top_dist_info(std::string_view name) {
  constexpr std::string_view kSuffix = ".dist-info";
  auto slash = name.find('/');
  if (slash == std::string_view::npos) return {};
  std::string_view top = name.substr(0, slash);
  if (top.size() > kSuffix.size() &&
      top.substr(top.size() - kSuffix.size()) == kSuffix)
    return std::string(top);
  return {};
}

unsigned entry_mode(const archive::ZipEntry& e) {
  unsigned mode = e.unix_mode() & 0777;
  return mode ? mode : 0644;
}

}  // namespace

RewriteResult rewrite(const archive::ZipReader& input, const fs::path& out,
                      const WheelEdits& edits, const RewriteOptions& options) {
  // The input's RECORD (the one in its .dist-info directory) supplies the
  // digests of raw copies; it and its signatures are not carried over.
  // Ambiguous without a name (format error): the file's name decides, when
  // it parses.
  Result<std::string> found = attempt(
      {Errc::format}, [&] { return find_dist_info(input, std::nullopt); });
  std::string in_dist_info;
  if (found) {
    in_dist_info = found.value();
  } else {
    Result<WheelName> name = attempt({Errc::format, Errc::usage}, [&] {
      return WheelName::parse(input.path().filename().string());
    });
    in_dist_info = find_dist_info(
        input, name ? std::optional<WheelName>(name.value()) : std::nullopt);
  }
  // A rewrite gives the members a fresh RECORD: unverified members would
  // come out looking verified.
  if (!options.allow_unverified) {
    VerifyOptions vo;
    vo.threads = options.threads;
    vo.pool = options.pool;
    vo.digests = options.digests;
    require_verified(input, vo,
                     "a rewrite would launder it into a fresh RECORD; use "
                     "allow_unverified / --allow-unverified to rewrite it");
  }
  Record in_record;
  if (const auto* e = input.find(in_dist_info + "/RECORD"))
    in_record = Record::parse(input.read_text(*e),
                              input.name() + ":" + in_dist_info + "/RECORD");
  // A path listed twice (only possible with allow_unverified) vouches for
  // nothing: its member is left unlisted rather than picking a row.
  std::unordered_map<std::string_view, const RecordRow*> rows;
  std::unordered_set<std::string_view> listed_twice;
  for (const auto& r : in_record.rows())
    if (!rows.emplace(r.path, &r).second) listed_twice.insert(r.path);
  for (std::string_view path : listed_twice) rows.erase(path);

  for (const auto& [name, _] : edits.replace)
    if (!input.find(name))
      throw Error(Errc::usage, input.name(),
                  "cannot replace absent member '" + name + "'");
  for (const auto& name : edits.remove)
    if (!input.find(name))
      throw Error(Errc::usage, input.name(),
                  "cannot remove absent member '" + name + "'");
  for (const auto& [from, to] : edits.rename)
    if (!input.find(from))
      throw Error(Errc::usage, input.name(),
                  "cannot rename absent member '" + from + "'");

  i64 newest = 315532800;
  for (const auto& e : input.entries()) newest = std::max(newest, e.mtime());
  const i64 new_mtime = options.timestamp.value_or(newest);

  std::vector<PlannedMember> plan;
  for (const auto& e : input.entries()) {
    if (edits.remove.count(e.name)) continue;
    if (top_dist_info(e.name) == in_dist_info && is_record_file(e.name))
      continue;
    PlannedMember m;
    auto ren = edits.rename.find(e.name);
    m.name = ren == edits.rename.end() ? e.name : ren->second;
    m.mode = entry_mode(e);
    m.mtime = e.mtime();
    m.directory = e.is_directory();
    if (auto rep = edits.replace.find(e.name); rep != edits.replace.end()) {
      m.content = rep->second;
      m.mtime = new_mtime;
    } else if (auto other = edits.raw_from.find(e.name);
               other != edits.raw_from.end()) {
      m.raw = other->second.entry;
      m.raw_zip = other->second.zip;
      m.sha = other->second.sha256;
      m.mode = entry_mode(*m.raw);
      m.mtime = m.raw->mtime();
    } else {
      m.raw = &e;
      m.raw_zip = &input;
      if (auto row = rows.find(e.name); row != rows.end())
        m.sha = parse_sha256_hash(row->second->hash);
    }
    plan.push_back(std::move(m));
  }

  // Output .dist-info: exactly one among the final names.
  std::set<std::string> out_dist_infos;
  for (const auto& m : plan)
    if (auto d = top_dist_info(m.name); !d.empty()) out_dist_infos.insert(d);
  for (const auto& a : edits.add)
    if (auto d = top_dist_info(a.name); !d.empty()) out_dist_infos.insert(d);
  for (const auto& [name, _] : edits.raw_from)
    if (auto d = top_dist_info(name); !d.empty() && !input.find(name))
      out_dist_infos.insert(d);
  if (out_dist_infos.size() != 1)
    throw Error(Errc::usage, out.string(),
                "the rewritten wheel would have " +
                    std::to_string(out_dist_infos.size()) +
                    " .dist-info directories (expected 1)");
  const std::string dist_info = *out_dist_infos.begin();
  const std::string record_path = dist_info + "/RECORD";

  // Added members: sorted, after the content and after the metadata.
  std::vector<PlannedMember> added;
  for (const auto& a : edits.add) {
    PlannedMember m;
    m.name = a.name;
    m.content = a.content;
    m.mode = a.mode & 0777;
    m.mtime = new_mtime;
    added.push_back(std::move(m));
  }
  for (const auto& [name, r] : edits.raw_from) {
    if (input.find(name)) continue;  // replaced in place above
    PlannedMember m;
    m.name = name;
    m.raw = r.entry;
    m.raw_zip = r.zip;
    m.sha = r.sha256;
    m.mode = entry_mode(*r.entry);
    m.mtime = r.entry->mtime();
    m.directory = r.entry->is_directory();
    added.push_back(std::move(m));
  }
  std::sort(added.begin(), added.end(),
            [](const auto& a, const auto& b) { return a.name < b.name; });
  std::vector<PlannedMember> ordered;
  auto append_added = [&](bool metadata) {
    for (const auto& m : added)
      if ((top_dist_info(m.name) == dist_info) == metadata)
        ordered.push_back(m);
  };
  auto metadata_begin = std::stable_partition(
      plan.begin(), plan.end(),
      [&](const auto& m) { return top_dist_info(m.name) != dist_info; });
  std::move(plan.begin(), metadata_begin, std::back_inserter(ordered));
  append_added(false);
  std::move(metadata_begin, plan.end(), std::back_inserter(ordered));
  append_added(true);

  std::unordered_set<std::string_view> seen;
  for (const auto& m : ordered) {
    if (m.name == record_path || is_record_file(m.name))
      throw Error(Errc::usage, out.string(),
                  "'" + m.name + "' is generated; don't add or rename to it");
    if (!seen.insert(m.name).second)
      throw Error(Errc::usage, out.string(),
                  "duplicate member name '" + m.name + "' after the edits");
  }

  // Raw copies the input RECORD doesn't vouch for (only possible with
  // allow_unverified: a verified input lists every member) stay unlisted:
  // hashing them here would vouch for content nobody verified.
  archive::ZipWriterOptions wopt;
  wopt.threads = options.threads;
  wopt.pool = options.pool;
  wopt.level = options.level;
  wopt.progress = options.progress;
  wopt.cache = options.cache;
  archive::ZipWriter writer(out, wopt);
  RewriteResult result;
  result.path = out;
  std::vector<bool> is_dir;
  for (const auto& m : ordered) {
    archive::ZipMemberAttrs attrs;
    attrs.mode = m.mode;
    attrs.mtime = m.mtime;
    if (m.raw) {
      try {
        writer.add_raw(m.name, *m.raw_zip, *m.raw, attrs, m.sha);
      } catch (const Error& e) {
        // The writer's name rules name the member; the culprit is the input.
        if (e.file() != m.name) throw;
        throw Error(Errc::format, m.raw_zip->name(),
                    m.name + ": " + e.message() +
                        " (copying it would write a wheel that readers "
                        "refuse)");
      }
      ++result.raw_copies;
    } else {
      writer.add(m.name, m.content, attrs);
      ++result.compressed;
    }
    is_dir.push_back(m.directory);
  }

  Record record;
  const auto& written = writer.flush();
  for (std::size_t i = 0; i < written.size(); ++i) {
    const auto& r = written[i];
    if (r.spliced) {
      ++result.spliced;
      result.spliced_reused_bytes += r.reused;
    }
    if (is_dir[i]) continue;  // RECORD lists files only
    if (!r.sha256) {
      if (ordered[i].raw) continue;  // unlisted in the input, see above
      throw Error(Errc::io, out.string(),
                  "internal: no SHA-256 for member " + r.name);
    }
    record.add({r.name, record_hash(*r.sha256), r.size});
  }
  record.add({record_path, "", std::nullopt});
  archive::ZipMemberAttrs record_attrs;
  record_attrs.mtime = new_mtime;
  writer.add_bytes(record_path, record.format(), record_attrs);
  ++result.compressed;
  result.members = writer.commit().size();
  result.size = writer.size();
  return result;
}

}  // namespace libpkg::wheel
