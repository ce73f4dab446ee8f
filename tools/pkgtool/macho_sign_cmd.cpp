// SPDX-License-Identifier: BSD-3-Clause
// `pkgtool macho sign FILE...` and `pkgtool macho verify FILE...`: code
// signatures of thin and fat Mach-O files (libpkg/macho/codesign.hpp).
//
// Thin and fat files are read with the library's Mach-O reader
// (macho/view.hpp: fat table bounds, overlaps, alignment); the signature
// work itself is the library's too.
#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <vector>

#include "cli_parse.hpp"
#include "commands.hpp"
#include "libpkg/base/atomic_file.hpp"
#include "libpkg/base/error.hpp"
#include "libpkg/base/integers.hpp"
#include "libpkg/base/mapped_file.hpp"
#include "libpkg/macho/codesign.hpp"
#include "libpkg/macho/format.hpp"
#include "libpkg/macho/view.hpp"

namespace pkgtool {
namespace {

using libpkg::ByteView;
using libpkg::u32;
using libpkg::u64;
using libpkg::u8;
using libpkg::ub32;
using libpkg::ub64;
namespace cs = libpkg::macho;

using libpkg::macho::MachOFile;
using libpkg::macho::Slice;

// The file's slices; a thin file that is not 64-bit is refused, as the
// signer handles only 64-bit slices (a fat file's 32-bit ones are left
// alone).
MachOFile read_slices(const ByteView& file) {
  MachOFile f = MachOFile::parse(file);
  if (!f.is_fat() && !f.slices().front().parsed())
    throw libpkg::Error(libpkg::Errc::format, file.name(),
                        "not a 64-bit Mach-O or fat file");
  return f;
}

struct Patch {
  u64 offset = 0;
  std::vector<u8> bytes;
};

// When every 64-bit slice is signed, re-signing changes only the signature
// bytes: the new signatures as patches of the file, or nullopt when a slice
// needs a new signature (and so grows).
std::optional<std::vector<Patch>> resign_patches(const MachOFile& file) {
  std::vector<std::pair<ByteView, cs::SliceLayout>> todo;
  for (const Slice& s : file.slices()) {
    if (!s.parsed()) continue;
    const ByteView& slice = s.bytes();
    cs::SliceLayout layout = cs::find_slice_layout(slice);
    if (!layout.signed_()) return std::nullopt;
    todo.emplace_back(slice, layout);
  }
  std::vector<Patch> patches;
  for (const auto& [slice, layout] : todo) {
    auto sig = cs::resign_all_pages(slice, layout);
    // A signature that grows cannot be patched in place: the slice (and a
    // fat file's layout) is rebuilt instead.
    if (sig.size() != layout.sig_size) return std::nullopt;
    patches.push_back({slice.base() + layout.sig_offset, std::move(sig)});
  }
  return patches;
}

// Writes `patches` over a copy of the file (copied inside the kernel, so a
// large file is never held in memory); nothing when they change no byte.
void write_patched(const std::string& path, const libpkg::MappedFile& file,
                   const std::vector<Patch>& patches) {
  bool same = std::all_of(patches.begin(), patches.end(), [&](const Patch& p) {
    return p.offset <= file.size() &&
           p.bytes.size() <= file.size() - p.offset &&
           std::equal(p.bytes.begin(), p.bytes.end(), file.data() + p.offset);
  });
  if (same) return;  // already signed as we would: leave the file untouched
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) libpkg::throw_errno(path, "open");
  try {
    auto out = libpkg::AtomicFile::create(path, file.mode());
    out.copy_from(fd, 0, file.size(), 0);
    for (const auto& p : patches) out.pwrite(p.offset, p.bytes);
    out.commit();
  } catch (...) {
    ::close(fd);
    throw;
  }
  ::close(fd);
}

int sign_file(const std::string& path) {
  auto file = libpkg::MappedFile::open(path);
  ByteView view = file.view();
  MachOFile fs = read_slices(view);
  if (auto patches = resign_patches(fs)) {
    write_patched(path, file, *patches);
    for (const Slice& s : fs.slices())
      std::printf("%s: %s\n", s.where().c_str(),
                  s.parsed() ? "signed" : "32-bit slice left unsigned");
    return 0;
  }
  std::string identifier = std::filesystem::path(path).filename().string();
  std::vector<std::vector<u8>> outs;
  for (const Slice& s : fs.slices()) {
    const ByteView& slice = s.bytes();
    if (!s.parsed()) {
      std::printf("%s: 32-bit slice left unsigned\n", slice.name().c_str());
      outs.emplace_back(slice.data(), slice.data() + slice.size());
      continue;
    }
    outs.emplace_back(slice.data(), slice.data() + slice.size());
    cs::sign_slice(outs.back(), slice.name(), identifier);
    std::printf("%s: signed\n", slice.name().c_str());
  }
  std::vector<u8> result;
  if (!fs.is_fat()) {
    result = std::move(outs[0]);
  } else {
    // Slices that kept their size keep their offsets; otherwise every slice
    // is laid out again at its alignment, in the original order.
    bool same = true;
    for (size_t i = 0; i < outs.size(); ++i)
      same = same && outs[i].size() == fs.slices()[i].size();
    result.assign(view.data(), view.data() + view.size());
    // Offset, size and alignment of each slice, in fat-table order.
    struct Placed {
      u64 offset, size;
      u32 align;
    };
    std::vector<Placed> order;
    for (const Slice& s : fs.slices())
      order.push_back({s.offset(), s.size(), s.fat_align()});
    u64 cursor = order.front().offset;
    std::vector<size_t> idx(order.size());
    for (size_t i = 0; i < idx.size(); ++i) idx[i] = i;
    std::sort(idx.begin(), idx.end(), [&](size_t a, size_t b) {
      return order[a].offset < order[b].offset;
    });
    if (!same) result.resize(cursor);
    for (size_t i : idx) {
      Placed& s = order[i];
      if (!same) {
        s.offset = libpkg::align_up(cursor, u64{1} << s.align);
        s.size = outs[i].size();
        result.resize(s.offset, 0);
        result.insert(result.end(), outs[i].begin(), outs[i].end());
        cursor = result.size();
      } else {
        std::copy(outs[i].begin(), outs[i].end(), result.begin() + s.offset);
      }
      const bool fat64 = fs.fat_magic() == libpkg::macho::kFatMagic64;
      u64 at = 8 + i * (fat64 ? 32 : 20);
      if (fat64) {
        *reinterpret_cast<ub64*>(result.data() + at + 8) = s.offset;
        *reinterpret_cast<ub64*>(result.data() + at + 16) = s.size;
      } else {
        if (s.offset + s.size > 0xffffffffu)
          throw libpkg::Error(libpkg::Errc::unsupported, path,
                              "slices grow past 4 GiB in a 32-bit fat header");
        *reinterpret_cast<ub32*>(result.data() + at + 8) =
            static_cast<u32>(s.offset);
        *reinterpret_cast<ub32*>(result.data() + at + 12) =
            static_cast<u32>(s.size);
      }
    }
  }
  if (result.size() == view.size() &&
      std::equal(result.begin(), result.end(), view.data()))
    return 0;  // already signed as we would: leave the file untouched
  auto out = libpkg::AtomicFile::create(path, file.mode());
  out.write(result);
  out.commit();
  return 0;
}

int verify_file(const std::string& path) {
  auto file = libpkg::MappedFile::open(path);
  ByteView view = file.view();
  MachOFile fs = read_slices(view);
  int status = 0;
  for (const Slice& s : fs.slices()) {
    const ByteView& slice = s.bytes();
    if (!s.parsed()) {
      std::printf("%s: 32-bit slice not checked\n", slice.name().c_str());
      continue;
    }
    cs::SliceLayout layout = cs::find_slice_layout(slice);
    if (!layout.signed_()) {
      std::fprintf(stderr, "error: %s: not signed\n", slice.name().c_str());
      status = 2;
      continue;
    }
    cs::VerifyReport r = cs::verify_signature(slice, layout);
    for (const auto& p : r.problems)
      std::fprintf(stderr, "error: %s: CodeDirectory %zu (hash type %u): %s\n",
                   slice.name().c_str(), p.cd,
                   r.signature.code_directories[p.cd].hash_type,
                   p.what.c_str());
    if (!r.ok()) {
      status = 2;
      continue;
    }
    const auto& cd = r.signature.code_directories.front();
    std::printf("%s: valid (%zu CodeDirectories, identifier %s, %s)\n",
                slice.name().c_str(), r.signature.code_directories.size(),
                cd.identifier.c_str(),
                (cd.flags & cs::kFlagAdhoc) ? "ad-hoc" : "CMS");
  }
  return status;
}

int run_files(const std::vector<std::string>& files,
              int (*one)(const std::string&)) {
  int status = 0;
  for (const auto& f : files) {
    try {
      status = std::max(status, one(f));
    } catch (const libpkg::Error& e) {
      std::fprintf(stderr, "error: %s\n", e.what());
      status = std::max(status, e.exit_code());
    }
  }
  return status;
}

int run_sign(const std::vector<std::string>& args) {
  CLI::App app{
      "Ad-hoc sign Mach-O files, or re-sign keeping the signature's "
      "fields",
      "macho sign"};
  std::vector<std::string> files;
  app.add_option("files", files, "thin or fat Mach-O files")->required();
  if (!parse_cli(app, args, "pkgtool macho sign", "")) return 0;
  return run_files(files, sign_file);
}

int run_verify(const std::vector<std::string>& args) {
  CLI::App app{"Verify every page hash of every CodeDirectory", "macho verify"};
  std::vector<std::string> files;
  app.add_option("files", files, "thin or fat Mach-O files")->required();
  if (!parse_cli(app, args, "pkgtool macho verify", "")) return 0;
  return run_files(files, verify_file);
}

const MachoSubcommand kSign("sign",
                            "FILE...           ad-hoc sign, or re-sign "
                            "keeping the signature's fields",
                            run_sign);
const MachoSubcommand kVerify("verify",
                              "FILE...         verify every page hash of "
                              "every CodeDirectory",
                              run_verify);

}  // namespace

}  // namespace pkgtool
