// SPDX-License-Identifier: BSD-3-Clause
// The Mach-O reader: fat table and headers at open, load commands on demand.
#include "libpkg/macho/view.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "libpkg/macho/format.hpp"

namespace libpkg::macho {

namespace {

std::string_view fixed_name(const char (&field)[16]) {
  return {field, strnlen(field, sizeof(field))};
}

u32 load_u32(const u8* p, bool little) {
  u32 v;
  std::memcpy(&v, p, 4);
  bool native_little = std::endian::native == std::endian::little;
  return little == native_little ? v : byteswap(v);
}

}  // namespace

std::string command_name(u32 cmd) {
  switch (cmd) {
    case kLcSegment:
      return "LC_SEGMENT";
    case kLcSymtab:
      return "LC_SYMTAB";
    case kLcDysymtab:
      return "LC_DYSYMTAB";
    case kLcLoadDylib:
      return "LC_LOAD_DYLIB";
    case kLcIdDylib:
      return "LC_ID_DYLIB";
    case kLcLoadDylinker:
      return "LC_LOAD_DYLINKER";
    case kLcLoadWeakDylib:
      return "LC_LOAD_WEAK_DYLIB";
    case kLcSegment64:
      return "LC_SEGMENT_64";
    case kLcUuid:
      return "LC_UUID";
    case kLcRpath:
      return "LC_RPATH";
    case kLcCodeSignature:
      return "LC_CODE_SIGNATURE";
    case kLcReexportDylib:
      return "LC_REEXPORT_DYLIB";
    case kLcLazyLoadDylib:
      return "LC_LAZY_LOAD_DYLIB";
    case kLcDyldInfo:
      return "LC_DYLD_INFO";
    case kLcDyldInfoOnly:
      return "LC_DYLD_INFO_ONLY";
    case kLcLoadUpwardDylib:
      return "LC_LOAD_UPWARD_DYLIB";
    case kLcVersionMinMacosx:
      return "LC_VERSION_MIN_MACOSX";
    case kLcFunctionStarts:
      return "LC_FUNCTION_STARTS";
    case kLcMain:
      return "LC_MAIN";
    case kLcDataInCode:
      return "LC_DATA_IN_CODE";
    case kLcSourceVersion:
      return "LC_SOURCE_VERSION";
    case kLcBuildVersion:
      return "LC_BUILD_VERSION";
    case kLcDyldExportsTrie:
      return "LC_DYLD_EXPORTS_TRIE";
    case kLcDyldChainedFixups:
      return "LC_DYLD_CHAINED_FIXUPS";
    default:
      return fmt::format("0x{:x}", cmd);
  }
}

std::string arch_name(u32 cputype, u32 cpusubtype) {
  u32 sub = cpusubtype & ~kCpuSubtypeMask;
  switch (cputype) {
    case kCpuTypeX86_64:
      return sub == kCpuSubtypeX86_64H ? "x86_64h" : "x86_64";
    case kCpuTypeArm64:
      return sub == kCpuSubtypeArm64E ? "arm64e" : "arm64";
    case kCpuTypeX86:
      return "i386";
    case kCpuTypeArm:
      return "arm";
    case kCpuTypePowerPC:
      return "ppc";
    case kCpuTypePowerPC64:
      return "ppc64";
    default:
      return fmt::format("cputype 0x{:x}", cputype);
  }
}

std::string filetype_name(u32 filetype) {
  switch (filetype) {
    case kMhObject:
      return "object";
    case kMhExecute:
      return "execute";
    case kMhDylib:
      return "dylib";
    case kMhDylinker:
      return "dylinker";
    case kMhBundle:
      return "bundle";
    default:
      return fmt::format("filetype 0x{:x}", filetype);
  }
}

std::string version_string(u32 v) {
  u32 major = v >> 16, minor = (v >> 8) & 0xff, patch = v & 0xff;
  return patch ? fmt::format("{}.{}.{}", major, minor, patch)
               : fmt::format("{}.{}", major, minor);
}

const char* dylib_kind_name(DylibKind kind) {
  switch (kind) {
    case DylibKind::load:
      return "load";
    case DylibKind::weak:
      return "weak";
    case DylibKind::reexport:
      return "reexport";
    case DylibKind::upward:
      return "upward";
    case DylibKind::lazy:
      return "lazy";
  }
  return "?";
}

const char* fixup_format_name(FixupFormat f) {
  switch (f) {
    case FixupFormat::none:
      return "none";
    case FixupFormat::dyld_info:
      return "dyld_info";
    case FixupFormat::chained_fixups:
      return "chained_fixups";
  }
  return "?";
}

bool Section::has_file_content() const {
  u32 type = flags & kSectionTypeMask;
  bool zerofill = type == kSZerofill || type == kSGbZerofill ||
                  type == kSThreadLocalZerofill;
  return !zerofill && size != 0 && offset != 0;
}

// ---------------------------------------------------------------- Slice

Slice::Slice(ByteView bytes, std::string where, u32 cputype, u32 cpusubtype,
             u32 align)
    : bytes_(bytes.span(), where, bytes.base()),
      where_(std::move(where)),
      cputype_(cputype),
      cpusubtype_(cpusubtype),
      align_(align) {
  if (bytes_.size() < 4) fail("truncated: no Mach-O magic");
  u32 magic = load_u32(bytes_.data(), true);
  if (magic == kMhMagic64 || magic == kMhMagic) {
    little_ = true;
  } else if (magic == kMhCigam64 || magic == kMhCigam) {
    little_ = false;
  } else {
    fail(fmt::format("not a Mach-O slice (magic 0x{:08x})", magic));
  }
  is64_ = magic == kMhMagic64 || magic == kMhCigam64;
  // A thin file's errors name its arch as soon as the header says it.
  if (cputype_ == 0 && cpusubtype_ == 0 && bytes_.size() >= 12) {
    cputype_ = load_u32(bytes_.data() + 4, little_);
    cpusubtype_ = load_u32(bytes_.data() + 8, little_);
    where_ = fmt::format("{} ({})", where_, arch_name(cputype_, cpusubtype_));
    bytes_ = ByteView(bytes_.span(), where_, bytes_.base());
  }
  u64 hsize = header_size();
  if (bytes_.size() < hsize)
    fail(
        fmt::format("truncated: mach header needs 0x{:x} bytes, slice has "
                    "0x{:x}",
                    hsize, bytes_.size()));
  const u8* h = bytes_.data();
  u32 cpu = load_u32(h + 4, little_);
  if (cpu != cputype_) {
    fail(fmt::format("fat header says cputype 0x{:x}, mach header 0x{:x}",
                     cputype_, cpu));
  }
  filetype_ = load_u32(h + 12, little_);
  ncmds_ = load_u32(h + 16, little_);
  sizeofcmds_ = load_u32(h + 20, little_);
  flags_ = load_u32(h + 24, little_);
}

void Slice::fail(const std::string& message) const {
  throw Error(Errc::format, where_, message);
}

void Slice::require_parsed(std::string_view what) const {
  if (!parsed())
    throw Error(Errc::unsupported, where_,
                fmt::format("{}: only 64-bit little-endian slices are read "
                            "past their header",
                            what));
}

template <typename T>
const T& Slice::command_as(const Command& c) const {
  return bytes_.at<T>(c.offset, command_name(c.cmd));
}

std::string_view Slice::command_string(const Command& c, u32 str_offset,
                                       std::string_view field) const {
  std::string label =
      fmt::format("load command {} ({})", c.index, command_name(c.cmd));
  if (str_offset >= c.cmdsize)
    fail(fmt::format("{}: {} offset 0x{:x} past cmdsize 0x{:x}", label, field,
                     str_offset, c.cmdsize));
  const char* begin =
      reinterpret_cast<const char*>(bytes_.data() + c.offset + str_offset);
  size_t room = c.cmdsize - str_offset;
  const void* nul = std::memchr(begin, 0, room);
  if (nul == nullptr)
    fail(
        fmt::format("{}: {} at offset 0x{:x} is not NUL-terminated within "
                    "cmdsize 0x{:x}",
                    label, field, str_offset, c.cmdsize));
  return {begin, static_cast<size_t>(static_cast<const char*>(nul) - begin)};
}

void Slice::validate(const Command& c) const {
  std::string label =
      fmt::format("load command {} ({})", c.index, command_name(c.cmd));
  auto need = [&](u64 min) {
    if (c.cmdsize < min)
      fail(fmt::format("{}: cmdsize 0x{:x} smaller than the command (0x{:x})",
                       label, c.cmdsize, min));
  };
  auto in_slice = [&](std::string_view what, u64 off, u64 size) {
    if (off > bytes_.size() || size > bytes_.size() - off)
      fail(
          fmt::format("{}: {} 0x{:x}+0x{:x} past the end of the slice "
                      "(0x{:x})",
                      label, what, off, size, bytes_.size()));
  };
  switch (c.cmd) {
    case kLcSegment64: {
      need(sizeof(SegmentCommand64));
      const auto& seg = command_as<SegmentCommand64>(c);
      u64 want = sizeof(SegmentCommand64) + u64{seg.nsects} * sizeof(Section64);
      if (want != c.cmdsize)
        fail(
            fmt::format("{}: {} sections need cmdsize 0x{:x}, cmdsize is "
                        "0x{:x}",
                        label, u32{seg.nsects}, want, c.cmdsize));
      in_slice("segment file range", seg.fileoff, seg.filesize);
      for (u32 i = 0; i < seg.nsects; ++i) {
        const auto& s = bytes_.at<Section64>(
            c.offset + sizeof(SegmentCommand64) + u64{i} * sizeof(Section64),
            "section");
        Section sec{fixed_name(s.segname),
                    fixed_name(s.sectname),
                    s.addr,
                    s.size,
                    s.offset,
                    s.flags};
        if (sec.has_file_content())
          in_slice(fmt::format("section {} file range", sec.sectname),
                   sec.offset, sec.size);
      }
      break;
    }
    case kLcIdDylib:
    case kLcLoadDylib:
    case kLcLoadWeakDylib:
    case kLcReexportDylib:
    case kLcLoadUpwardDylib:
    case kLcLazyLoadDylib:
      need(sizeof(DylibCommand));
      command_string(c, command_as<DylibCommand>(c).name, "name");
      break;
    case kLcRpath:
      need(sizeof(RpathCommand));
      command_string(c, command_as<RpathCommand>(c).path, "path");
      break;
    case kLcUuid:
      need(sizeof(UuidCommand));
      break;
    case kLcVersionMinMacosx:
      need(sizeof(VersionMinCommand));
      break;
    case kLcBuildVersion:
      need(sizeof(BuildVersionCommand));
      break;
    case kLcCodeSignature:
    case kLcDyldChainedFixups:
    case kLcDyldExportsTrie:
    case kLcFunctionStarts:
    case kLcDataInCode: {
      need(sizeof(LinkeditDataCommand));
      const auto& d = command_as<LinkeditDataCommand>(c);
      in_slice("data", d.dataoff, d.datasize);
      break;
    }
    default:
      break;
  }
}

const std::vector<Command>& Slice::commands() const {
  if (commands_) return *commands_;
  require_parsed("load commands");
  u64 end = load_commands_end();
  if (end > bytes_.size())
    fail(
        fmt::format("sizeofcmds 0x{:x} past the end of the slice: header "
                    "0x{:x} + 0x{:x} > size 0x{:x}",
                    sizeofcmds_, header_size(), sizeofcmds_, bytes_.size()));
  // Each command is at least 8 bytes, so ncmds above sizeofcmds / 8 cannot
  // be right; checking first keeps a huge ncmds from allocating.
  if (u64{ncmds_} * 8 > sizeofcmds_)
    fail(fmt::format("ncmds {} cannot fit in sizeofcmds 0x{:x}", ncmds_,
                     sizeofcmds_));
  std::vector<Command> out;
  out.reserve(ncmds_);
  u64 off = header_size();
  for (u32 i = 0; i < ncmds_; ++i) {
    if (end - off < 8)
      fail(fmt::format("load command {} at 0x{:x} past sizeofcmds 0x{:x}", i,
                       off, sizeofcmds_));
    const auto& lc = bytes_.at<LoadCommand>(off, "load command");
    Command c{i, lc.cmd, lc.cmdsize, off};
    std::string label =
        fmt::format("load command {} ({})", i, command_name(c.cmd));
    if (c.cmdsize < 8 || c.cmdsize % 8 != 0)
      fail(fmt::format("{}: cmdsize 0x{:x} is not a positive multiple of 8",
                       label, c.cmdsize));
    if (c.cmdsize > end - off)
      fail(
          fmt::format("{}: cmdsize 0x{:x} extends past sizeofcmds 0x{:x} "
                      "(0x{:x} bytes left)",
                      label, c.cmdsize, sizeofcmds_, end - off));
    validate(c);
    out.push_back(c);
    off += c.cmdsize;
  }
  if (off != end)
    fail(fmt::format("load commands end at 0x{:x}, sizeofcmds says 0x{:x}", off,
                     end));
  commands_ = std::move(out);
  return *commands_;
}

std::vector<Segment> Slice::segments() const {
  std::vector<Segment> out;
  for (const auto& c : commands()) {
    if (c.cmd != kLcSegment64) continue;
    const auto& s = command_as<SegmentCommand64>(c);
    Segment seg{c.index,   fixed_name(s.segname),
                s.vmaddr,  s.vmsize,
                s.fileoff, s.filesize,
                s.maxprot, s.initprot,
                {}};
    for (u32 i = 0; i < s.nsects; ++i) {
      const auto& x = bytes_.at<Section64>(
          c.offset + sizeof(SegmentCommand64) + u64{i} * sizeof(Section64),
          "section");
      seg.sections.push_back({fixed_name(x.segname), fixed_name(x.sectname),
                              x.addr, x.size, x.offset, x.flags});
    }
    out.push_back(std::move(seg));
  }
  return out;
}

std::optional<std::string_view> Slice::id() const {
  for (const auto& c : commands())
    if (c.cmd == kLcIdDylib)
      return command_string(c, command_as<DylibCommand>(c).name, "name");
  return std::nullopt;
}

std::vector<Dylib> Slice::dylibs() const {
  std::vector<Dylib> out;
  for (const auto& c : commands()) {
    DylibKind kind;
    switch (c.cmd) {
      case kLcLoadDylib:
        kind = DylibKind::load;
        break;
      case kLcLoadWeakDylib:
        kind = DylibKind::weak;
        break;
      case kLcReexportDylib:
        kind = DylibKind::reexport;
        break;
      case kLcLoadUpwardDylib:
        kind = DylibKind::upward;
        break;
      case kLcLazyLoadDylib:
        kind = DylibKind::lazy;
        break;
      default:
        continue;
    }
    const auto& d = command_as<DylibCommand>(c);
    out.push_back({c.index, static_cast<u32>(out.size() + 1), kind,
                   command_string(c, d.name, "name"), d.timestamp,
                   d.current_version, d.compatibility_version});
  }
  return out;
}

std::vector<Rpath> Slice::rpaths() const {
  std::vector<Rpath> out;
  for (const auto& c : commands())
    if (c.cmd == kLcRpath)
      out.push_back(
          {c.index,
           command_string(c, command_as<RpathCommand>(c).path, "path")});
  return out;
}

std::optional<PlatformVersion> Slice::platform_version() const {
  for (const auto& c : commands()) {
    if (c.cmd == kLcBuildVersion) {
      const auto& b = command_as<BuildVersionCommand>(c);
      return PlatformVersion{c.cmd, b.platform, b.minos, b.sdk};
    }
    if (c.cmd == kLcVersionMinMacosx) {
      const auto& v = command_as<VersionMinCommand>(c);
      return PlatformVersion{c.cmd, kPlatformMacos, v.version, v.sdk};
    }
  }
  return std::nullopt;
}

std::optional<std::array<u8, 16>> Slice::uuid() const {
  for (const auto& c : commands()) {
    if (c.cmd != kLcUuid) continue;
    std::array<u8, 16> out;
    std::memcpy(out.data(), command_as<UuidCommand>(c).uuid, 16);
    return out;
  }
  return std::nullopt;
}

std::optional<LinkeditData> Slice::code_signature() const {
  for (const auto& c : commands()) {
    if (c.cmd != kLcCodeSignature) continue;
    const auto& d = command_as<LinkeditDataCommand>(c);
    return LinkeditData{c.index, d.dataoff, d.datasize};
  }
  return std::nullopt;
}

FixupFormat Slice::fixup_format() const {
  for (const auto& c : commands()) {
    if (c.cmd == kLcDyldChainedFixups) return FixupFormat::chained_fixups;
    if (c.cmd == kLcDyldInfo || c.cmd == kLcDyldInfoOnly)
      return FixupFormat::dyld_info;
  }
  return FixupFormat::none;
}

u64 Slice::first_content_offset() const {
  u64 first = bytes_.size();
  bool any_section = false;
  for (const auto& seg : segments()) {
    for (const auto& s : seg.sections) {
      if (!s.has_file_content()) continue;
      any_section = true;
      first = std::min<u64>(first, s.offset);
    }
  }
  // Without sections, the first segment with file bytes after the header
  // (a __LINKEDIT-only file) bounds the load commands instead.
  if (!any_section)
    for (const auto& seg : segments())
      if (seg.filesize != 0 && seg.fileoff != 0)
        first = std::min(first, seg.fileoff);
  if (first < load_commands_end())
    fail(
        fmt::format("first section content at 0x{:x} overlaps the load "
                    "commands (end 0x{:x})",
                    first, load_commands_end()));
  return first;
}

u64 Slice::free_padding() const {
  return first_content_offset() - load_commands_end();
}

// ------------------------------------------------------------ MachOFile

bool MachOFile::has_magic(std::span<const u8> head) {
  if (head.size() < 4) return false;
  u32 le = load_u32(head.data(), true), be = load_u32(head.data(), false);
  return le == kMhMagic || le == kMhMagic64 || le == kMhCigam ||
         le == kMhCigam64 || be == kFatMagic || be == kFatMagic64;
}

MachOFile MachOFile::open(const std::filesystem::path& path) {
  auto mapped = std::make_unique<MappedFile>(MappedFile::open(path));
  MachOFile f = parse(mapped->view());
  f.mapped_ = std::move(mapped);
  return f;
}

MachOFile MachOFile::parse(ByteView bytes) {
  MachOFile f;
  f.bytes_ = bytes;
  if (bytes.size() < 4)
    throw Error(Errc::format, bytes.name(),
                fmt::format("truncated: 0x{:x} bytes, not a Mach-O file",
                            bytes.size()));
  u32 be = load_u32(bytes.data(), false);
  if (be == kFatMagic || be == kFatMagic64) {
    f.fat_magic_ = be;
    f.read_fat();
  } else {
    f.read_thin();
  }
  return f;
}

void MachOFile::read_thin() {
  if (!has_magic(bytes_.span()))
    throw Error(Errc::format, bytes_.name(),
                fmt::format("not a Mach-O file (magic 0x{:08x})",
                            load_u32(bytes_.data(), true)));
  slices_.emplace_back(bytes_, bytes_.name(), 0, 0, 0);
}

void MachOFile::read_fat() {
  const std::string& file = bytes_.name();
  bool wide = fat_magic_ == kFatMagic64;
  const auto& hdr = bytes_.at<FatHeader>(0, "fat header");
  u64 entry = wide ? sizeof(FatArch64) : sizeof(FatArch);
  u64 table_end = sizeof(FatHeader) + u64{hdr.nfat_arch} * entry;
  if (hdr.nfat_arch == 0 || table_end > bytes_.size())
    throw Error(Errc::format, file,
                fmt::format("fat header: {} architectures need 0x{:x} bytes, "
                            "file has 0x{:x}",
                            u32{hdr.nfat_arch}, table_end, bytes_.size()));
  struct Entry {
    u32 cputype, cpusubtype, align;
    u64 offset, size;
  };
  std::vector<Entry> entries;
  for (u32 i = 0; i < hdr.nfat_arch; ++i) {
    u64 at = sizeof(FatHeader) + i * entry;
    Entry e;
    if (wide) {
      const auto& a = bytes_.at<FatArch64>(at, "fat_arch_64");
      e = {a.cputype, a.cpusubtype, a.align, a.offset, a.size};
    } else {
      const auto& a = bytes_.at<FatArch>(at, "fat_arch");
      e = {a.cputype, a.cpusubtype, a.align, a.offset, a.size};
    }
    std::string where =
        fmt::format("{} ({})", file, arch_name(e.cputype, e.cpusubtype));
    if (e.offset < table_end)
      throw Error(Errc::format, where,
                  fmt::format("fat_arch {}: offset 0x{:x} inside the fat "
                              "header (ends 0x{:x})",
                              i, e.offset, table_end));
    // Checked here so that no user (lipo's 1 << align) sees a corrupt one.
    if (e.align > kMaxFatAlign)
      throw Error(Errc::format, where,
                  fmt::format("fat_arch {}: align 2^{} above the maximum "
                              "2^{}",
                              i, e.align, kMaxFatAlign));
    if (e.offset > bytes_.size() || e.size > bytes_.size() - e.offset)
      throw Error(Errc::format, where,
                  fmt::format("fat_arch {}: slice 0x{:x}+0x{:x} past the end "
                              "of the file (0x{:x})",
                              i, e.offset, e.size, bytes_.size()));
    entries.push_back(e);
  }
  std::vector<size_t> order(entries.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return entries[a].offset < entries[b].offset;
  });
  for (size_t k = 1; k < order.size(); ++k) {
    const Entry& prev = entries[order[k - 1]];
    const Entry& cur = entries[order[k]];
    if (prev.offset + prev.size > cur.offset)
      throw Error(
          Errc::format,
          fmt::format("{} ({})", file, arch_name(cur.cputype, cur.cpusubtype)),
          fmt::format("fat slice at 0x{:x} overlaps the {} slice "
                      "0x{:x}+0x{:x}",
                      cur.offset, arch_name(prev.cputype, prev.cpusubtype),
                      prev.offset, prev.size));
  }
  for (const Entry& e : entries) {
    std::string where =
        fmt::format("{} ({})", file, arch_name(e.cputype, e.cpusubtype));
    slices_.emplace_back(bytes_.slice(e.offset, e.size, "fat slice"), where,
                         e.cputype, e.cpusubtype, e.align);
  }
}

}  // namespace libpkg::macho
