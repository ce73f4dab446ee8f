// SPDX-License-Identifier: BSD-3-Clause
// Builds small Mach-O images in memory for the reader and editor tests: a
// 64-bit little-endian slice with a __TEXT segment holding one section at a
// chosen offset (which sets the header padding), dylib and rpath commands,
// and fat wrappers. Malformed inputs are these images with a field patched.
#pragma once

#include <cstring>
#include <string>
#include <vector>

#include "libpkg/base/bytes.hpp"
#include "libpkg/macho/format.hpp"

namespace macho_test {

using namespace libpkg;
using namespace libpkg::macho;

struct Builder {
  u32 cputype = kCpuTypeArm64;
  u32 filetype = kMhDylib;
  u32 text_offset = 0x400;  // first section's file offset
  u32 size = 0x1000;        // slice size
  std::vector<std::vector<u8>> cmds;

  static void put32(std::vector<u8>& v, size_t at, u32 x) {
    ul32 f = x;
    std::memcpy(v.data() + at, &f, 4);
  }

  Builder& string_cmd(u32 cmd, u32 fixed, const std::string& s) {
    std::vector<u8> c(align_up(fixed + s.size() + 1, 8), 0);
    put32(c, 0, cmd);
    put32(c, 4, static_cast<u32>(c.size()));
    put32(c, 8, fixed);
    std::memcpy(c.data() + fixed, s.data(), s.size());
    cmds.push_back(c);
    return *this;
  }
  Builder& id(const std::string& s) { return string_cmd(kLcIdDylib, 24, s); }
  Builder& dylib(const std::string& s, u32 cmd = kLcLoadDylib) {
    return string_cmd(cmd, 24, s);
  }
  Builder& rpath(const std::string& s) { return string_cmd(kLcRpath, 12, s); }
  Builder& code_signature(u32 off, u32 size_) {
    std::vector<u8> c(16, 0);
    put32(c, 0, kLcCodeSignature);
    put32(c, 4, 16);
    put32(c, 8, off);
    put32(c, 12, size_);
    cmds.push_back(c);
    return *this;
  }

  std::vector<u8> segment() const {
    std::vector<u8> c(sizeof(SegmentCommand64) + sizeof(Section64), 0);
    auto* seg = reinterpret_cast<SegmentCommand64*>(c.data());
    seg->cmd = kLcSegment64;
    seg->cmdsize = static_cast<u32>(c.size());
    std::memcpy(seg->segname, "__TEXT", 6);
    seg->vmsize = size;
    seg->filesize = size;
    seg->nsects = 1;
    auto* sec = reinterpret_cast<Section64*>(c.data() + sizeof(*seg));
    std::memcpy(sec->sectname, "__text", 6);
    std::memcpy(sec->segname, "__TEXT", 6);
    sec->addr = text_offset;
    sec->size = 16;
    sec->offset = text_offset;
    return c;
  }

  std::vector<u8> build() const {
    std::vector<u8> out(size, 0);
    std::vector<u8> all = segment();
    for (const auto& c : cmds) all.insert(all.end(), c.begin(), c.end());
    auto* h = reinterpret_cast<MachHeader64*>(out.data());
    h->magic = kMhMagic64;
    h->cputype = cputype;
    h->filetype = filetype;
    h->ncmds = static_cast<u32>(cmds.size() + 1);
    h->sizeofcmds = static_cast<u32>(all.size());
    std::memcpy(out.data() + 32, all.data(), all.size());
    std::memset(out.data() + text_offset, 0xcc, 16);
    return out;
  }
};

// Offset of load command `index` in a thin image.
inline size_t command_offset(const std::vector<u8>& img, u32 index) {
  size_t off = 32;
  for (u32 i = 0; i < index; ++i) {
    ul32 size;
    std::memcpy(&size, img.data() + off + 4, 4);
    off += size;
  }
  return off;
}

struct FatSlice {
  std::vector<u8> bytes;
  u32 cputype;
  u32 offset;
};

inline std::vector<u8> fat(const std::vector<FatSlice>& slices,
                           bool wide = false) {
  size_t end = 0;
  for (const auto& s : slices)
    end = std::max<size_t>(end, s.offset + s.bytes.size());
  std::vector<u8> out(end, 0);
  auto* h = reinterpret_cast<FatHeader*>(out.data());
  h->magic = wide ? kFatMagic64 : kFatMagic;
  h->nfat_arch = static_cast<u32>(slices.size());
  for (size_t i = 0; i < slices.size(); ++i) {
    if (wide) {
      auto* a = reinterpret_cast<FatArch64*>(out.data() + 8 + i * 32);
      a->cputype = slices[i].cputype;
      a->offset = slices[i].offset;
      a->size = slices[i].bytes.size();
      a->align = 12;
    } else {
      auto* a = reinterpret_cast<FatArch*>(out.data() + 8 + i * 20);
      a->cputype = slices[i].cputype;
      a->offset = slices[i].offset;
      a->size = static_cast<u32>(slices[i].bytes.size());
      a->align = 12;
    }
    std::memcpy(out.data() + slices[i].offset, slices[i].bytes.data(),
                slices[i].bytes.size());
  }
  return out;
}

}  // namespace macho_test
