// SPDX-License-Identifier: BSD-3-Clause
// Wheel verification: RECORD against the members, the file name against the
// .dist-info directory and WHEEL (see wheel.hpp).
#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <unordered_map>

#include "libpkg/base/error.hpp"
#include "libpkg/base/sha256.hpp"
#include "libpkg/base/thread_pool.hpp"
#include "libpkg/wheel/metadata.hpp"
#include "libpkg/wheel/record.hpp"
#include "libpkg/wheel/wheel.hpp"

namespace libpkg::wheel {

const char* finding_kind_name(FindingKind kind) {
  switch (kind) {
    case FindingKind::bad_file_name:
      return "bad-file-name";
    case FindingKind::dist_info_count:
      return "dist-info-count";
    case FindingKind::name_mismatch:
      return "name-mismatch";
    case FindingKind::version_mismatch:
      return "version-mismatch";
    case FindingKind::wheel_missing:
      return "wheel-missing";
    case FindingKind::wheel_malformed:
      return "wheel-malformed";
    case FindingKind::tag_mismatch:
      return "tag-mismatch";
    case FindingKind::build_mismatch:
      return "build-mismatch";
    case FindingKind::record_missing:
      return "record-missing";
    case FindingKind::record_malformed:
      return "record-malformed";
    case FindingKind::bad_hash_algorithm:
      return "bad-hash-algorithm";
    case FindingKind::bad_hash:
      return "bad-hash";
    case FindingKind::duplicate_row:
      return "duplicate-row";
    case FindingKind::hash_mismatch:
      return "hash-mismatch";
    case FindingKind::size_mismatch:
      return "size-mismatch";
    case FindingKind::missing_member:
      return "missing-member";
    case FindingKind::unlisted_member:
      return "unlisted-member";
    case FindingKind::corrupt_member:
      return "corrupt-member";
  }
  return "unknown";
}

std::string Finding::message() const {
  std::string out = finding_kind_name(kind);
  if (!member.empty()) out += ": " + member;
  if (!expected.empty() || !actual.empty())
    out += ": expected " + (expected.empty() ? "(none)" : expected) +
           ", found " + (actual.empty() ? "(none)" : actual);
  return out;
}

namespace {

std::string join_tags(const std::vector<WheelTag>& tags) {
  std::string out;
  for (const auto& t : tags) out += (out.empty() ? "" : " ") + t.str();
  return out;
}

// Checks the file name against the .dist-info directory name and WHEEL.
void check_names(const archive::ZipReader& zip, std::vector<Finding>& out,
                 std::optional<std::string>& dist_info) {
  std::string file = zip.path().filename().string();
  std::optional<WheelName> name;
  try {
    name = WheelName::parse(file);
  } catch (const Error& e) {
    out.push_back({FindingKind::bad_file_name, file, "", e.message()});
  }
  auto dirs = dist_info_dirs(zip);
  if (dirs.size() != 1) {
    std::string list;
    for (const auto& d : dirs) list += (list.empty() ? "" : " ") + d;
    out.push_back({FindingKind::dist_info_count, "", "1 .dist-info directory",
                   std::to_string(dirs.size()) +
                       (list.empty() ? "" : " (" + list + ")")});
  }
  try {
    dist_info = find_dist_info(zip, name);
  } catch (const Error&) {
    return;  // already reported as dist_info_count
  }
  if (name) {
    std::string stem = dist_info->substr(0, dist_info->size() - 10);
    auto dash = stem.find('-');
    std::string di_name = stem.substr(0, dash);
    std::string di_version =
        dash == std::string::npos ? "" : stem.substr(dash + 1);
    if (canonicalize_name(di_name) != canonicalize_name(name->distribution))
      out.push_back({FindingKind::name_mismatch, *dist_info, name->distribution,
                     di_name});
    if (di_version != name->version)
      out.push_back({FindingKind::version_mismatch, *dist_info, name->version,
                     di_version});
  }
  std::string wheel_path = *dist_info + "/WHEEL";
  const archive::ZipEntry* entry = zip.find(wheel_path);
  if (!entry) {
    out.push_back({FindingKind::wheel_missing, wheel_path, "", ""});
    return;
  }
  try {
    std::string source = zip.name() + ":" + wheel_path;
    WheelFile wf = WheelFile::parse(zip.read_text(*entry), source);
    if (name) {
      auto declared = wf.tags();
      std::sort(declared.begin(), declared.end());
      declared.erase(std::unique(declared.begin(), declared.end()),
                     declared.end());
      auto from_name = name->tags();
      if (declared != from_name)
        out.push_back({FindingKind::tag_mismatch, wheel_path,
                       join_tags(from_name), join_tags(declared)});
      auto build = wf.build();
      if (build && *build != name->build.value_or(""))
        out.push_back({FindingKind::build_mismatch, wheel_path,
                       name->build.value_or(""), *build});
    }
  } catch (const Error& e) {
    // A read error is not a finding about the wheel: it propagates.
    if (e.code() == Errc::io) throw;
    out.push_back({FindingKind::wheel_malformed, wheel_path, "", e.message()});
  }
}

struct MemberCheck {
  const archive::ZipEntry* entry = nullptr;
  const RecordRow* row = nullptr;
  std::array<u8, 32> expected{};
  std::vector<Finding> findings;
  u64 bytes = 0;
};

// The member's SHA-256 (and c.bytes, its length): from the digest
// extract() computed while writing it, if `options` carries one, else by
// inflating it now. Nullopt, with a corrupt-member finding, when its data
// fails to inflate (bad deflate stream, CRC or length).
std::optional<Sha256::Digest> member_digest(const archive::ZipReader& zip,
                                            MemberCheck& c,
                                            const VerifyOptions& options) {
  const std::size_t index = c.entry - zip.entries().data();
  if (index < options.digests.size()) {
    const archive::MemberDigest& d = options.digests[index];
    c.bytes = d.size;
    if (!d.error.empty()) {
      c.findings.push_back(
          {FindingKind::corrupt_member, c.entry->name, "", d.error});
      return std::nullopt;
    }
    if (d.present) return d.sha256;
    c.bytes = 0;  // not extracted: inflate it below
  }
  Sha256 sha;
  try {
    zip.read(*c.entry, [&](std::span<const u8> piece) {
      sha.update(piece);
      c.bytes += piece.size();
    });
  } catch (const Error& e) {
    // A read error is not a finding about the wheel: it propagates.
    if (e.code() == Errc::io) throw;
    c.findings.push_back(
        {FindingKind::corrupt_member, c.entry->name, "", e.message()});
    return std::nullopt;
  }
  return sha.finish();
}

}  // namespace

VerifyReport verify(const std::filesystem::path& wheel,
                    const VerifyOptions& options) {
  auto zip = archive::ZipReader::open(wheel);
  return verify(zip, options);
}

VerifyReport verify(const archive::ZipReader& zip,
                    const VerifyOptions& options) {
  VerifyReport report;
  report.wheel = zip.path();
  std::optional<std::string> dist_info;
  check_names(zip, report.findings, dist_info);

  for (const auto& e : zip.entries())
    if (!e.is_directory()) ++report.members;
  if (!dist_info) return report;

  std::string record_path = *dist_info + "/RECORD";
  const archive::ZipEntry* record_entry = zip.find(record_path);
  if (!record_entry) {
    report.findings.push_back(
        {FindingKind::record_missing, record_path, "", ""});
    return report;
  }
  Record record;
  try {
    record = Record::parse(zip.read_text(*record_entry),
                           zip.name() + ":" + record_path);
  } catch (const Error& e) {
    // A read error is not a finding about the wheel: it propagates.
    if (e.code() == Errc::io) throw;
    report.findings.push_back(
        {FindingKind::record_malformed, record_path, "", e.message()});
    return report;
  }

  std::unordered_map<std::string_view, const RecordRow*> rows;
  for (const auto& row : record.rows())
    if (auto [it, fresh] = rows.emplace(row.path, &row); !fresh)
      report.findings.push_back(
          {FindingKind::duplicate_row, row.path, it->second->hash, row.hash});

  // One check per archive member, in archive order; the hashing runs on the
  // pool (the reader supports concurrent reads).
  std::vector<MemberCheck> checks;
  for (const auto& e : zip.entries()) {
    if (e.is_directory()) continue;
    MemberCheck c;
    c.entry = &e;
    auto it = rows.find(e.name);
    if (it == rows.end()) {
      if (!is_record_file(e.name))
        c.findings.push_back({FindingKind::unlisted_member, e.name, "", ""});
      checks.push_back(std::move(c));
      continue;
    }
    c.row = it->second;
    const std::string& hash = c.row->hash;
    if (hash.empty()) {
      if (!is_record_file(e.name))
        c.findings.push_back(
            {FindingKind::bad_hash, e.name, "sha256=<digest>", "no hash"});
    } else if (std::string_view algo = hash_algorithm(hash); algo != "sha256") {
      bool weak = algo == "md5" || algo == "sha1";
      c.findings.push_back({FindingKind::bad_hash_algorithm, e.name, "sha256",
                            (algo.empty() ? hash : std::string(algo)) +
                                (weak ? " (weak)" : " (unsupported)")});
      c.row = nullptr;
    } else if (auto digest = parse_sha256_hash(hash)) {
      c.expected = *digest;
    } else {
      c.findings.push_back({FindingKind::bad_hash, e.name,
                            "sha256=<43 base64url characters>", hash});
      c.row = nullptr;
    }
    if (c.row && c.row->hash.empty()) c.row = nullptr;
    if (it->second->size && *it->second->size != e.uncompressed_size)
      c.findings.push_back({FindingKind::size_mismatch, e.name,
                            std::to_string(*it->second->size),
                            std::to_string(e.uncompressed_size)});
    checks.push_back(std::move(c));
  }

  PoolRef pool(options.pool, options.threads);
  pool.parallel_for(checks.size(), [&](std::size_t i) {
    MemberCheck& c = checks[i];
    if (!c.row) return;
    std::optional<Sha256::Digest> digest = member_digest(zip, c, options);
    if (digest && *digest != c.expected)
      c.findings.push_back({FindingKind::hash_mismatch, c.entry->name,
                            c.row->hash, record_hash(*digest)});
  });

  for (auto& c : checks) {
    report.hashed_bytes += c.bytes;
    for (auto& f : c.findings) report.findings.push_back(std::move(f));
  }
  for (const auto& row : record.rows())
    if (!zip.find(row.path))
      report.findings.push_back(
          {FindingKind::missing_member, row.path, "", ""});
  return report;
}

void require_verified(const archive::ZipReader& zip, unsigned threads,
                      const std::string& hint, ThreadPool* pool) {
  VerifyOptions options;
  options.threads = threads;
  options.pool = pool;
  require_verified(zip, options, hint);
}

void require_verified(const archive::ZipReader& zip,
                      const VerifyOptions& options, const std::string& hint) {
  VerifyReport report = verify(zip, options);
  if (!report.ok())
    throw Error(
        Errc::format, zip.name(),
        "RECORD check failed (" + std::to_string(report.findings.size()) +
            " finding(s)); first: " + report.findings.front().message() + " (" +
            hint + ")");
}

}  // namespace libpkg::wheel
