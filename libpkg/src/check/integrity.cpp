// SPDX-License-Identifier: BSD-3-Clause
// integrity: the package agrees with its own manifest. Archives use the
// package layers' verifiers (wheel RECORD and tags, conda paths.json and
// index.json, libtorch layout); installed trees are checked here against
// what installation keeps (RECORD of each dist-info, conda-meta file lists,
// info/paths.json of an extracted conda package, the libtorch layout).
#include <fmt/format.h>
#include <sys/stat.h>

#include <cctype>
#include <mutex>
#include <nlohmann/json.hpp>

#include "check/package.hpp"
#include "libpkg/base/error.hpp"
#include "libpkg/base/fd.hpp"
#include "libpkg/base/sha256.hpp"
#include "libpkg/base/thread_pool.hpp"
#include "libpkg/conda/info.hpp"
#include "libpkg/conda/package.hpp"
#include "libpkg/cppdist/libtorch.hpp"
#include "libpkg/wheel/record.hpp"
#include "libpkg/wheel/wheel.hpp"

namespace fs = std::filesystem;

namespace libpkg::check::detail {
namespace {

// Checks rows (path relative to `base`, expected digest, expected size) in
// parallel; problems in row order.
struct ExpectedFile {
  std::string path;                   // as listed
  fs::path file;                      // on disk
  std::optional<std::string> sha256;  // lowercase hex
  std::optional<u64> size;
  // RECORD and paths.json "hardlink" rows list only regular files:
  // anything else in their place (a FIFO, a device, a directory, a dangling
  // symlink) is a finding, never silently skipped.
  bool must_be_regular = false;
  // conda-meta's file lists hold files and symbolic links (contents
  // relocated, so nothing to hash): a FIFO, device, socket or directory in
  // a listed place is a finding.
  bool file_or_link = false;
};

// Why the listed `row` is neither a regular file nor a symbolic link, or
// nullopt when it is one of them.
std::optional<std::string> special_file_reason(const ExpectedFile& row) {
  struct stat st {};
  if (::lstat(row.file.c_str(), &st) != 0 || S_ISREG(st.st_mode) ||
      S_ISLNK(st.st_mode))
    return std::nullopt;
  return std::string("listed as a file but is ") + file_kind_name(st.st_mode);
}

// Why `row.file` cannot be a listed regular file, or nullopt when it may be
// one. A symlink is followed wherever it leads: symlink-farm installs (Nix
// and Spack views, Homebrew-linked or soft-linked conda environments) point
// every file of site-packages into a store outside it, and the hash of what
// the link reaches is what gets imported. One that dangles is reported;
// what it reaches must then be a regular file (verify_regular).
std::optional<std::string> not_regular_reason(const ExpectedFile& row) {
  std::error_code ec;
  if (!fs::is_symlink(fs::symlink_status(row.file, ec))) return std::nullopt;
  if (fs::exists(row.file, ec)) return std::nullopt;  // follows the link
  return "is a dangling symlink (-> " +
         fs::read_symlink(row.file, ec).string() + ")";
}

// Hashes a row that must be a regular file; open_regular refuses FIFOs,
// devices and directories without blocking on them.
std::optional<Problem> verify_regular(const ExpectedFile& row) {
  if (auto why = not_regular_reason(row))
    return Problem{row.path, "listed as a file but " + *why};
  Result<Fd> fd = try_open_regular(row.file, row.path);
  if (!fd) return Problem{row.path, fd.error().message()};
  Sha256 h;
  u64 size = 0;
  read_chunks(fd.value().get(), row.file.string(), std::size_t{1} << 20,
              [&](std::span<const u8> piece) {
                h.update(piece);
                size += piece.size();
              });
  if (row.size && *row.size != size)
    return Problem{row.path,
                   fmt::format("size {} listed, {} found", *row.size, size)};
  const std::string sha256 = Sha256::hex(h.finish());
  if (row.sha256 && *row.sha256 != sha256)
    return Problem{row.path, fmt::format("sha256 {} listed, {} found",
                                         *row.sha256, sha256)};
  return std::nullopt;
}

void verify_files(const std::vector<ExpectedFile>& rows,
                  const CheckOptions& options, std::vector<Problem>& problems) {
  std::vector<std::optional<Problem>> found(rows.size());
  PoolRef pool(options.pool, options.threads);
  pool.parallel_for(rows.size(), [&](std::size_t i) {
    const ExpectedFile& row = rows[i];
    std::error_code ec;
    if (!fs::exists(fs::symlink_status(row.file, ec))) {
      found[i] = Problem{row.path, "listed but missing"};
      return;
    }
    if (row.must_be_regular) {
      found[i] = verify_regular(row);
      return;
    }
    if (row.file_or_link) {
      if (auto why = special_file_reason(row))
        found[i] = Problem{row.path, *why};
      return;
    }
    if (!row.sha256 && !row.size) return;
    if (!fs::is_regular_file(row.file, ec)) return;
    u64 size = 0;
    const std::string sha256 = Sha256::hex(Sha256::of_file(row.file, &size));
    if (row.size && *row.size != size)
      found[i] = Problem{
          row.path, fmt::format("size {} listed, {} found", *row.size, size)};
    else if (row.sha256 && *row.sha256 != sha256)
      found[i] = Problem{row.path, fmt::format("sha256 {} listed, {} found",
                                               *row.sha256, sha256)};
  });
  for (auto& p : found)
    if (p) problems.push_back(std::move(*p));
}

// One installed dist-info's RECORD: paths are relative to site-packages
// (scripts as ../../../bin/x). Rows without a hash (RECORD itself, .pyc
// files written at install time) are only checked for existence.
std::size_t verify_installed_record(const fs::path& root,
                                    const std::string& dist_info,
                                    const CheckOptions& options,
                                    std::vector<Problem>& problems) {
  const fs::path record_file = root / dist_info / "RECORD";
  std::error_code ec;
  if (!fs::exists(record_file, ec)) {
    problems.push_back({dist_info + "/RECORD", "missing"});
    return 0;
  }
  wheel::Record record = wheel::Record::parse(read_regular_file(record_file),
                                              record_file.string());
  std::vector<ExpectedFile> rows;
  for (const auto& row : record.rows()) {
    const fs::path file = (root / row.path).lexically_normal();
    ExpectedFile e{row.path, file, {}, row.size, true};
    if (!row.hash.empty()) {
      auto digest = wheel::parse_sha256_hash(row.hash);
      if (digest) e.sha256 = Sha256::hex(*digest);
      if (!digest) {
        problems.push_back(
            {row.path, fmt::format("hash '{}' is not a sha256 digest "
                                   "(weak or malformed)",
                                   row.hash)});
        continue;
      }
    }
    rows.push_back(std::move(e));
  }
  verify_files(rows, options, problems);
  return rows.size();
}

std::vector<std::string> dist_infos(const fs::path& root) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(root, ec))
    if (e.is_directory() && e.path().extension() == ".dist-info")
      out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

void check_libtorch_tree(const Package& pkg, CheckResult& result) {
  const fs::path dir = pkg.content_path();
  std::error_code ec;
  for (const char* sub : cppdist::kLibtorchDirs)
    if (!fs::is_directory(dir / sub, ec))
      result.problems.push_back({std::string(sub) + "/",
                                 "missing (libtorch layout: lib/ include/ "
                                 "share/ bin/)"});
  for (const char* name : {"build-version", "build-hash"}) {
    if (!fs::is_regular_file(dir / name, ec)) {
      result.problems.push_back({name, "missing"});
      continue;
    }
    std::string text = read_regular_file(dir / name);
    while (!text.empty() && (text.back() == '\n' || text.back() == '\r'))
      text.pop_back();
    if (text.empty() || text.find('\n') != std::string::npos)
      result.problems.push_back({name, "must hold exactly one non-empty line"});
  }
  result.summary = "libtorch layout, build-version and build-hash";
}

void check_conda_tree(const Package& pkg, const CheckOptions& options,
                      CheckResult& result) {
  std::error_code ec;
  const fs::path paths_json = pkg.root / "info" / "paths.json";
  if (fs::exists(paths_json, ec)) {
    std::vector<ExpectedFile> rows;
    for (const auto& rec : conda::parse_paths_json(
             read_regular_file(paths_json), paths_json.string())) {
      if (rec.type == conda::PathType::directory) continue;
      ExpectedFile e{rec.path, pkg.root / rec.path, {}, {}};
      if (rec.type == conda::PathType::hardlink) {
        // paths.json spells digests in lowercase hex, as Sha256::hex does.
        std::string hex = rec.sha256;
        for (char& c : hex) c = static_cast<char>(std::tolower(c));
        if (!hex.empty()) e.sha256 = std::move(hex);
        e.size = rec.size;
        e.must_be_regular = true;
      } else {
        e.file_or_link = true;
      }
      rows.push_back(std::move(e));
    }
    verify_files(rows, options, result.problems);
    result.summary = fmt::format("info/paths.json: {} files", rows.size());
    return;
  }
  // An installed prefix: every conda-meta record's files must be there
  // (their contents may have been relocated, so no hashes).
  std::vector<ExpectedFile> rows;
  std::size_t records = 0;
  for (const auto& e : fs::directory_iterator(pkg.root / "conda-meta", ec)) {
    if (e.path().extension() != ".json") continue;
    ++records;
    nlohmann::json meta;
    try {
      meta = nlohmann::json::parse(read_regular_file(e.path()));
    } catch (const nlohmann::json::exception& ex) {
      result.problems.push_back(
          {"conda-meta/" + e.path().filename().string(), ex.what()});
      continue;
    }
    if (meta.contains("files") && meta["files"].is_array())
      for (const auto& f : meta["files"])
        if (f.is_string())
          rows.push_back({f.get<std::string>(),
                          pkg.root / f.get<std::string>(),
                          {},
                          {},
                          false,
                          true});
  }
  verify_files(rows, options, result.problems);
  result.summary = fmt::format("conda-meta: {} files of {} packages present",
                               rows.size(), records);
}

}  // namespace

void check_integrity(const Package& pkg, const CheckOptions& options,
                     CheckResult& result) {
  switch (pkg.kind) {
    case ArtifactKind::wheel: {
      wheel::VerifyOptions vo;
      vo.threads = options.threads;
      vo.pool = options.pool;
      vo.digests = pkg.member_digests;
      wheel::VerifyReport report = wheel::verify(*pkg.zip, vo);
      for (const auto& f : report.findings)
        result.problems.push_back({f.member, f.message()});
      result.summary =
          fmt::format("RECORD: {} members, {} bytes hashed; file name vs WHEEL",
                      report.members, report.hashed_bytes);
      break;
    }
    case ArtifactKind::conda: {
      auto findings = conda::verify(pkg.artifact);
      for (const auto& f : findings)
        result.problems.push_back({f.where, f.message});
      result.summary =
          "index.json, paths.json (sha256, size, type) and "
          "info/files against the members";
      break;
    }
    case ArtifactKind::libtorch_zip: {
      for (const auto& p : cppdist::check_libtorch_zip(*pkg.zip))
        result.problems.push_back({p.member, p.message});
      result.summary = "libtorch layout, build-version and build-hash";
      break;
    }
    case ArtifactKind::libtorch_tree:
      check_libtorch_tree(pkg, result);
      break;
    case ArtifactKind::conda_tree:
      check_conda_tree(pkg, options, result);
      break;
    case ArtifactKind::site_packages: {
      std::size_t rows = 0;
      auto all = dist_infos(pkg.root);
      for (const auto& d : all)
        rows += verify_installed_record(pkg.root, d, options, result.problems);
      result.summary =
          fmt::format("RECORD of {} distributions: {} files", all.size(), rows);
      break;
    }
    case ArtifactKind::python_package: {
      const std::string& owner = pkg.dist_info;
      if (owner.empty()) {
        result.problems.push_back(
            {pkg.content_dir,
             "no *.dist-info/RECORD next to it lists this package"});
        result.summary = "RECORD";
        break;
      }
      std::size_t rows =
          verify_installed_record(pkg.root, owner, options, result.problems);
      result.summary = fmt::format("{}/RECORD: {} files", owner, rows);
      break;
    }
  }
  result.status = result.problems.empty() ? Status::pass : Status::fail;
}

}  // namespace libpkg::check::detail
