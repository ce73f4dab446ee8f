// SPDX-License-Identifier: BSD-3-Clause
// apply_repair: turns a RepairPlan into the repaired wheel in one pass.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "bundle/write_repaired.hpp"
#include "libpkg/archive/extract.hpp"
#include "libpkg/archive/member_view.hpp"
#include "libpkg/archive/source.hpp"
#include "libpkg/base/atomic_file.hpp"
#include "libpkg/base/error.hpp"
#include "libpkg/base/subprocess.hpp"
#include "libpkg/base/thread_pool.hpp"
#include "libpkg/bundle/repair.hpp"
#include "libpkg/bundle/sbom.hpp"
#include "libpkg/elf/editor.hpp"
#include "libpkg/wheel/metadata.hpp"
#include "libpkg/wheel/wheel.hpp"

namespace fs = std::filesystem;

namespace libpkg::bundle {
namespace {

// `strip FLAG FILE` (binutils). Stripping is done by the platform's own
// tool so that what it removes is exactly what users expect from `strip`. It
// runs through run_process: bounded in time (a wedged tool fails the repair
// instead of hanging it), its group killed after, its output in the error.
constexpr unsigned kStripTimeoutSeconds = 600;

void run_strip(const std::string& program, const std::string& flag,
               const fs::path& file) {
  RunOptions ro;
  ro.timeout_seconds = kStripTimeoutSeconds;
  RunResult r = run_process({program, flag, file.string()}, ro);
  if (r.not_found)
    throw Error(Errc::io, program, "cannot run it for --strip: not found");
  if (!r.ok()) {
    std::string out = r.output;
    while (!out.empty() && (out.back() == '\n' || out.back() == ' '))
      out.pop_back();
    throw Error(Errc::io, file.string(),
                fmt::format("{} {} failed ({}){}{}", program, flag,
                            r.describe(kStripTimeoutSeconds),
                            out.empty() ? "" : ": ", out));
  }
}

elf::EditOptions edit_options(const FileEdit& e) {
  elf::EditOptions o;
  o.set_soname = e.set_soname;
  o.remove_needed = e.remove_needed;
  for (const auto& [from, to] : e.replace_needed)
    o.replace_needed.emplace_back(from, to);
  if (e.rpath) {
    o.rpath_op = e.rpath->empty() ? elf::RpathOp::remove : elf::RpathOp::set;
    o.rpath = *e.rpath;
    o.rpath_tag = e.rpath_tag;
  }
  return o;
}

// The analysis read the binaries in place and left only placeholders (see
// analyze.hpp): the ones the repair rewrites (edited, or all with --strip)
// are unpacked here by the hardened extractor, into their own directory
// of the scratch tree. Returns the path of each by member, and what they
// hashed to as written (before strip changes them), which the RECORD check
// of the rewrite then takes instead of inflating them a second time.
struct Unpacked {
  std::map<std::string, fs::path> path;
  std::vector<archive::MemberDigest> digests;  // archive::ExtractReport's
};

// What the RECORD check can take instead of inflating a member again,
// indexed like the archive's entries: the digests of the unpacked members,
// and of the binaries the analysis decoded whole in one sequential pass
// from their start (MemberView::digest(): what a sequential read hashes).
std::vector<archive::MemberDigest> known_digests(const WheelAnalysis& analysis,
                                                 const Unpacked& unpacked) {
  const auto& entries = analysis.zip->entries();
  std::vector<archive::MemberDigest> out = unpacked.digests;
  out.resize(entries.size());
  for (const PackageBinary& b : analysis.binaries) {
    if (!b.view) continue;
    const std::optional<std::array<u8, 32>> digest = b.view->digest();
    const archive::ZipEntry* entry = analysis.zip->find(b.member);
    if (!digest || entry == nullptr) continue;
    archive::MemberDigest& d =
        out[static_cast<std::size_t>(entry - entries.data())];
    if (d.present || !d.error.empty()) continue;
    d.present = true;
    d.sha256 = *digest;
    d.size = entry->uncompressed_size;
  }
  return out;
}

Unpacked unpack_rewritten(const WheelAnalysis& analysis,
                          const std::set<std::string>& members,
                          unsigned threads, ThreadPool* pool) {
  Unpacked out;
  if (members.empty()) return out;
  const fs::path dir = analysis.scratch->path() / "rewritten";
  archive::ExtractOptions xo;
  xo.threads = threads;
  xo.pool = pool;
  xo.max_expansion = 0;  // the zip reader's limits apply
  xo.digests = true;
  xo.select = [&](const archive::ZipEntry& e) {
    return members.count(e.name) != 0;
  };
  out.digests = archive::extract(*analysis.zip, dir, xo).digests;
  for (const auto& m : members) out.path[m] = dir / m;
  return out;
}

// The file as edited (an overlay streamed from the original), or as is.
archive::SourcePtr edited_source(const fs::path& file, const FileEdit* edit) {
  if (!edit) return archive::file_source(file);
  elf::EditOptions o = edit_options(*edit);
  if (o.empty()) return archive::file_source(file);
  elf::EditPlan p = elf::plan_edit(elf::ElfFile::open(file), o);
  return archive::overlay_source(file, std::move(p.overlay));
}

// An edited member of the wheel, planned over the member read in place and
// written by splicing its deflate data (archive/splice.hpp): it is never
// unpacked, and only what the edit changes is deflated again.
archive::SourcePtr edited_member(const WheelAnalysis& analysis,
                                 const PackageBinary& binary,
                                 const FileEdit& edit) {
  const archive::ZipEntry& entry = *analysis.zip->find(binary.member);
  // The analysis' view (read sequentially): what it inflated is kept.
  auto view =
      binary.view ? binary.view : archive::open_member(analysis.zip, entry);
  elf::EditPlan p = elf::plan_edit(
      elf::ElfFile(view->view(binary.file.string()), view), edit_options(edit));
  return archive::edited_member_source(
      analysis.zip, entry, std::make_shared<Overlay>(std::move(p.overlay)));
}

// WHEEL with one Tag line per (python, abi) pair × the new platforms.
std::string retagged_wheel_file(const archive::ZipReader& zip,
                                const std::string& member,
                                const std::vector<std::string>& platforms) {
  const archive::ZipEntry* entry = zip.find(member);
  if (!entry)
    throw Error(Errc::format, zip.name(), member + ": missing WHEEL file");
  wheel::WheelFile wf =
      wheel::WheelFile::parse(zip.read_text(*entry), zip.name() + ":" + member);
  std::vector<std::pair<std::string, std::string>> pairs;
  for (const auto& t : wf.tags()) {
    std::pair<std::string, std::string> p{t.python, t.abi};
    if (std::find(pairs.begin(), pairs.end(), p) == pairs.end())
      pairs.push_back(p);
  }
  std::vector<wheel::WheelTag> tags;
  for (const auto& [py, abi] : pairs)
    for (const auto& plat : platforms) tags.push_back({py, abi, plat});
  wf.set_tags(tags);
  return wf.format();
}

}  // namespace

RepairResult write_repaired_wheel(
    const archive::ZipReader& zip, const fs::path& out_dir,
    const std::string& name, const wheel::WheelEdits& edits,
    const ApplyOptions& options, u64 grafted_bytes,
    std::span<const archive::MemberDigest> digests) {
  create_output_directory(out_dir);
  wheel::RewriteOptions ro;
  ro.level = options.level;
  ro.threads = options.threads;
  ro.pool = options.pool;
  ro.timestamp = options.timestamp;
  ro.progress = options.progress;
  ro.cache = options.cache;
  ro.allow_unverified = options.allow_unverified;
  ro.digests = digests;
  wheel::RewriteResult r = wheel::rewrite(zip, out_dir / name, edits, ro);
  RepairResult result;
  result.path = r.path;
  result.members = r.members;
  result.raw_copies = r.raw_copies;
  result.compressed = r.compressed;
  result.size = r.size;
  result.spliced = r.spliced;
  result.spliced_reused_bytes = r.spliced_reused_bytes;
  result.grafted_bytes = grafted_bytes;
  return result;
}

void add_sbom(wheel::WheelEdits& edits, const archive::ZipReader& zip,
              const std::string& dist_info, std::string doc) {
  const std::string member = sbom_member(dist_info);
  archive::SourcePtr source = archive::bytes_source(std::move(doc), member);
  if (zip.find(member))
    edits.replace[member] = std::move(source);
  else
    edits.add.push_back({member, std::move(source), 0644});
}

RepairResult apply_repair(const WheelAnalysis& analysis, const RepairPlan& plan,
                          const fs::path& out_dir, const ApplyOptions& given) {
  // One pool for the whole job (unpacking, strip, verifying and writing),
  // the caller's or, when it gives none, one made here for all the steps.
  PoolRef pool(given.pool, given.threads);
  ApplyOptions options = given;
  options.pool = pool.get();
  std::map<std::string, const FileEdit*> edit_of;
  for (const auto& e : plan.edits) edit_of[e.member] = &e;
  auto find_edit = [&](const std::string& member) -> const FileEdit* {
    auto it = edit_of.find(member);
    return it == edit_of.end() ? nullptr : it->second;
  };

  // Unpacked only for strip, which rewrites files on disk.
  std::set<std::string> rewritten;
  if (plan.strip)
    for (const auto& b : analysis.binaries) rewritten.insert(b.member);
  const Unpacked unpacked =
      unpack_rewritten(analysis, rewritten, options.threads, options.pool);

  // Grafts are streamed from their system location unless --strip needs a
  // private copy to run strip on.
  std::vector<fs::path> graft_files;
  for (const auto& g : plan.grafts) graft_files.push_back(g.source);
  if (plan.strip) {
    const fs::path dir = analysis.scratch->path() / "grafts";
    fs::create_directories(dir);
    pool.parallel_for(plan.grafts.size(), [&](std::size_t i) {
      fs::path copy = dir / plan.grafts[i].new_soname;
      fs::copy_file(fs::canonical(plan.grafts[i].source), copy,
                    fs::copy_options::overwrite_existing);
      fs::permissions(copy, fs::perms::owner_write, fs::perm_options::add);
      run_strip("strip", plan.strip_flag, copy);
      graft_files[i] = copy;
    });
    pool.parallel_for(analysis.binaries.size(), [&](std::size_t i) {
      run_strip("strip", plan.strip_flag,
                unpacked.path.at(analysis.binaries[i].member));
    });
  }

  wheel::WheelEdits edits;
  u64 grafted_bytes = 0;
  for (const auto& b : analysis.binaries) {
    const FileEdit* e = find_edit(b.member);
    if (plan.strip)
      edits.replace[b.member] = edited_source(unpacked.path.at(b.member), e);
    else if (e)
      edits.replace[b.member] = edited_member(analysis, b, *e);
  }
  for (std::size_t i = 0; i < plan.grafts.size(); ++i) {
    const Graft& g = plan.grafts[i];
    archive::SourcePtr src = edited_source(graft_files[i], find_edit(g.member));
    grafted_bytes += src->size();
    edits.add.push_back({g.member, std::move(src), 0755});
  }
  if (options.sbom && !plan.grafts.empty())
    add_sbom(
        edits, *analysis.zip, analysis.dist_info,
        sbom_json(analysis, plan, system_owner_lookup(options.cache.get())));
  const std::string wheel_member = analysis.dist_info + "/WHEEL";
  edits.replace[wheel_member] = archive::bytes_source(
      retagged_wheel_file(*analysis.zip, wheel_member, plan.platform_tags),
      wheel_member);

  return write_repaired_wheel(*analysis.zip, out_dir, plan.output_name, edits,
                              options, grafted_bytes,
                              known_digests(analysis, unpacked));
}

}  // namespace libpkg::bundle
