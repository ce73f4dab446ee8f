// SPDX-License-Identifier: BSD-3-Clause
// wheel fuse (see fuse.hpp). Mach-O members are decompressed once into a
// scratch directory and mapped; a fused member is streamed into the zip
// writer from those mappings (fat header + slices at llvm-lipo's offsets),
// so no fat file is ever assembled in memory or on disk.
#include "libpkg/wheel/fuse.hpp"

#include <fcntl.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <set>

#include "libpkg/archive/zip_reader.hpp"
#include "libpkg/base/atomic_file.hpp"
#include "libpkg/base/error.hpp"
#include "libpkg/base/fd.hpp"
#include "libpkg/base/mapped_file.hpp"
#include "libpkg/base/scratch_dir.hpp"
#include "libpkg/macho/format.hpp"
#include "libpkg/macho/lipo.hpp"
#include "libpkg/macho/view.hpp"
#include "libpkg/wheel/macos_tag.hpp"
#include "libpkg/wheel/metadata.hpp"
#include "libpkg/wheel/record.hpp"
#include "libpkg/wheel/wheel.hpp"

namespace fs = std::filesystem;

namespace libpkg::wheel {

namespace {

// One input wheel: its reader, name, .dist-info and verified RECORD.
struct Input {
  fs::path path;
  archive::ZipReader zip;
  WheelName name;
  std::string dist_info;
  Record record;

  static Input open(const fs::path& path) {
    WheelName name = WheelName::parse(path.filename().string());
    auto zip = archive::ZipReader::open(path);
    std::string dist_info = find_dist_info(zip, name);
    require_verified(zip, 0, "fuse only verified wheels");
    Record record;
    const std::string record_name = dist_info + "/RECORD";
    if (const auto* e = zip.find(record_name))
      record = Record::parse(zip.read_text(*e), zip.name() + ":" + record_name);
    return {path, std::move(zip), std::move(name), std::move(dist_info),
            std::move(record)};
  }

  std::optional<std::array<u8, 32>> sha256(const std::string& member) const {
    const RecordRow* row = record.find(member);
    if (!row) return std::nullopt;
    return parse_sha256_hash(row->hash);
  }
};

// A Mach-O member decompressed into the scratch directory and mapped; the
// reader's error prefix is "WHEEL:MEMBER".
struct MappedMachO {
  MappedFile map;
  std::optional<macho::MachOFile> file;
};
using MachOPtr = std::shared_ptr<const MappedMachO>;

// Whether the member starts with a Mach-O (or fat) magic.
bool looks_like_macho(const Input& in, const archive::ZipEntry& e) {
  return !e.is_directory() &&
         macho::MachOFile::has_magic(in.zip.read_prefix(e, 8));
}

MachOPtr extract_macho(const Input& in, const archive::ZipEntry& e,
                       const fs::path& scratch, int index) {
  const fs::path path = scratch / fmt::format("m{}", index);
  {
    Fd out(::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600));
    if (!out)
      throw Error(Errc::io, path.string(), "cannot create a scratch file");
    in.zip.read(e, [&](std::span<const u8> piece) {
      write_all(out.get(), piece, path.string());
    });
  }
  auto m = std::make_shared<MappedMachO>();
  m->map = MappedFile::open(path);
  m->file = macho::MachOFile::parse(
      ByteView(m->map.view().span(), in.zip.name() + ":" + e.name));
  return m;
}

// The fat file of two Mach-O members, read on demand from their mappings.
class FatSource : public archive::ContentSource {
 public:
  FatSource(MachOPtr a, MachOPtr b, std::string name)
      : a_(std::move(a)), b_(std::move(b)), name_(std::move(name)) {
    auto members = macho::plan_fat({&*a_->file, &*b_->file});
    head_ = macho::fat_header_bytes(members);
    size_ = macho::fat_size(members);
    for (const auto& m : members)
      pieces_.push_back(
          {m.offset, m.slice->bytes().range(0, m.slice->size(), "slice")});
  }
  u64 size() const override { return size_; }
  const std::string& name() const override { return name_; }
  void read(u64 offset, std::span<u8> out) const override {
    if (offset > size_ || out.size() > size_ - offset)
      throw Error(Errc::io, name_, "read past the end of the fat file");
    std::memset(out.data(), 0, out.size());
    copy_overlap(offset, out, 0, head_);
    for (const auto& p : pieces_) copy_overlap(offset, out, p.first, p.second);
  }

 private:
  static void copy_overlap(u64 offset, std::span<u8> out, u64 at,
                           std::span<const u8> bytes) {
    const u64 begin = std::max(offset, at);
    const u64 end = std::min(offset + out.size(), at + bytes.size());
    if (begin >= end) return;
    std::memcpy(out.data() + (begin - offset), bytes.data() + (begin - at),
                end - begin);
  }

  MachOPtr a_, b_;  // keep the mappings alive
  std::string name_;
  std::vector<u8> head_;
  u64 size_ = 0;
  std::vector<std::pair<u64, std::span<const u8>>> pieces_;
};

void require_same_project(const Input& a, const Input& b) {
  auto differ = [&](const std::string& what, const std::string& va,
                    const std::string& vb) {
    throw Error(Errc::usage, b.zip.name(),
                fmt::format("{} {} differs from {}'s {}: only wheels of one "
                            "build that differ in platform can be fused",
                            what, vb, a.zip.name(), va));
  };
  auto join = [](const std::vector<std::string>& v) {
    return fmt::format("{}", fmt::join(v, "."));
  };
  if (canonicalize_name(a.name.distribution) !=
      canonicalize_name(b.name.distribution))
    differ("distribution", a.name.distribution, b.name.distribution);
  if (a.name.version != b.name.version)
    differ("version", a.name.version, b.name.version);
  if (a.name.build.value_or("") != b.name.build.value_or(""))
    differ("build tag", a.name.build.value_or("(none)"),
           b.name.build.value_or("(none)"));
  if (a.name.python_tags != b.name.python_tags)
    differ("python tag", join(a.name.python_tags), join(b.name.python_tags));
  if (a.name.abi_tags != b.name.abi_tags)
    differ("abi tag", join(a.name.abi_tags), join(b.name.abi_tags));
  if (a.dist_info != b.dist_info)
    differ(".dist-info directory", a.dist_info, b.dist_info);
  for (const Input* in : {&a, &b})
    for (const auto& t : in->name.platform_tags)
      if (!t.starts_with("macosx_"))
        throw Error(Errc::usage, in->zip.name(),
                    fmt::format("platform tag {} is not a macOS tag", t));
}

std::string wheel_text(const Input& in) {
  const std::string member = in.dist_info + "/WHEEL";
  const archive::ZipEntry* e = in.zip.find(member);
  if (!e) throw Error(Errc::format, in.zip.name(), "missing " + member);
  return in.zip.read_text(*e);
}

// The Mach-O slices of the output: `versioned` for the platform tag, and
// `loadable` (every slice of an executable, dylib or bundle) to check that
// each such file has every arch the tag claims.
struct OutputSlices {
  std::vector<MacosBinary> versioned, loadable;
};

// Every slice's minos, for the platform tag (slices without a version
// command are left out, as delocate does).
void add_binaries(const MachOPtr& m, const std::string& member,
                  OutputSlices& out_slices) {
  for (const auto& slice : m->file->slices()) {
    const u32 type = slice.filetype();
    if (type == macho::kMhExecute || type == macho::kMhDylib ||
        type == macho::kMhBundle)
      out_slices.loadable.push_back({member, slice.arch(), {}});
    if (!slice.parsed()) continue;
    auto v = slice.platform_version();
    if (!v) continue;
    out_slices.versioned.push_back(
        {member, slice.arch(),
         MacosVersion{v->minos >> 16, (v->minos >> 8) & 0xff}});
  }
}

bool same_content(const Input& a, const archive::ZipEntry& ea, const Input& b,
                  const archive::ZipEntry& eb) {
  if (ea.uncompressed_size != eb.uncompressed_size || ea.crc32 != eb.crc32)
    return false;
  // Both RECORDs are verified: equal digests are equal contents.
  auto ha = a.sha256(ea.name), hb = b.sha256(eb.name);
  return ha && hb && *ha == *hb;
}

}  // namespace

FuseResult fuse(const fs::path& a_path, const fs::path& b_path,
                const FuseOptions& options) {
  const Input a = Input::open(a_path);
  const Input b = Input::open(b_path);
  require_same_project(a, b);
  std::error_code ec;
  if (fs::equivalent(a_path, b_path, ec))
    throw Error(Errc::usage, b.zip.name(),
                "is the same file as the first wheel");

  ScratchDir scratch = ScratchDir::in_temp("libpkg-fuse-");
  int extracted = 0;
  WheelEdits edits;
  FuseResult result;
  std::vector<std::string> differing;
  OutputSlices binaries;  // every slice of the output, for the tag
  const std::string wheel_member = a.dist_info + "/WHEEL";

  for (const auto& ea : a.zip.entries()) {
    if (ea.is_directory() || ea.name == wheel_member || is_record_file(ea.name))
      continue;
    const archive::ZipEntry* eb = b.zip.find(ea.name);
    const bool a_macho = looks_like_macho(a, ea);
    if (!eb || same_content(a, ea, b, *eb)) {
      if (a_macho)
        add_binaries(extract_macho(a, ea, scratch.path(), ++extracted), ea.name,
                     binaries);
      continue;  // kept: copied raw from a
    }
    if (a_macho && looks_like_macho(b, *eb)) {
      MachOPtr ma = extract_macho(a, ea, scratch.path(), ++extracted);
      MachOPtr mb = extract_macho(b, *eb, scratch.path(), ++extracted);
      edits.replace[ea.name] = std::make_shared<FatSource>(
          ma, mb, a.zip.name() + "+" + b.zip.name() + ":" + ea.name);
      add_binaries(ma, ea.name, binaries);
      add_binaries(mb, ea.name, binaries);
      result.fused.push_back(ea.name);
      continue;
    }
    switch (options.prefer) {
      case FusePrefer::none:
        differing.push_back(ea.name);
        break;
      case FusePrefer::a:
        if (a_macho)
          add_binaries(extract_macho(a, ea, scratch.path(), ++extracted),
                       ea.name, binaries);
        result.preferred.push_back(ea.name);
        break;
      case FusePrefer::b:
        if (looks_like_macho(b, *eb))
          add_binaries(extract_macho(b, *eb, scratch.path(), ++extracted),
                       ea.name, binaries);
        edits.raw_from[ea.name] = {&b.zip, eb, b.sha256(eb->name)};
        result.preferred.push_back(ea.name);
        break;
    }
  }
  // Members only b has.
  for (const auto& eb : b.zip.entries()) {
    if (eb.is_directory() || is_record_file(eb.name) || a.zip.find(eb.name))
      continue;
    if (looks_like_macho(b, eb))
      add_binaries(extract_macho(b, eb, scratch.path(), ++extracted), eb.name,
                   binaries);
    edits.raw_from[eb.name] = {&b.zip, &eb, b.sha256(eb.name)};
  }

  const MacosTagResult tags =
      compute_macos_platform_tags(binaries.versioned, {}, a.zip.name());
  const WheelName out_name = with_platform_tags(a.name, tags.platform_tags);
  // A multi-arch tag promises every arch for the whole wheel; a file only
  // one input has (or thin in both) would fail to load on the other arch.
  // delocate-merge tags such a wheel universal2 anyway.
  if (auto lacking = files_lacking_tag_archs(binaries.loadable, tags);
      !lacking.empty())
    throw Error(Errc::usage, out_name.format(),
                fmt::format("would be tagged {} but {} loadable Mach-O "
                            "file(s) lack an architecture of that tag: {}",
                            fmt::join(tags.platform_tags, "."), lacking.size(),
                            fmt::join(lacking, ", ")));
  // WHEEL: apart from its Tag lines it must agree too.
  const std::string wheel_file = a.zip.name() + ":" + wheel_member;
  const std::string wheel_a =
      retag_wheel_text(wheel_text(a), out_name, wheel_file);
  const std::string wheel_b = retag_wheel_text(
      wheel_text(b), out_name, b.zip.name() + ":" + wheel_member);
  if (wheel_a != wheel_b && options.prefer == FusePrefer::none)
    differing.push_back(wheel_member);
  if (!differing.empty())
    throw Error(Errc::usage, b.zip.name(),
                fmt::format("{} file(s) differ from {} and are not Mach-O: "
                            "{} (pass --prefer a|b to take one side's copy)",
                            differing.size(), a.zip.name(),
                            fmt::join(differing, ", ")));
  edits.replace[wheel_member] = archive::bytes_source(
      options.prefer == FusePrefer::b ? wheel_b : wheel_a, wheel_file);

  fs::path out_dir =
      options.out_dir.empty() ? a_path.parent_path() : options.out_dir;
  if (out_dir.empty()) out_dir = ".";
  const fs::path out = out_dir / out_name.format();
  for (const fs::path* in : {&a_path, &b_path})
    if (fs::equivalent(out, *in, ec))
      throw Error(Errc::usage, in->string(),
                  "the fused wheel " + out.string() + " would replace it");
  create_output_directory(out_dir);

  RewriteOptions ropt;
  ropt.level = options.level;
  ropt.threads = options.threads;
  ropt.progress = options.progress;
  // Both inputs were verified above.
  ropt.allow_unverified = true;
  RewriteResult written = rewrite(a.zip, out, edits, ropt);
  result.path = written.path;
  result.name = out_name;
  result.members = written.members;
  result.raw_copies = written.raw_copies;
  return result;
}

}  // namespace libpkg::wheel
