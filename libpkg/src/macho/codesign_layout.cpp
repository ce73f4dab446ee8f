// SPDX-License-Identifier: BSD-3-Clause
// Finds what a signature depends on in a 64-bit thin slice and makes room
// for a new or resized signature at the end of __LINKEDIT.
#include "macho/codesign_layout.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "macho/codesign_format.hpp"

namespace libpkg::macho {
namespace cs {
namespace {

bool is_zerofill(u32 section_flags) {
  u32 type = section_flags & 0xff;
  return type == 0x1 || type == 0xc || type == 0x12;  // S_*ZEROFILL
}

std::string segment_name(const SegmentCommand64& seg) {
  return std::string(seg.segname, strnlen(seg.segname, sizeof(seg.segname)));
}

}  // namespace

SliceCommands walk_slice(const ByteView& slice) {
  const auto& mh = slice.at<MachHeader64>(0, "Mach-O header");
  if (mh.magic != kMhMagic64)
    throw_format(slice.name(), slice.base(),
                 fmt::format("not a 64-bit little-endian Mach-O slice (magic "
                             "0x{:08x})",
                             mh.magic.value()));
  SliceCommands out;
  out.cputype = mh.cputype;
  out.layout.is_execute = mh.filetype == kMhExecute;
  out.commands_end = sizeof(MachHeader64) + u64{mh.sizeofcmds};
  ByteView cmds = slice.slice(sizeof(MachHeader64), mh.sizeofcmds,
                              "load commands (sizeofcmds)");
  out.first_content = slice.size();
  u64 off = 0;
  bool have_text = false;
  for (u32 i = 0; i < mh.ncmds; ++i) {
    const auto& lc = cmds.at<LoadCommand>(off, "load command");
    if (lc.cmdsize < sizeof(LoadCommand) || lc.cmdsize % 8 != 0 ||
        !cmds.contains(off, lc.cmdsize))
      throw_format(slice.name(), slice.base() + 32 + off,
                   fmt::format("load command {}: cmdsize 0x{:x} out of range",
                               i, lc.cmdsize.value()));
    if (lc.cmd == kLcSegment64) {
      const auto& seg = cmds.at<SegmentCommand64>(off, "LC_SEGMENT_64");
      u64 sects =
          checked_mul(seg.nsects, sizeof(Section64), slice.name(), "nsects");
      if (sizeof(SegmentCommand64) + sects > lc.cmdsize)
        throw_format(slice.name(), slice.base() + 32 + off,
                     fmt::format("load command {}: {} sections past cmdsize "
                                 "0x{:x}",
                                 i, seg.nsects.value(), lc.cmdsize.value()));
      std::string name = segment_name(seg);
      if (!slice.contains(seg.fileoff, seg.filesize))
        throw_format(slice.name(), slice.base() + 32 + off,
                     fmt::format("segment {} (fileoff 0x{:x} filesize 0x{:x}) "
                                 "past the end of the slice (0x{:x} bytes)",
                                 name, seg.fileoff.value(),
                                 seg.filesize.value(), slice.size()));
      if (name == "__TEXT") {
        have_text = true;
        out.layout.text_fileoff = seg.fileoff;
        out.layout.text_filesize = seg.filesize;
      } else if (name == "__LINKEDIT") {
        out.linkedit_cmd = 32 + off;
        out.linkedit_fileoff = seg.fileoff;
        out.linkedit_filesize = seg.filesize;
      }
      if (seg.fileoff > 0 && seg.filesize > 0)
        out.first_content = std::min<u64>(out.first_content, seg.fileoff);
      for (u32 s = 0; s < seg.nsects; ++s) {
        const auto& sec = cmds.at<Section64>(
            off + sizeof(SegmentCommand64) + s * sizeof(Section64), "section");
        if (sec.offset != 0 && sec.size != 0 && !is_zerofill(sec.flags))
          out.first_content = std::min<u64>(out.first_content, sec.offset);
      }
    } else if (lc.cmd == kLcCodeSignature) {
      const auto& cs = cmds.at<LinkeditDataCommand>(off, "LC_CODE_SIGNATURE");
      if (!slice.contains(cs.dataoff, cs.datasize))
        throw_format(
            slice.name(), slice.base() + 32 + off,
            fmt::format("LC_CODE_SIGNATURE (dataoff 0x{:x} datasize "
                        "0x{:x}) past the end of the slice (0x{:x} "
                        "bytes)",
                        cs.dataoff.value(), cs.datasize.value(), slice.size()));
      out.codesig_cmd = 32 + off;
      out.layout.sig_offset = cs.dataoff;
      out.layout.sig_size = cs.datasize;
    }
    off += lc.cmdsize;
  }
  if (!have_text) throw_format(slice.name(), slice.base(), "no __TEXT segment");
  out.layout.code_limit = out.codesig_cmd ? out.layout.sig_offset : 0;
  return out;
}

}  // namespace cs

SliceLayout find_slice_layout(const ByteView& slice) {
  return cs::walk_slice(slice).layout;
}

Placement place_signature(std::vector<u8>& slice, const std::string& name,
                          u64 new_size) {
  using namespace cs;
  ByteView view(slice, name);
  SliceCommands sc = walk_slice(view);
  if (!sc.linkedit_cmd)
    throw Error(Errc::format, name,
                "no __LINKEDIT segment to hold a signature");
  u64 le_end = sc.linkedit_fileoff + sc.linkedit_filesize;
  Placement out;
  u64 sig_offset;
  if (sc.codesig_cmd) {
    if (sc.layout.sig_offset + sc.layout.sig_size != le_end)
      throw_format(
          name, *sc.codesig_cmd,
          fmt::format("the code signature (0x{:x}-0x{:x}) is not at "
                      "the end of __LINKEDIT (0x{:x})",
                      sc.layout.sig_offset,
                      sc.layout.sig_offset + sc.layout.sig_size, le_end));
    sig_offset = sc.layout.sig_offset;
  } else {
    // A new signature starts 16-byte aligned after __LINKEDIT's data, as
    // ld64.lld places it.
    sig_offset = align_up(le_end, 16);
    if (sc.commands_end + sizeof(LinkeditDataCommand) > sc.first_content)
      throw_format(name, sc.commands_end,
                   fmt::format("no room for LC_CODE_SIGNATURE: 0x{:x} bytes "
                               "needed, 0x{:x} free",
                               sizeof(LinkeditDataCommand),
                               sc.first_content - sc.commands_end));
  }
  if (le_end != slice.size())
    throw_format(name, le_end,
                 fmt::format("0x{:x} bytes after __LINKEDIT: the signature "
                             "must end the slice",
                             slice.size() - le_end));
  u64 new_end = sig_offset + new_size;
  if (new_end > 0xffffffffu)
    throw Error(Errc::unsupported, name,
                fmt::format("a signature ending at 0x{:x} does not fit "
                            "LC_CODE_SIGNATURE's 32-bit fields",
                            new_end));
  slice.resize(new_end, 0);
  // The zero padding between __LINKEDIT's old end and the signature is
  // hashed: report it as changed.
  if (sig_offset > le_end) out.changed.push_back({le_end, sig_offset - le_end});
  auto patch = [&](u64 at, auto& field, auto value) {
    field = value;
    out.changed.push_back({at, sizeof(field)});
  };
  if (!sc.codesig_cmd) {
    auto& mh = *reinterpret_cast<MachHeader64*>(slice.data());
    auto& lc =
        *reinterpret_cast<LinkeditDataCommand*>(slice.data() + sc.commands_end);
    lc.cmd = kLcCodeSignature;
    lc.cmdsize = sizeof(LinkeditDataCommand);
    out.changed.push_back({sc.commands_end, sizeof(LinkeditDataCommand)});
    patch(16, mh.ncmds, mh.ncmds + 1);
    patch(20, mh.sizeofcmds,
          static_cast<u32>(mh.sizeofcmds + sizeof(LinkeditDataCommand)));
    sc.codesig_cmd = sc.commands_end;
  }
  auto& lc =
      *reinterpret_cast<LinkeditDataCommand*>(slice.data() + *sc.codesig_cmd);
  patch(*sc.codesig_cmd + 8, lc.dataoff, static_cast<u32>(sig_offset));
  patch(*sc.codesig_cmd + 12, lc.datasize, static_cast<u32>(new_size));
  auto& seg =
      *reinterpret_cast<SegmentCommand64*>(slice.data() + *sc.linkedit_cmd);
  // ld64.lld leaves __LINKEDIT's vmsize equal to its filesize; keep that
  // convention when we find it, otherwise round up to the target page.
  u64 page = sc.cputype == kCpuTypeArm64 ? 0x4000 : 0x1000;
  u64 filesize = new_end - sc.linkedit_fileoff;
  u64 vmsize =
      seg.vmsize == sc.linkedit_filesize ? filesize : align_up(filesize, page);
  patch(*sc.linkedit_cmd + 48, seg.filesize, filesize);
  patch(*sc.linkedit_cmd + 32, seg.vmsize, std::max<u64>(seg.vmsize, vmsize));
  out.layout = sc.layout;
  out.layout.sig_offset = sig_offset;
  out.layout.sig_size = new_size;
  out.layout.code_limit = sig_offset;
  return out;
}

}  // namespace libpkg::macho
