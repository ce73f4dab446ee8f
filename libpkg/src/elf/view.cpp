// SPDX-License-Identifier: BSD-3-Clause
#include "libpkg/elf/view.hpp"

#include <cxxabi.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <utility>

#include "reader.hpp"

namespace libpkg::elf {

template <typename F>
decltype(auto) ElfFile::visit(F&& f) const {
  return visit_reader(is_64_, is_le_, bytes_, [&]<typename E>(Reader<E> r) {
    r.set_warning(warn_.get());
    return f(std::as_const(r));
  });
}

bool ElfFile::has_elf_magic(std::span<const u8> bytes) {
  return bytes.size() >= 4 && std::memcmp(bytes.data(), kElfMagic, 4) == 0;
}

ElfFile ElfFile::open(const std::filesystem::path& path,
                      ElfReadOptions options) {
  auto file = std::make_shared<MappedFile>(MappedFile::open(path));
  ByteView bytes = file->view();
  return ElfFile(std::move(file), bytes, std::move(options));
}

ElfFile::ElfFile(ByteView bytes, ElfReadOptions options)
    : bytes_(std::move(bytes)) {
  set_warning(std::move(options.warning));
  parse_ident();
}

ElfFile::ElfFile(std::shared_ptr<MappedFile> file, ByteView bytes,
                 ElfReadOptions options)
    : file_(std::move(file)), bytes_(std::move(bytes)) {
  set_warning(std::move(options.warning));
  parse_ident();
}

ElfFile::ElfFile(ByteView bytes, std::shared_ptr<const void> owner,
                 ElfReadOptions options)
    : owner_(std::move(owner)), bytes_(std::move(bytes)) {
  set_warning(std::move(options.warning));
  parse_ident();
}

// Accessors find their tables again on every call, so the same oddity is
// met many times: each message goes to the caller once.
void ElfFile::set_warning(ElfWarningFn fn) {
  if (!fn) return;
  struct Seen {
    std::mutex mutex;
    std::set<std::string, std::less<>> messages;
  };
  warn_ = std::make_shared<const ElfWarningFn>(
      [fn = std::move(fn),
       seen = std::make_shared<Seen>()](std::string_view m) {
        {
          std::lock_guard lock(seen->mutex);
          if (!seen->messages.emplace(m).second) return;
        }
        fn(m);
      });
}

void ElfFile::parse_ident() {
  bytes_.ensure(0, std::min<u64>(bytes_.size(), EI_NIDENT));
  if (!has_elf_magic(bytes_.span())) {
    throw_format(name(), 0,
                 bytes_.size() < 4 ? "file too small to be an ELF file"
                                   : "not an ELF file (bad magic)");
  }
  if (bytes_.size() < EI_NIDENT) {
    throw_format(
        name(), 0,
        fmt::format(
            "truncated ELF file: the identification needs {} bytes, the "
            "file has {}",
            static_cast<int>(EI_NIDENT), bytes_.size()));
  }
  const u8* id = bytes_.data();
  if (id[EI_CLASS] != ELFCLASS32 && id[EI_CLASS] != ELFCLASS64) {
    throw_format(
        name(), EI_CLASS,
        fmt::format("invalid ELF class {} (expected 1 or 2)", id[EI_CLASS]));
  }
  if (id[EI_DATA] != ELFDATA2LSB && id[EI_DATA] != ELFDATA2MSB) {
    throw_format(name(), EI_DATA,
                 fmt::format("invalid ELF data encoding {} (expected 1 or 2)",
                             id[EI_DATA]));
  }
  is_64_ = id[EI_CLASS] == ELFCLASS64;
  is_le_ = id[EI_DATA] == ELFDATA2LSB;
  osabi_ = id[EI_OSABI];
  visit([&]<typename E>(const Reader<E>& r) {
    type_ = r.ehdr().e_type;
    machine_ = r.ehdr().e_machine;
    if (r.ehdr().e_version != 1) {
      throw_format(name(), offsetof(Ehdr<E>, e_version),
                   fmt::format("unsupported e_version {} (expected 1)",
                               r.ehdr().e_version.value()));
    }
    // A header claiming the wrong byte order shows up as absurd sizes; check
    // the table sizes now so the error comes at open, not at first use.
    if (r.ehdr().e_phnum != 0 && r.ehdr().e_phentsize != sizeof(Phdr<E>)) {
      throw_format(name(), offsetof(Ehdr<E>, e_phentsize),
                   fmt::format("e_phentsize is {}, expected {} for this class "
                               "and byte order",
                               r.ehdr().e_phentsize.value(), sizeof(Phdr<E>)));
    }
    r.phdrs();
  });
}

u64 ElfFile::entry() const {
  return visit([](const auto& r) -> u64 { return r.ehdr().e_entry; });
}

std::string ElfFile::machine_name() const {
  return elf::machine_name(machine_);
}

std::vector<ProgramHeader> ElfFile::program_headers() const {
  return visit([](const auto& r) {
    std::vector<ProgramHeader> out;
    u32 i = 0;
    for (const auto& ph : r.phdrs()) {
      out.push_back({i++, ph.p_type, ph.p_flags, ph.p_offset, ph.p_vaddr,
                     ph.p_paddr, ph.p_filesz, ph.p_memsz, ph.p_align});
    }
    return out;
  });
}

std::vector<SectionHeader> ElfFile::sections() const {
  return visit([](const auto& r) {
    std::vector<SectionHeader> out;
    u32 i = 0;
    for (const auto& sh : r.shdrs()) {
      out.push_back({i++, r.section_name(sh), sh.sh_type, sh.sh_flags,
                     sh.sh_addr, sh.sh_offset, sh.sh_size, sh.sh_link,
                     sh.sh_info, sh.sh_addralign, sh.sh_entsize});
    }
    return out;
  });
}

std::optional<SectionHeader> ElfFile::section(std::string_view wanted) const {
  for (auto& s : sections())
    if (s.name == wanted) return s;
  return std::nullopt;
}

std::optional<std::string_view> ElfFile::interpreter() const {
  return visit([](const auto& r) -> std::optional<std::string_view> {
    auto range = r.interp_range();
    if (!range) return std::nullopt;
    auto bytes = r.bytes().range(range->offset, range->size, "PT_INTERP");
    std::string_view s(reinterpret_cast<const char*>(bytes.data()),
                       bytes.size());
    if (auto nul = s.find('\0'); nul != std::string_view::npos)
      s = s.substr(0, nul);
    return s;
  });
}

bool ElfFile::has_dynamic() const {
  return visit([](const auto& r) { return r.dynamic_range().has_value(); });
}

std::vector<DynamicEntry> ElfFile::dynamic() const {
  return visit([](const auto& r) {
    std::vector<DynamicEntry> out;
    auto table = r.dynamic_table();
    u64 used = r.dynamic_used(table);
    for (u64 i = 0; i < used; ++i)
      out.push_back({static_cast<u32>(i), table[i].d_tag,
                     static_cast<u64>(table[i].d_val)});
    return out;
  });
}

namespace {
template <typename R>
std::vector<std::string_view> strings_for(const R& r, i64 tag) {
  std::vector<std::string_view> out;
  auto table = r.dynamic_table();
  u64 used = r.dynamic_used(table);
  std::optional<typename R::StringTable> strings;
  for (u64 i = 0; i < used; ++i) {
    if (table[i].d_tag != tag) continue;
    if (!strings) strings.emplace(r.string_table());
    out.push_back((*strings)(table[i].d_val));
  }
  return out;
}
}  // namespace

std::vector<std::string_view> ElfFile::needed() const {
  return visit([](const auto& r) { return strings_for(r, DT_NEEDED); });
}

std::optional<std::string_view> ElfFile::soname() const {
  return visit([](const auto& r) -> std::optional<std::string_view> {
    auto v = strings_for(r, DT_SONAME);
    if (v.empty()) return std::nullopt;
    return v.front();
  });
}

std::optional<std::string_view> ElfFile::rpath() const {
  return visit([](const auto& r) -> std::optional<std::string_view> {
    auto v = strings_for(r, DT_RPATH);
    if (v.empty()) return std::nullopt;
    return v.front();
  });
}

std::optional<std::string_view> ElfFile::runpath() const {
  return visit([](const auto& r) -> std::optional<std::string_view> {
    auto v = strings_for(r, DT_RUNPATH);
    if (v.empty()) return std::nullopt;
    return v.front();
  });
}

u64 ElfFile::dt_flags() const {
  return visit(
      [](const auto& r) { return r.dynamic_value(DT_FLAGS).value_or(0); });
}

u64 ElfFile::dt_flags_1() const {
  return visit(
      [](const auto& r) { return r.dynamic_value(DT_FLAGS_1).value_or(0); });
}

u64 ElfFile::dynamic_symbol_count() const {
  return visit([]<typename E>(const Reader<E>& r) -> u64 {
    auto range = r.dynsym_range();
    return range ? range->size / sizeof(Sym<E>) : 0;
  });
}

namespace {

// Maps .gnu.version indices to (version name, file) from verneed/verdef.
struct VersionNames {
  std::vector<std::string_view> name;
  std::vector<std::string_view> file;
  void set(u16 index, std::string_view n, std::string_view f) {
    if (index >= name.size()) {
      name.resize(index + 1);
      file.resize(index + 1);
    }
    name[index] = n;
    file[index] = f;
  }
};

template <typename E>
VersionNames version_names(const Reader<E>& r) {
  VersionNames v;
  for (const auto& rec : r.verneed_records()) {
    const auto& vn = r.bytes().template at<Verneed<E>>(rec.offset, "verneed");
    std::string_view file = r.dynstr(vn.vn_file);
    for (u64 aux : rec.aux_offsets) {
      const auto& va = r.bytes().template at<Vernaux<E>>(aux, "vernaux");
      v.set(va.vna_other & VERSYM_VERSION, r.dynstr(va.vna_name), file);
    }
  }
  for (const auto& rec : r.verdef_records()) {
    const auto& vd = r.bytes().template at<Verdef<E>>(rec.offset, "verdef");
    if (rec.aux_offsets.empty() || (vd.vd_flags & VER_FLG_BASE)) continue;
    const auto& va =
        r.bytes().template at<Verdaux<E>>(rec.aux_offsets[0], "verdaux");
    v.set(vd.vd_ndx & VERSYM_VERSION, r.dynstr(va.vda_name), {});
  }
  return v;
}

}  // namespace

void ElfFile::for_each_dynamic_symbol(
    const std::function<void(const Symbol&)>& fn) const {
  visit([&]<typename E>(const Reader<E>& r) {
    auto range = r.dynsym_range();
    if (!range || range->size == 0) return;
    u64 count = range->size / sizeof(Sym<E>);
    auto syms = r.file_range(
        range->offset, count * sizeof(Sym<E>), r.dynsym_label(), "offset",
        fmt::format("{} symbols * {} bytes =", count, sizeof(Sym<E>)));
    auto table = reinterpret_cast<const Sym<E>*>(syms.data());
    auto versym_off = r.versym_offset();
    VersionNames names;
    const U16<E>* versyms = nullptr;
    if (versym_off) {
      versyms = reinterpret_cast<const U16<E>*>(
          r.file_range(*versym_off, count * 2, r.versym_label(), "offset",
                       fmt::format("{} symbols * 2 bytes =", count))
              .data());
      names = version_names(r);
    }
    auto strtab = r.dynstr_range();
    ByteView strings =
        strtab
            ? ByteView(r.file_range(strtab->offset, strtab->size,
                                    "dynamic string table", "offset", "size"),
                       r.name(), strtab->offset)
            : ByteView({}, r.name());
    // Symbols whose .gnu.version index no version need or definition
    // defines: read without a version, reported once.
    u64 unknown = 0;
    std::pair<u64, u16> first_unknown;
    for (u64 i = 1; i < count; ++i) {
      const Sym<E>& s = table[i];
      Symbol out;
      out.index = static_cast<u32>(i);
      if (s.st_name != 0) {
        if (!strtab)
          throw_format(r.name(), range->offset + i * sizeof(Sym<E>),
                       "dynamic symbols have names but the file has no dynamic "
                       "string table");
        out.name = strings.cstring(s.st_name, "symbol name");
      }
      out.value = s.st_value;
      out.size = s.st_size;
      out.bind = s.st_info >> 4;
      out.type = s.st_info & 0xf;
      out.visibility = s.st_other & 0x3;
      out.shndx = s.st_shndx;
      if (versyms) {
        u16 v = versyms[i];
        u16 idx = v & VERSYM_VERSION;
        out.version_hidden = (v & VERSYM_HIDDEN) != 0;
        if (idx > VER_NDX_GLOBAL && idx < names.name.size()) {
          out.version = names.name[idx];
          out.version_file = names.file[idx];
        }
        if (idx > VER_NDX_GLOBAL && out.version.empty() && unknown++ == 0)
          first_unknown = {i, idx};
      }
      fn(out);
    }
    if (unknown > 0)
      r.warn(
          fmt::format("{} dynamic symbol(s) have a version index that no "
                      "version need or definition defines (the first: "
                      "symbol {}, index {}); read without a version",
                      unknown, first_unknown.first, first_unknown.second));
  });
}

std::vector<Symbol> ElfFile::dynamic_symbols() const {
  std::vector<Symbol> out;
  for_each_dynamic_symbol([&](const Symbol& s) { out.push_back(s); });
  return out;
}

std::vector<VersionNeed> ElfFile::version_needs() const {
  return visit([]<typename E>(const Reader<E>& r) {
    std::vector<VersionNeed> out;
    for (const auto& rec : r.verneed_records()) {
      const auto& vn = r.bytes().template at<Verneed<E>>(rec.offset, "verneed");
      VersionNeed need{r.dynstr(vn.vn_file), {}};
      for (u64 aux : rec.aux_offsets) {
        const auto& va = r.bytes().template at<Vernaux<E>>(aux, "vernaux");
        need.versions.push_back(
            {r.dynstr(va.vna_name), va.vna_hash, va.vna_flags, va.vna_other});
      }
      out.push_back(std::move(need));
    }
    return out;
  });
}

std::vector<VersionDef> ElfFile::version_defs() const {
  return visit([]<typename E>(const Reader<E>& r) {
    std::vector<VersionDef> out;
    for (const auto& rec : r.verdef_records()) {
      const auto& vd = r.bytes().template at<Verdef<E>>(rec.offset, "verdef");
      VersionDef def{vd.vd_ndx, vd.vd_flags, {}};
      for (u64 aux : rec.aux_offsets) {
        const auto& va = r.bytes().template at<Verdaux<E>>(aux, "verdaux");
        def.names.push_back(r.dynstr(va.vda_name));
      }
      out.push_back(std::move(def));
    }
    return out;
  });
}

bool ElfFile::has_note(std::string_view name, u32 type) const {
  return visit([&](const auto& r) {
    for (const auto& n : r.notes())
      if (n.name == name && n.type == type) return true;
    return false;
  });
}

std::optional<std::string> ElfFile::build_id() const {
  return visit([](const auto& r) -> std::optional<std::string> {
    for (const auto& n : r.notes()) {
      if (n.name == "GNU" && n.type == NT_GNU_BUILD_ID) {
        std::string hex;
        for (u8 b : n.desc) hex += fmt::format("{:02x}", b);
        return hex;
      }
    }
    return std::nullopt;
  });
}

std::optional<u32> ElfFile::x86_isa_needed() const {
  return visit([]<typename E>(const Reader<E>& r) -> std::optional<u32> {
    for (const auto& n : r.notes()) {
      if (n.name != "GNU" || n.type != NT_GNU_PROPERTY_TYPE_0) continue;
      ByteView desc(n.desc, r.name(),
                    static_cast<u64>(n.desc.data() - r.bytes().data()) +
                        r.bytes().base());
      u64 align = E::is_64 ? 8 : 4;
      for (u64 pos = 0; pos + 8 <= desc.size();) {
        u32 type = desc.template at<U32<E>>(pos, "property type");
        u32 size = desc.template at<U32<E>>(pos + 4, "property size");
        if (type == GNU_PROPERTY_X86_ISA_1_NEEDED && size >= 4)
          return desc.template at<U32<E>>(pos + 8, "property value").value();
        pos = align_up(pos + 8 + size, align);
      }
    }
    return std::nullopt;
  });
}

std::optional<u64> ElfFile::vaddr_to_offset(u64 vaddr) const {
  return visit([&](const auto& r) { return r.vaddr_to_offset(vaddr); });
}

std::string x86_isa_level_name(u32 mask) {
  if (mask & GNU_PROPERTY_X86_ISA_1_V4) return "x86-64-v4";
  if (mask & GNU_PROPERTY_X86_ISA_1_V3) return "x86-64-v3";
  if (mask & GNU_PROPERTY_X86_ISA_1_V2) return "x86-64-v2";
  if (mask & GNU_PROPERTY_X86_ISA_1_BASELINE) return "x86-64-baseline";
  return "";
}

std::string demangle(std::string_view name) {
  if (!name.starts_with("_Z")) return std::string(name);
  std::string input(name);
  int status = 0;
  char* out = abi::__cxa_demangle(input.c_str(), nullptr, nullptr, &status);
  if (status != 0 || out == nullptr) {
    std::free(out);
    return input;
  }
  std::string result(out);
  std::free(out);
  return result;
}

}  // namespace libpkg::elf
