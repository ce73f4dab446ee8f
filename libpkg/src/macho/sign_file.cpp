// SPDX-License-Identifier: BSD-3-Clause
// Signing whole thin and fat files (sign_file.hpp): moved here from
// `pkgtool macho sign` so the Python module signs the same way. Thin and fat
// files are read with the library's Mach-O reader (macho/view.hpp), so bad
// input gets the same messages as every other Mach-O command.
#include "libpkg/macho/sign_file.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <optional>

#include "libpkg/base/atomic_file.hpp"
#include "libpkg/base/error.hpp"
#include "libpkg/base/mapped_file.hpp"
#include "libpkg/macho/codesign.hpp"
#include "libpkg/macho/format.hpp"
#include "libpkg/macho/view.hpp"

namespace libpkg::macho {

namespace {

// The file's slices, read by the library's Mach-O reader (fat table
// bounds, overlaps, alignment). A thin file that is not 64-bit is refused, as
// the signer handles only 64-bit slices (a fat file's 32-bit ones are left
// alone).
MachOFile read_slices(const ByteView& file) {
  MachOFile f = MachOFile::parse(file);
  if (!f.is_fat() && !f.slices().front().parsed())
    throw Error(Errc::format, file.name(), "not a 64-bit Mach-O or fat file");
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
  std::vector<std::pair<ByteView, SliceLayout>> todo;
  for (const Slice& s : file.slices()) {
    if (!s.parsed()) continue;
    const ByteView& slice = s.bytes();
    SliceLayout layout = find_slice_layout(slice);
    if (!layout.signed_()) return std::nullopt;
    todo.emplace_back(slice, layout);
  }
  std::vector<Patch> patches;
  for (const auto& [slice, layout] : todo) {
    auto sig = resign_all_pages(slice, layout);
    // A signature that grows cannot be patched in place: the slice (and a
    // fat file's layout) is rebuilt instead.
    if (sig.size() != layout.sig_size) return std::nullopt;
    patches.push_back({slice.base() + layout.sig_offset, std::move(sig)});
  }
  return patches;
}

// Writes `patches` over a copy of the file (copied inside the kernel, so a
// large file is never held in memory); nothing when they change no byte.
bool write_patched(const std::string& path, const MappedFile& file,
                   const std::vector<Patch>& patches) {
  bool same = std::all_of(patches.begin(), patches.end(), [&](const Patch& p) {
    return p.offset <= file.size() &&
           p.bytes.size() <= file.size() - p.offset &&
           std::equal(p.bytes.begin(), p.bytes.end(), file.data() + p.offset);
  });
  if (same) return false;  // already signed as we would: left untouched
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw_errno(path, "open");
  try {
    auto out = AtomicFile::create(path, file.mode());
    out.copy_from(fd, 0, file.size(), 0);
    for (const auto& p : patches) out.pwrite(p.offset, p.bytes);
    out.commit();
  } catch (...) {
    ::close(fd);
    throw;
  }
  ::close(fd);
  return true;
}

}  // namespace

std::vector<FileSlice> signature_slices(const ByteView& file,
                                        const std::string& path) {
  // Kept in a variable: a range-for over a temporary's slices() would
  // outlive the temporary.
  const MachOFile fs = read_slices(ByteView(file.span(), path, file.base()));
  std::vector<FileSlice> out;
  for (const Slice& s : fs.slices()) out.push_back({s.bytes(), s.parsed()});
  return out;
}

SignFileResult sign_file(const std::filesystem::path& file_path) {
  const std::string path = file_path.string();
  SignFileResult res;
  auto file = MappedFile::open(path);
  ByteView view = file.view();
  MachOFile fs = read_slices(ByteView(view.span(), path, view.base()));
  if (auto patches = resign_patches(fs)) {
    res.rewritten = write_patched(path, file, *patches);
    for (const Slice& s : fs.slices())
      res.slices.push_back({s.where(), s.parsed()});
    return res;
  }
  std::string identifier = std::filesystem::path(path).filename().string();
  std::vector<std::vector<u8>> outs;
  for (const Slice& s : fs.slices()) {
    const ByteView& slice = s.bytes();
    if (!s.parsed()) {
      res.slices.push_back({slice.name(), false});
      outs.emplace_back(slice.data(), slice.data() + slice.size());
      continue;
    }
    outs.emplace_back(slice.data(), slice.data() + slice.size());
    sign_slice(outs.back(), slice.name(), identifier);
    res.slices.push_back({slice.name(), true});
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
        s.offset = align_up(cursor, u64{1} << s.align);
        s.size = outs[i].size();
        result.resize(s.offset, 0);
        result.insert(result.end(), outs[i].begin(), outs[i].end());
        cursor = result.size();
      } else {
        std::copy(outs[i].begin(), outs[i].end(), result.begin() + s.offset);
      }
      const bool fat64 = fs.fat_magic() == kFatMagic64;
      u64 at = 8 + i * (fat64 ? 32 : 20);
      if (fat64) {
        *reinterpret_cast<ub64*>(result.data() + at + 8) = s.offset;
        *reinterpret_cast<ub64*>(result.data() + at + 16) = s.size;
      } else {
        if (s.offset + s.size > 0xffffffffu)
          throw Error(Errc::unsupported, path,
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
    return res;  // already signed as we would: leave the file untouched
  auto out = AtomicFile::create(path, file.mode());
  out.write(result);
  out.commit();
  res.rewritten = true;
  return res;
}

}  // namespace libpkg::macho
