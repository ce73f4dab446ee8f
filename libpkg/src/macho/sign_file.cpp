// SPDX-License-Identifier: BSD-3-Clause
// Signing whole thin and fat files (sign_file.hpp): moved here from
// `pkgtool macho sign` so the Python module signs the same way. The fat
// header is read here with its own bounds checks, as the command did.
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

namespace libpkg::macho {

namespace {

constexpr u32 kFatMagic = 0xcafebabe;
constexpr u32 kFatMagic64 = 0xcafebabf;
constexpr u32 kMhMagic64 = 0xfeedfacf;

struct FatSlice {
  u32 cputype = 0;
  u64 offset = 0;
  u64 size = 0;
  u32 align = 0;
};

struct FileSlices {
  bool fat = false;
  bool fat64 = false;
  std::vector<FatSlice> slices;
};

std::string arch_name(u32 cputype) {
  switch (cputype) {
    case 0x0100000c:
      return "arm64";
    case 0x01000007:
      return "x86_64";
    case 7:
      return "i386";
    case 12:
      return "arm";
    case 18:
      return "ppc";
    case 0x01000012:
      return "ppc64";
    default:
      return fmt::format("cputype 0x{:x}", cputype);
  }
}

FileSlices read_slices(const ByteView& file) {
  FileSlices out;
  u32 magic = file.size() >= 4 ? u32{file.at<ub32>(0, "magic")} : 0;
  if (magic != kFatMagic && magic != kFatMagic64) {
    u32 le = file.size() >= 8 ? u32{file.at<ul32>(0, "magic")} : 0;
    if (le != kMhMagic64)
      throw Error(Errc::format, file.name(), "not a 64-bit Mach-O or fat file");
    out.slices.push_back({u32{file.at<ul32>(4, "cputype")}, 0, file.size(), 0});
    return out;
  }
  out.fat = true;
  out.fat64 = magic == kFatMagic64;
  u32 n = file.at<ub32>(4, "nfat_arch");
  u64 entry = out.fat64 ? 32 : 20;
  if (n == 0 || n > (file.size() - 8) / entry)
    throw_format(file.name(), 4, fmt::format("nfat_arch {} out of range", n));
  for (u32 i = 0; i < n; ++i) {
    u64 at = 8 + i * entry;
    FatSlice s;
    s.cputype = file.at<ub32>(at, "fat_arch");
    s.offset = out.fat64 ? u64{file.at<ub64>(at + 8, "fat_arch")}
                         : u64{file.at<ub32>(at + 8, "fat_arch")};
    s.size = out.fat64 ? u64{file.at<ub64>(at + 16, "fat_arch")}
                       : u64{file.at<ub32>(at + 12, "fat_arch")};
    s.align = out.fat64 ? u32{file.at<ub32>(at + 24, "fat_arch")}
                        : u32{file.at<ub32>(at + 16, "fat_arch")};
    if (!file.contains(s.offset, s.size) || s.offset < 8 + n * entry ||
        s.align > 15)
      throw_format(
          file.name(), at,
          fmt::format("slice {} ({}) offset 0x{:x} size 0x{:x} align 2^{} "
                      "out of range",
                      i, arch_name(s.cputype), s.offset, s.size, s.align));
    for (const auto& o : out.slices)
      if (s.offset < o.offset + o.size && o.offset < s.offset + s.size)
        throw_format(file.name(), at,
                     fmt::format("slice {} ({}) overlaps slice {}", i,
                                 arch_name(s.cputype), arch_name(o.cputype)));
    out.slices.push_back(s);
  }
  return out;
}

bool is_64bit_slice(const ByteView& slice) {
  return slice.size() >= 4 && u32{slice.at<ul32>(0, "magic")} == kMhMagic64;
}

std::string slice_name(const std::string& file, const FatSlice& s) {
  return fmt::format("{} ({})", file, arch_name(s.cputype));
}

struct Patch {
  u64 offset = 0;
  std::vector<u8> bytes;
};

// When every 64-bit slice is signed, re-signing changes only the signature
// bytes: the new signatures as patches of the file, or nullopt when a slice
// needs a new signature (and so grows).
std::optional<std::vector<Patch>> resign_patches(const std::string& path,
                                                 const ByteView& view,
                                                 const FileSlices& fs) {
  std::vector<std::pair<ByteView, SliceLayout>> todo;
  for (const auto& s : fs.slices) {
    ByteView slice(view.span().subspan(s.offset, s.size), slice_name(path, s),
                   s.offset);
    if (!is_64bit_slice(slice)) continue;
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
  std::vector<FileSlice> out;
  for (const auto& s : read_slices(file).slices) {
    ByteView slice(file.span().subspan(s.offset, s.size), slice_name(path, s),
                   s.offset);
    out.push_back({slice, is_64bit_slice(slice)});
  }
  return out;
}

SignFileResult sign_file(const std::filesystem::path& file_path) {
  const std::string path = file_path.string();
  SignFileResult res;
  auto file = MappedFile::open(path);
  ByteView view = file.view();
  FileSlices fs = read_slices(view);
  if (auto patches = resign_patches(path, view, fs)) {
    res.rewritten = write_patched(path, file, *patches);
    for (const auto& s : fs.slices)
      res.slices.push_back(
          {slice_name(path, s),
           is_64bit_slice(view.slice(s.offset, s.size, "slice"))});
    return res;
  }
  std::string identifier = std::filesystem::path(path).filename().string();
  std::vector<std::vector<u8>> outs;
  for (const auto& s : fs.slices) {
    ByteView slice(view.span().subspan(s.offset, s.size), slice_name(path, s),
                   s.offset);
    if (!is_64bit_slice(slice)) {
      res.slices.push_back({slice.name(), false});
      outs.emplace_back(slice.data(), slice.data() + slice.size());
      continue;
    }
    outs.emplace_back(slice.data(), slice.data() + slice.size());
    sign_slice(outs.back(), slice.name(), identifier);
    res.slices.push_back({slice.name(), true});
  }
  std::vector<u8> result;
  if (!fs.fat) {
    result = std::move(outs[0]);
  } else {
    // Slices that kept their size keep their offsets; otherwise every slice
    // is laid out again at its alignment, in the original order.
    bool same = true;
    for (size_t i = 0; i < outs.size(); ++i)
      same = same && outs[i].size() == fs.slices[i].size;
    result.assign(view.data(), view.data() + view.size());
    u64 cursor = fs.slices.front().offset;
    std::vector<FatSlice> order = fs.slices;
    std::vector<size_t> idx(order.size());
    for (size_t i = 0; i < idx.size(); ++i) idx[i] = i;
    std::sort(idx.begin(), idx.end(), [&](size_t a, size_t b) {
      return order[a].offset < order[b].offset;
    });
    if (!same) result.resize(cursor);
    for (size_t i : idx) {
      FatSlice& s = order[i];
      if (!same) {
        s.offset = align_up(cursor, u64{1} << s.align);
        s.size = outs[i].size();
        result.resize(s.offset, 0);
        result.insert(result.end(), outs[i].begin(), outs[i].end());
        cursor = result.size();
      } else {
        std::copy(outs[i].begin(), outs[i].end(), result.begin() + s.offset);
      }
      u64 at = 8 + i * (fs.fat64 ? 32 : 20);
      if (fs.fat64) {
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
