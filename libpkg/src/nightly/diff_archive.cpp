// SPDX-License-Identifier: BSD-3-Clause
#include "libpkg/nightly/diff_archive.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>

#include "libpkg/archive/tar.hpp"
#include "libpkg/archive/zip_reader.hpp"
#include "libpkg/base/error.hpp"
#include "libpkg/base/sha256.hpp"
#include "libpkg/conda/package.hpp"
#include "libpkg/elf/view.hpp"

namespace libpkg::nightly {

namespace fs = std::filesystem;

namespace {

bool ends_with(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Hashes a member's bytes as they stream by and keeps them only when they
// start like an ELF file (and it is small enough), for elf_facts().
class MemberSink {
 public:
  explicit MemberSink(u64 declared_size) : declared_size_(declared_size) {}
  void operator()(std::span<const u8> piece) {
    sha_.update(piece);
    size_ += piece.size();
    if (dropped_) return;
    buffer_.insert(buffer_.end(), piece.begin(), piece.end());
    if (buffer_.size() >= 4 && (!elf::ElfFile::has_elf_magic(buffer_) ||
                                declared_size_ > kElfFactsLimit)) {
      dropped_ = true;
      std::vector<u8>().swap(buffer_);
    }
  }
  void finish(ArchiveMember& m, const std::string& where) {
    m.size = size_;
    m.sha256 = Sha256::hex(sha_.finish());
    if (dropped_ || buffer_.size() < 4) return;
    try {
      elf::ElfFile file(ByteView(buffer_, where));
      ElfFacts facts;
      for (auto n : file.needed()) facts.needed.emplace_back(n);
      for (const auto& need : file.version_needs())
        for (const auto& v : need.versions)
          facts.versions.push_back(fmt::format("{} {}", need.file, v.name));
      std::sort(facts.versions.begin(), facts.versions.end());
      m.elf = std::move(facts);
    } catch (const Error&) {
      // Not a well-formed ELF after all (a data file starting with the
      // magic): compared by size and hash only.
    }
  }

 private:
  u64 declared_size_;
  Sha256 sha_;
  u64 size_ = 0;
  bool dropped_ = false;
  std::vector<u8> buffer_;
};

void list_zip(ArchiveListing& out) {
  archive::ZipReader zip = archive::ZipReader::open(out.path);
  for (const archive::ZipEntry& e : zip.entries()) {
    if (e.is_directory()) continue;
    ArchiveMember m;
    m.name = e.name;
    m.symlink = e.is_symlink();
    MemberSink sink(e.uncompressed_size);
    zip.read(e, [&](std::span<const u8> piece) { sink(piece); });
    sink.finish(m, out.path.string() + ":" + e.name);
    out.members[m.name] = std::move(m);
  }
}

void list_conda(ArchiveListing& out) {
  conda::for_each_component(
      out.path, [&](archive::TarReader& reader, const std::string&) {
        archive::TarMember t;
        while (reader.next(t)) {
          if (t.kind != archive::TarKind::file &&
              t.kind != archive::TarKind::symlink &&
              t.kind != archive::TarKind::hardlink)
            continue;
          ArchiveMember m;
          m.name = t.path;
          MemberSink sink(t.size);
          if (t.kind == archive::TarKind::file) {
            reader.read_data([&](std::span<const u8> piece) { sink(piece); });
          } else {
            // A link is its target: compare that text.
            m.symlink = t.kind == archive::TarKind::symlink;
            sink(std::span<const u8>(
                reinterpret_cast<const u8*>(t.link_target.data()),
                t.link_target.size()));
          }
          sink.finish(m, out.path.string() + ":" + t.path);
          out.members[m.name] = std::move(m);
        }
      });
}

// Sorted a - b.
std::vector<std::string> minus(const std::vector<std::string>& a,
                               const std::vector<std::string>& b) {
  std::set<std::string> drop(b.begin(), b.end());
  std::vector<std::string> out;
  for (const auto& s : a)
    if (!drop.count(s)) out.push_back(s);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::string signed_bytes(i64 delta) {
  return fmt::format("{}{}", delta > 0 ? "+" : "", delta);
}

i64 delta(u64 from, u64 to) {
  return static_cast<i64>(to) - static_cast<i64>(from);
}

std::string percent(u64 from, u64 to) {
  if (from == 0) return "";
  return fmt::format(
      ", {:+.1f}%",
      100.0 * static_cast<double>(delta(from, to)) / static_cast<double>(from));
}

nlohmann::ordered_json listing_json(const ArchiveListing& l) {
  return {{"path", l.path.string()},
          {"format", l.format},
          {"size", l.file_size},
          {"members", l.members.size()},
          {"unpacked_size", l.unpacked_size()}};
}

nlohmann::ordered_json member_json(const ArchiveMember& m) {
  nlohmann::ordered_json j = {
      {"name", m.name}, {"size", m.size}, {"sha256", m.sha256}};
  if (m.symlink) j["symlink"] = true;
  if (m.elf)
    j["elf"] = {{"needed", m.elf->needed}, {"versions", m.elf->versions}};
  return j;
}

}  // namespace

u64 ArchiveListing::unpacked_size() const {
  u64 total = 0;
  for (const auto& [name, m] : members) total += m.size;
  return total;
}

ArchiveListing list_archive(const fs::path& path) {
  ArchiveListing out;
  out.path = path;
  const std::string name = path.filename().string();
  std::error_code ec;
  out.file_size = fs::file_size(path, ec);
  if (ec) throw Error(Errc::io, path.string(), ec.message());
  if (ends_with(name, ".conda") || ends_with(name, ".tar.bz2")) {
    out.format = ends_with(name, ".conda") ? "conda" : "tar.bz2";
    list_conda(out);
  } else if (ends_with(name, ".whl") || ends_with(name, ".zip")) {
    out.format = "zip";
    list_zip(out);
  } else {
    throw Error(Errc::usage, path.string(),
                "not a wheel (.whl), conda package (.conda, .tar.bz2) or zip");
  }
  return out;
}

ArchiveDiff diff_archives(const fs::path& old_path, const fs::path& new_path) {
  ArchiveDiff d;
  d.old_listing = list_archive(old_path);
  d.new_listing = list_archive(new_path);
  const auto& olds = d.old_listing.members;
  const auto& news = d.new_listing.members;
  for (const auto& [name, m] : olds)
    if (!news.count(name)) d.removed.push_back(m);
  for (const auto& [name, m] : news) {
    auto it = olds.find(name);
    if (it == olds.end()) {
      d.added.push_back(m);
      continue;
    }
    const ArchiveMember& o = it->second;
    if (o.sha256 == m.sha256 && o.symlink == m.symlink) {
      ++d.unchanged;
      continue;
    }
    MemberChange c;
    c.name = name;
    c.old_size = o.size;
    c.new_size = m.size;
    c.old_sha256 = o.sha256;
    c.new_sha256 = m.sha256;
    if (o.elf && m.elf) {
      c.needed_added = minus(m.elf->needed, o.elf->needed);
      c.needed_removed = minus(o.elf->needed, m.elf->needed);
      c.versions_added = minus(m.elf->versions, o.elf->versions);
      c.versions_removed = minus(o.elf->versions, m.elf->versions);
    }
    d.changed.push_back(std::move(c));
  }
  return d;
}

std::string ArchiveDiff::to_text() const {
  const auto& o = old_listing;
  const auto& n = new_listing;
  std::string out = fmt::format("{} -> {}\n", o.path.string(), n.path.string());
  out += fmt::format("file size: {} -> {} ({}{})\n", o.file_size, n.file_size,
                     signed_bytes(delta(o.file_size, n.file_size)),
                     percent(o.file_size, n.file_size));
  out += fmt::format(
      "members: {} -> {} ({} added, {} removed, {} changed, {} unchanged); "
      "unpacked {} -> {} ({}{})\n",
      o.members.size(), n.members.size(), added.size(), removed.size(),
      changed.size(), unchanged, o.unpacked_size(), n.unpacked_size(),
      signed_bytes(delta(o.unpacked_size(), n.unpacked_size())),
      percent(o.unpacked_size(), n.unpacked_size()));
  for (const auto& m : added) out += fmt::format("+ {} ({})\n", m.name, m.size);
  for (const auto& m : removed)
    out += fmt::format("- {} ({})\n", m.name, m.size);
  for (const auto& c : changed) {
    out += fmt::format("~ {}: {} -> {} ({}{})\n", c.name, c.old_size,
                       c.new_size, signed_bytes(delta(c.old_size, c.new_size)),
                       percent(c.old_size, c.new_size));
    auto list = [&](const char* what, const std::vector<std::string>& items,
                    char sign) {
      for (const auto& s : items)
        out += fmt::format("    {} {}{}\n", what, sign, s);
    };
    list("NEEDED", c.needed_added, '+');
    list("NEEDED", c.needed_removed, '-');
    list("version", c.versions_added, '+');
    list("version", c.versions_removed, '-');
  }
  if (identical()) out += "same members\n";
  return out;
}

std::string ArchiveDiff::to_json(int indent) const {
  nlohmann::ordered_json j;
  j["schema"] = "libpkg-diff/1";
  j["old"] = listing_json(old_listing);
  j["new"] = listing_json(new_listing);
  j["size_delta"] = delta(old_listing.file_size, new_listing.file_size);
  j["unpacked_delta"] =
      delta(old_listing.unpacked_size(), new_listing.unpacked_size());
  j["added"] = nlohmann::ordered_json::array();
  for (const auto& m : added) j["added"].push_back(member_json(m));
  j["removed"] = nlohmann::ordered_json::array();
  for (const auto& m : removed) j["removed"].push_back(member_json(m));
  j["changed"] = nlohmann::ordered_json::array();
  for (const auto& c : changed)
    j["changed"].push_back({{"name", c.name},
                            {"old_size", c.old_size},
                            {"new_size", c.new_size},
                            {"size_delta", delta(c.old_size, c.new_size)},
                            {"old_sha256", c.old_sha256},
                            {"new_sha256", c.new_sha256},
                            {"needed_added", c.needed_added},
                            {"needed_removed", c.needed_removed},
                            {"versions_added", c.versions_added},
                            {"versions_removed", c.versions_removed}});
  j["unchanged"] = unchanged;
  j["identical"] = identical();
  return j.dump(indent);
}

}  // namespace libpkg::nightly
