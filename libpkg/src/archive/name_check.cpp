// SPDX-License-Identifier: BSD-3-Clause
// Member-name rules for safe extraction (see extract.hpp).
//
// Collisions are checked on two keys: the normalised path (what Linux
// creates) and each segment's Unicode NFKC case fold (what macOS and Windows
// file systems would merge, and what a later copy to such a file system or
// a case-insensitive tool would see). Names that are not valid UTF-8 are
// accepted only when the archive does not flag them as UTF-8 (general
// purpose bit 11): they are then legacy bytes (CP437 in theory, raw bytes in
// practice); such segments are folded by ASCII case only and can never
// collide with UTF-8 segments. A name flagged UTF-8 that is not valid UTF-8
// is refused.
#include <fmt/format.h>

#include <string>
#include <unordered_map>

#include "archive/name_fold.hpp"
#include "archive/name_plan.hpp"
#include "archive/reader_central.hpp"
#include "archive/zip_format.hpp"
#include "libpkg/archive/extract.hpp"
#include "libpkg/base/error.hpp"

namespace libpkg::archive {
namespace names {
namespace {

[[noreturn]] void refuse(const ZipReader& zip, const ZipEntry& e,
                         const std::string& why) {
  throw Error(Errc::format, zip.name(),
              fmt::format("{}: {}", reader::printable_name(e.name), why),
              e.local_header_offset);
}

// Splits and normalises a member name; refuses hostile names.
std::vector<std::string> split_name(const ZipReader& zip, const ZipEntry& e) {
  const std::string& name = e.name;
  if (name.empty()) refuse(zip, e, "empty member name");
  if (name.find('\0') != std::string::npos)
    refuse(zip, e, "name contains a NUL byte");
  if (name.find('\\') != std::string::npos)
    refuse(zip, e,
           "name contains a backslash (a Windows path separator; refused "
           "because other tools would treat it as a directory)");
  if (name.front() == '/') refuse(zip, e, "absolute path");
  std::vector<std::string> segments;
  std::size_t start = 0;
  while (start <= name.size()) {
    std::size_t slash = name.find('/', start);
    if (slash == std::string::npos) slash = name.size();
    std::string_view seg(name.data() + start, slash - start);
    const bool last = slash == name.size();
    if (seg.empty()) {
      // Only the empty "segment" after a directory's trailing '/' is fine.
      if (!last || start == 0) refuse(zip, e, "empty path segment ('//')");
    } else if (seg == "..") {
      refuse(zip, e, "'..' segment (path traversal)");
    } else if (seg != ".") {
      segments.emplace_back(seg);
    }
    if (last) break;
    start = slash + 1;
  }
  return segments;
}

}  // namespace

std::string join_path(const std::vector<std::string>& segments,
                      std::size_t count) {
  std::string out;
  for (std::size_t i = 0; i < count; ++i) {
    if (i) out += '/';
    out += segments[i];
  }
  return out;
}

std::vector<PlannedMember> plan_members(const ZipReader& zip,
                                        bool allow_symlinks) {
  std::vector<PlannedMember> plan;
  plan.reserve(zip.entries().size());
  // Key -> plan index, for the exact normalised path and its fold.
  std::unordered_map<std::string, std::size_t> by_path;
  std::unordered_map<std::string, std::size_t> by_fold;
  std::vector<std::vector<std::string>> folds;

  for (const ZipEntry& e : zip.entries()) {
    PlannedMember m;
    m.entry = &e;
    m.segments = split_name(zip, e);
    const bool trailing_slash = e.name.back() == '/';
    if (e.is_symlink()) {
      if (trailing_slash) refuse(zip, e, "symlink with a directory name");
      m.kind = MemberKind::symlink;
    } else if (e.is_directory()) {
      m.kind = MemberKind::directory;
    } else {
      m.kind = MemberKind::file;
    }
    if (m.segments.empty()) {
      if (m.kind == MemberKind::directory) continue;  // "./": the target
      refuse(zip, e, "names the target directory itself");
    }
    const bool utf8_flagged = e.flags & zipfmt::kFlagUtf8;
    std::vector<std::string> fold;
    for (const std::string& seg : m.segments) {
      if (auto f = nfkc_casefold(seg)) {
        fold.push_back(std::move(*f));
      } else {
        if (utf8_flagged)
          refuse(zip, e, "name is flagged UTF-8 but is not valid UTF-8");
        // 0xff never occurs in UTF-8: legacy segments fold apart.
        fold.push_back("\xff" + ascii_lower(seg));
      }
    }
    const std::size_t index = plan.size();
    const std::string path = join_path(m.segments, m.segments.size());
    if (auto [it, ok] = by_path.emplace(path, index); !ok)
      refuse(zip, e,
             fmt::format("names the same path as '{}' after normalisation",
                         reader::printable_name(plan[it->second].entry->name)));
    const std::string fold_key = join_path(fold, fold.size());
    if (auto [it, ok] = by_fold.emplace(fold_key, index); !ok)
      refuse(zip, e,
             fmt::format("differs from '{}' only in case or Unicode "
                         "normalisation (the same file on macOS/Windows)",
                         reader::printable_name(plan[it->second].entry->name)));
    if (m.kind == MemberKind::symlink && !allow_symlinks)
      refuse(zip, e, "is a symlink and symlinks are not allowed");
    plan.push_back(std::move(m));
    folds.push_back(std::move(fold));
  }

  // Parents: a member below a file or a symlink member would be written
  // through it (or fail half-way).
  for (std::size_t i = 0; i < plan.size(); ++i) {
    const PlannedMember& m = plan[i];
    for (std::size_t depth = 1; depth < m.segments.size(); ++depth) {
      auto check = [&](const std::unordered_map<std::string, std::size_t>& map,
                       const std::string& key) {
        auto it = map.find(key);
        if (it == map.end()) return;
        const PlannedMember& parent = plan[it->second];
        if (parent.kind == MemberKind::symlink)
          refuse(zip, *m.entry,
                 fmt::format("is below symlink member '{}'",
                             reader::printable_name(parent.entry->name)));
        if (parent.kind == MemberKind::file)
          refuse(zip, *m.entry,
                 fmt::format("is below '{}', which is a file",
                             reader::printable_name(parent.entry->name)));
      };
      check(by_path, join_path(m.segments, depth));
      check(by_fold, join_path(folds[i], depth));
    }
  }

  // Symlink targets must stay inside the target, resolved lexically from the
  // link's own directory, and must not pass through another symlink member
  // (whose own target would make the lexical answer wrong).
  for (PlannedMember& m : plan) {
    if (m.kind != MemberKind::symlink) continue;
    const ZipEntry& e = *m.entry;
    if (e.uncompressed_size > kMaxLinkTarget)
      refuse(zip, e,
             fmt::format("symlink target of {} bytes is too long",
                         e.uncompressed_size));
    m.link_target = zip.read_text(e);
    const std::string& target = m.link_target;
    if (target.empty()) refuse(zip, e, "empty symlink target");
    if (target.find('\0') != std::string::npos)
      refuse(zip, e, "symlink target contains a NUL byte");
    if (target.front() == '/')
      refuse(zip, e,
             fmt::format("symlink to the absolute path '{}'",
                         reader::printable_name(target)));
    std::vector<std::string> resolved(m.segments.begin(), m.segments.end() - 1);
    std::vector<std::string_view> parts;
    for (std::size_t start = 0;;) {
      std::size_t slash = target.find('/', start);
      if (slash == std::string::npos) slash = target.size();
      std::string_view part(target.data() + start, slash - start);
      if (!part.empty() && part != ".") parts.push_back(part);
      if (slash == target.size()) break;
      start = slash + 1;
    }
    for (std::size_t p = 0; p < parts.size(); ++p) {
      if (parts[p] == "..") {
        if (resolved.empty())
          refuse(zip, e,
                 fmt::format("symlink target '{}' escapes the target "
                             "directory",
                             reader::printable_name(target)));
        resolved.pop_back();
        continue;
      }
      resolved.emplace_back(parts[p]);
      if (p + 1 < parts.size()) {
        auto it = by_path.find(join_path(resolved, resolved.size()));
        if (it != by_path.end() && plan[it->second].kind == MemberKind::symlink)
          refuse(zip, e,
                 fmt::format(
                     "symlink target '{}' goes through symlink "
                     "member '{}'",
                     reader::printable_name(target),
                     reader::printable_name(plan[it->second].entry->name)));
      }
    }
  }
  return plan;
}

}  // namespace names

void check_member_names(const ZipReader& zip, bool allow_symlinks) {
  names::plan_members(zip, allow_symlinks);
}

}  // namespace libpkg::archive
