// SPDX-License-Identifier: BSD-3-Clause
#include "reader.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstring>

namespace libpkg::elf {

namespace {
constexpr u16 PN_XNUM = 0xffff;
constexpr std::string_view kVersionTableLost =
    "the section headers are used instead, if any";
}  // namespace

template <typename E>
Reader<E>::Reader(const ByteView& bytes)
    : bytes_(bytes), ehdr_(&bytes.at<Ehdr<E>>(0, "ELF header")) {}

// ---- messages -------------------------------------------------------------

template <typename E>
std::span<const u8> Reader<E>::file_range(u64 offset, u64 size,
                                          std::string_view what,
                                          std::string_view offset_field,
                                          std::string_view size_field) const {
  if (!bytes_.contains(offset, size)) {
    throw_format(name(), offset,
                 fmt::format("{}: {} 0x{:x} + {} 0x{:x} past end of file "
                             "(size 0x{:x})",
                             what, offset_field, offset, size_field, size,
                             bytes_.size()));
  }
  bytes_.ensure(offset, size);
  return bytes_.span().subspan(offset, size);
}

template <typename E>
std::string Reader<E>::record_size_field(u64 size) {
  return fmt::format("record size {} =", size);
}

template <typename E>
std::string Reader<E>::phdr_label(const Phdr<E>& ph) const {
  const u64 index = static_cast<u64>(&ph - phdrs().data());
  std::string_view type = segment_type_name(ph.p_type);
  if (type == "unknown")
    return fmt::format("program header {} (type 0x{:x})", index,
                       ph.p_type.value());
  return fmt::format("program header {} (PT_{})", index, type);
}

template <typename E>
std::string Reader<E>::shdr_label(const Shdr<E>& sh) const {
  const u64 index = static_cast<u64>(&sh - shdrs().data());
  std::string_view section;
  try {
    section = section_name(sh);
  } catch (const Error&) {
    // Only for a message about another problem: the name is a courtesy.
  }
  if (section.empty()) return fmt::format("section header {}", index);
  return fmt::format("section header {} ({})", index, section);
}

// ---- program headers ------------------------------------------------------

template <typename E>
u64 Reader<E>::phnum() const {
  u64 n = ehdr_->e_phnum;
  if (n == PN_XNUM) {
    // Extended numbering: the real count is in section 0's sh_info.
    auto sh = shdrs();
    if (sh.empty()) {
      throw_format(name(), offsetof(Ehdr<E>, e_phnum),
                   "e_phnum is PN_XNUM but there is no section 0 to hold the "
                   "real count");
    }
    n = sh[0].sh_info;
  }
  return n;
}

template <typename E>
FileRange Reader<E>::phdr_table() const {
  u64 n = phnum();
  if (n == 0) return {ehdr_->e_phoff, 0};
  if (ehdr_->e_phentsize != sizeof(Phdr<E>)) {
    throw_format(name(), offsetof(Ehdr<E>, e_phentsize),
                 fmt::format("e_phentsize is {}, expected {}",
                             ehdr_->e_phentsize.value(), sizeof(Phdr<E>)));
  }
  u64 size =
      checked_mul(n, sizeof(Phdr<E>), name(), "program header table size",
                  u64{offsetof(Ehdr<E>, e_phnum)});
  return {ehdr_->e_phoff, size};
}

template <typename E>
std::span<const Phdr<E>> Reader<E>::phdrs() const {
  FileRange r = phdr_table();
  if (r.size == 0) return {};
  auto bytes = file_range(
      r.offset, r.size, "program header table", "e_phoff",
      fmt::format("e_phnum {} * e_phentsize {} =", r.size / sizeof(Phdr<E>),
                  sizeof(Phdr<E>)));
  return {reinterpret_cast<const Phdr<E>*>(bytes.data()),
          r.size / sizeof(Phdr<E>)};
}

// ---- section headers ------------------------------------------------------

template <typename E>
std::span<const Shdr<E>> Reader<E>::shdrs() const {
  u64 off = ehdr_->e_shoff;
  if (off == 0) return {};
  if (ehdr_->e_shentsize != sizeof(Shdr<E>)) {
    throw_format(name(), offsetof(Ehdr<E>, e_shentsize),
                 fmt::format("e_shentsize is {}, expected {}",
                             ehdr_->e_shentsize.value(), sizeof(Shdr<E>)));
  }
  u64 n = ehdr_->e_shnum;
  if (n == 0) {
    // Extended numbering: section 0's sh_size holds the count.
    const auto& s0 = *reinterpret_cast<const Shdr<E>*>(
        file_range(off, sizeof(Shdr<E>),
                   "section header 0 (e_shnum 0: it holds the count)",
                   "e_shoff", record_size_field(sizeof(Shdr<E>)))
            .data());
    n = s0.sh_size;
    if (n == 0) return {};
  }
  u64 size =
      checked_mul(n, sizeof(Shdr<E>), name(), "section header table size", off);
  auto bytes = file_range(
      off, size, "section header table", "e_shoff",
      fmt::format("e_shnum {} * e_shentsize {} =", n, sizeof(Shdr<E>)));
  return {reinterpret_cast<const Shdr<E>*>(bytes.data()), n};
}

template <typename E>
u64 Reader<E>::shnum() const {
  return shdrs().size();
}

template <typename E>
u64 Reader<E>::shstrndx() const {
  u64 idx = ehdr_->e_shstrndx;
  if (idx == SHN_XINDEX) {
    auto sh = shdrs();
    if (sh.empty()) return 0;
    idx = sh[0].sh_link;
  }
  return idx;
}

template <typename E>
std::string_view Reader<E>::section_name(const Shdr<E>& sh) const {
  auto table = shdrs();
  u64 idx = shstrndx();
  if (idx == 0 || idx >= table.size()) return {};
  const Shdr<E>& strtab = table[idx];
  if (strtab.sh_type == SHT_NOBITS) return {};
  ByteView names(
      file_range(strtab.sh_offset, strtab.sh_size,
                 fmt::format("section header {} (the section name string "
                             "table, e_shstrndx)",
                             idx),
                 "sh_offset", "sh_size"),
      name(), strtab.sh_offset);
  if (sh.sh_name >= names.size()) {
    throw_format(
        name(), strtab.sh_offset + sh.sh_name,
        fmt::format("section header {}: name offset 0x{:x} is "
                    "outside the section name table (section {}, "
                    "0x{:x} bytes)",
                    &sh - table.data(), sh.sh_name.value(), idx, names.size()));
  }
  return names.cstring(sh.sh_name, "section name");
}

// The section headers an editor rewrites must describe the file they are in:
// a name table index or name offset out of range would make us miss .dynstr
// or .dynamic by name, and a .dynamic header that disagrees with PT_DYNAMIC
// would be "updated" from a wrong base (the corrupt value copied into the
// output). Each problem names the header, its index and both values.
template <typename E>
void Reader<E>::check_section_headers() const {
  auto table = shdrs();
  if (table.empty()) return;
  u64 idx = shstrndx();
  if (idx >= table.size()) {
    throw_format(name(), offsetof(Ehdr<E>, e_shstrndx),
                 fmt::format("e_shstrndx is {} but the file has {} section "
                             "headers (0..{})",
                             idx, table.size(), table.size() - 1));
  }
  auto header_offset = [&](u64 i) {
    return u64{ehdr_->e_shoff} + i * sizeof(Shdr<E>);
  };
  if (idx != 0 && table[idx].sh_type != SHT_STRTAB) {
    throw_format(name(), header_offset(idx),
                 fmt::format("e_shstrndx {} names section header {} of type "
                             "{}, not a string table (SHT_STRTAB, 3)",
                             idx, idx, table[idx].sh_type.value()));
  }
  std::optional<FileRange> dyn_seg;
  u64 dyn_vaddr = 0, dyn_align = 0;
  for (const Phdr<E>& ph : phdrs()) {
    if (ph.p_type != PT_DYNAMIC) continue;
    dyn_seg = FileRange{ph.p_offset, ph.p_filesz};
    dyn_vaddr = ph.p_vaddr;
    dyn_align = ph.p_align;
    break;
  }
  for (u64 i = 0; i < table.size(); ++i) {
    const Shdr<E>& sh = table[i];
    if (idx != 0 && sh.sh_name >= table[idx].sh_size) {
      throw_format(
          name(), header_offset(i),
          fmt::format("section header {}: name offset 0x{:x} is "
                      "outside the section name table (section {}, "
                      "0x{:x} bytes)",
                      i, sh.sh_name.value(), idx, table[idx].sh_size.value()));
    }
    if (sh.sh_type != SHT_DYNAMIC || !dyn_seg) continue;
    auto disagree = [&](const char* field, u64 have, const char* pfield,
                        u64 want) {
      if (have == want) return;
      throw_format(name(), header_offset(i),
                   fmt::format("section header {} (SHT_DYNAMIC): {} 0x{:x} "
                               "disagrees with PT_DYNAMIC {} 0x{:x}",
                               i, field, have, pfield, want));
    };
    disagree("sh_offset", sh.sh_offset, "p_offset", dyn_seg->offset);
    disagree("sh_addr", sh.sh_addr, "p_vaddr", dyn_vaddr);
    disagree("sh_addralign", sh.sh_addralign, "p_align", dyn_align);
  }
  for (const Shdr<E>& sh : table) (void)section_name(sh);  // names in range
}

template <typename E>
const Shdr<E>* Reader<E>::find_section(std::string_view wanted) const {
  for (const Shdr<E>& sh : shdrs())
    if (section_name(sh) == wanted) return &sh;
  return nullptr;
}

template <typename E>
const Shdr<E>* Reader<E>::find_section_by_type(u32 type) const {
  for (const Shdr<E>& sh : shdrs())
    if (sh.sh_type == type) return &sh;
  return nullptr;
}

// ---- addresses ------------------------------------------------------------

template <typename E>
std::optional<u64> Reader<E>::vaddr_to_offset(u64 vaddr) const {
  for (const Phdr<E>& ph : phdrs()) {
    if (ph.p_type != PT_LOAD) continue;
    u64 start = ph.p_vaddr;
    if (vaddr >= start && vaddr - start < ph.p_filesz)
      return checked_add(
          ph.p_offset, vaddr - start, name(),
          phdr_label(ph) + ": p_offset + address offset",
          static_cast<u64>(reinterpret_cast<const u8*>(&ph) - bytes_.data()));
  }
  // Relocatable objects or odd files without PT_LOAD: try allocated sections.
  for (const Shdr<E>& sh : shdrs()) {
    if (!(sh.sh_flags & SHF_ALLOC) || sh.sh_type == SHT_NOBITS) continue;
    if (vaddr >= sh.sh_addr && vaddr - sh.sh_addr < sh.sh_size)
      return sh.sh_offset + (vaddr - sh.sh_addr);
  }
  return std::nullopt;
}

// ---- dynamic --------------------------------------------------------------

template <typename E>
std::optional<FileRange> Reader<E>::dynamic_range() const {
  for (const Phdr<E>& ph : phdrs())
    if (ph.p_type == PT_DYNAMIC) return FileRange{ph.p_offset, ph.p_filesz};
  if (const Shdr<E>* sh = find_section_by_type(SHT_DYNAMIC))
    return FileRange{sh->sh_offset, sh->sh_size};
  return std::nullopt;
}

template <typename E>
std::span<const Dyn<E>> Reader<E>::dynamic_table() const {
  // Found as dynamic_range() does, keeping the header for the message.
  std::span<const u8> bytes;
  auto phs = phdrs();
  auto ph = std::find_if(phs.begin(), phs.end(), [](const Phdr<E>& p) {
    return p.p_type == PT_DYNAMIC;
  });
  if (ph != phs.end()) {
    if (ph->p_filesz == 0) return {};
    bytes = file_range(ph->p_offset, ph->p_filesz, phdr_label(*ph), "p_offset",
                       "p_filesz");
  } else if (const Shdr<E>* sh = find_section_by_type(SHT_DYNAMIC)) {
    if (sh->sh_size == 0) return {};
    bytes = file_range(sh->sh_offset, sh->sh_size, shdr_label(*sh), "sh_offset",
                       "sh_size");
  } else {
    return {};
  }
  return {reinterpret_cast<const Dyn<E>*>(bytes.data()),
          bytes.size() / sizeof(Dyn<E>)};
}

template <typename E>
u64 Reader<E>::dynamic_used(std::span<const Dyn<E>> table) const {
  for (u64 i = 0; i < table.size(); ++i)
    if (table[i].d_tag == DT_NULL) return i;
  return table.size();
}

template <typename E>
std::optional<u64> Reader<E>::dynamic_value(i64 tag) const {
  auto table = dynamic_table();
  u64 used = dynamic_used(table);
  for (u64 i = 0; i < used; ++i)
    if (table[i].d_tag == tag) return static_cast<u64>(table[i].d_val);
  return std::nullopt;
}

template <typename E>
std::optional<u64> Reader<E>::dynamic_entry_offset(i64 tag) const {
  auto range = dynamic_range();
  auto table = dynamic_table();
  u64 used = dynamic_used(table);
  for (u64 i = 0; i < used; ++i)
    if (table[i].d_tag == tag) return range->offset + i * sizeof(Dyn<E>);
  return std::nullopt;
}

template <typename E>
std::optional<FileRange> Reader<E>::dynstr_range() const {
  auto addr = dynamic_value(DT_STRTAB);
  auto size = dynamic_value(DT_STRSZ);
  if (addr) {
    auto off = vaddr_to_offset(*addr);
    if (!off) {
      throw_format(name(), dynamic_entry_offset(DT_STRTAB).value_or(0),
                   fmt::format("DT_STRTAB address 0x{:x} is not inside any "
                               "loadable segment",
                               *addr));
    }
    u64 sz = size ? *size : 0;
    Origin origin{fmt::format("dynamic string table (DT_STRTAB 0x{:x})", *addr),
                  "file offset", size ? "DT_STRSZ" : "size"};
    if (!size) {
      if (const Shdr<E>* sh = find_section(".dynstr")) {
        sz = sh->sh_size;
        origin.size_field = shdr_label(*sh) + " sh_size";
      }
    }
    return checked_string_table(FileRange{*off, sz}, origin);
  }
  if (const Shdr<E>* sh = find_section(".dynstr"))
    return checked_string_table(FileRange{sh->sh_offset, sh->sh_size},
                                {shdr_label(*sh), "sh_offset", "sh_size"});
  return std::nullopt;
}

// Inside the file and NUL-terminated: without the final NUL the last string
// runs into whatever follows, and an editor appending to the table would
// extend that string (corrupting, say, a version name) instead of adding one.
template <typename E>
FileRange Reader<E>::checked_string_table(FileRange r,
                                          const Origin& origin) const {
  auto bytes = file_range(r.offset, r.size, origin.what, origin.offset_field,
                          origin.size_field);
  if (r.size > 0 && bytes[r.size - 1] != 0) {
    throw_format(name(), r.offset + r.size - 1,
                 fmt::format("{}: the dynamic string table (0x{:x} bytes at "
                             "0x{:x}) does not end with a NUL byte",
                             origin.what, r.size, r.offset));
  }
  return r;
}

template <typename E>
Reader<E>::StringTable::StringTable(const Reader& r,
                                    std::optional<FileRange> range)
    : r_(&r), range_(range) {
  if (range_)
    view_ =
        r.bytes().slice(range_->offset, range_->size, "dynamic string table");
}

template <typename E>
std::string_view Reader<E>::StringTable::operator()(u64 offset) const {
  if (!range_) throw Error(Errc::format, r_->name(), "no dynamic string table");
  if (offset >= range_->size) {
    throw_format(r_->name(), range_->offset,
                 fmt::format("string offset 0x{:x} is outside the dynamic "
                             "string table (0x{:x} bytes)",
                             offset, range_->size));
  }
  return view_.cstring(offset, "dynamic string");
}

template <typename E>
std::string_view Reader<E>::dynstr(u64 offset) const {
  return string_table()(offset);
}

// ---- symbols and versions -------------------------------------------------

// With only DT_GNU_HASH (no section headers, no DT_HASH) the symbol count is
// one past the highest index reachable from a bucket's chain.
template <typename E>
u64 Reader<E>::gnu_hash_symbol_count(u64 off) const {
  const auto& hdr =
      record_at<std::array<U32<E>, 4>>(off, "DT_GNU_HASH table header");
  u32 nbuckets = hdr[0], symoffset = hdr[1], bloom_size = hdr[2];
  u64 word = E::is_64 ? 8 : 4;
  u64 buckets_off = checked_add(
      off + 16,
      checked_mul(bloom_size, word, name(), "DT_GNU_HASH bloom filter size"),
      name(), "DT_GNU_HASH buckets offset");
  file_range(buckets_off, u64{nbuckets} * 4,
             fmt::format("DT_GNU_HASH table at 0x{:x} (bloom_size {})", off,
                         bloom_size),
             "buckets offset", fmt::format("nbuckets {} * 4 =", nbuckets));
  u32 max_index = 0;
  for (u32 b = 0; b < nbuckets; ++b)
    max_index = std::max<u32>(
        max_index,
        bytes_.at<U32<E>>(buckets_off + 4 * u64{b}, "GNU hash bucket"));
  if (max_index < symoffset) return symoffset;
  u64 chain_off = buckets_off + u64{nbuckets} * 4;
  for (u64 i = max_index;; ++i) {
    const u64 pos = chain_off + (i - symoffset) * 4;
    if (!bytes_.contains(pos, 4)) {
      file_range(pos, 4,
                 fmt::format("DT_GNU_HASH table at 0x{:x}: the chain from "
                             "symbol {} has no end marker; entry of symbol {}",
                             off, max_index, i),
                 "offset", "size");
    }
    const auto& h = bytes_.at<U32<E>>(pos, "DT_GNU_HASH chain");
    if (h & 1) return i + 1;
  }
}

// A view filled on demand (a deflated archive member) has its section
// headers at the very end: reading them would inflate the whole file. When
// the file has a PT_DYNAMIC, its tables are found the loader's way there:
// the symbol table through DT_SYMTAB (counted by DT_HASH or DT_GNU_HASH;
// the section header remains the fallback when neither is present), and
// the version tables only through DT_VERSYM/DT_VERNEED/DT_VERDEF (the
// loader ignores a version section the dynamic section does not name).
// Elsewhere the section headers come first, as before.
template <typename E>
bool Reader<E>::loader_view() const {
  if (!bytes_.is_lazy()) return false;
  for (const Phdr<E>& ph : phdrs())
    if (ph.p_type == PT_DYNAMIC) return true;
  return false;
}

template <typename E>
bool Reader<E>::dynsym_from_dynamic() const {
  return loader_view() && dynamic_value(DT_SYMTAB) &&
         (dynamic_value(DT_HASH) || dynamic_value(DT_GNU_HASH));
}

template <typename E>
std::optional<FileRange> Reader<E>::dynsym_range() const {
  if (!dynsym_from_dynamic()) {
    if (const Shdr<E>* sh = find_section_by_type(SHT_DYNSYM))
      return FileRange{sh->sh_offset, sh->sh_size};
  }
  // Without section headers the count comes from a hash table: DT_HASH
  // holds it, DT_GNU_HASH implies it. One that no segment maps is passed
  // over (with a warning) for the other.
  auto off = mapped_table(DT_SYMTAB, "the dynamic symbols are not read");
  if (!off) return std::nullopt;
  const bool has_gnu = dynamic_value(DT_GNU_HASH).has_value();
  std::optional<u64> count;
  if (auto hoff =
          mapped_table(DT_HASH, has_gnu ? "the symbol count comes from "
                                          "DT_GNU_HASH instead"
                                        : "the symbol count is unknown and "
                                          "no dynamic symbols are read"))
    count = hash_word_at(*hoff, 1, "DT_HASH table header");
  if (!count) {
    if (auto goff = mapped_table(DT_GNU_HASH,
                                 "the symbol count is unknown and no dynamic "
                                 "symbols are read"))
      count = gnu_hash_symbol_count(*goff);
  }
  if (!count && !has_gnu && !dynamic_value(DT_HASH))
    warn(
        "DT_SYMTAB without section headers, DT_HASH or DT_GNU_HASH: the "
        "symbol count is unknown and no dynamic symbols are read");
  return FileRange{*off, count.value_or(0) * sizeof(Sym<E>)};
}

template <typename E>
u64 Reader<E>::hash_word_at(u64 table, u64 index, std::string_view what) const {
  const u64 w = hash_word_size();
  if (w == 8) return record_at<U64<E>>(table + index * 8, what);
  return record_at<U32<E>>(table + index * 4, what);
}

template <typename E>
std::optional<u64> Reader<E>::mapped_table(i64 tag,
                                           std::string_view lost) const {
  auto addr = dynamic_value(tag);
  if (!addr) return std::nullopt;
  auto off = vaddr_to_offset(*addr);
  if (!off)
    warn(fmt::format("DT_{} 0x{:x} is not inside any loadable segment: {}",
                     dynamic_tag_name(tag), *addr, lost));
  return off;
}

template <typename E>
std::string Reader<E>::dynsym_label() const {
  if (!dynsym_from_dynamic())
    if (const Shdr<E>* sh = find_section_by_type(SHT_DYNSYM))
      return shdr_label(*sh);
  return fmt::format("dynamic symbol table (DT_SYMTAB 0x{:x})",
                     dynamic_value(DT_SYMTAB).value_or(0));
}

template <typename E>
std::string Reader<E>::versym_label() const {
  if (auto a = dynamic_value(DT_VERSYM))
    return fmt::format("symbol version table (DT_VERSYM 0x{:x})", *a);
  if (loader_view()) return "symbol version table";
  if (const Shdr<E>* sh = find_section_by_type(SHT_GNU_versym))
    return shdr_label(*sh);
  return "symbol version table";
}

template <typename E>
std::optional<u64> Reader<E>::versym_offset() const {
  if (auto off = mapped_table(DT_VERSYM, kVersionTableLost)) return off;
  if (loader_view()) return std::nullopt;
  if (const Shdr<E>* sh = find_section_by_type(SHT_GNU_versym))
    return sh->sh_offset;
  return std::nullopt;
}

template <typename E>
std::optional<u64> Reader<E>::verneed_offset() const {
  if (auto off = mapped_table(DT_VERNEED, kVersionTableLost)) return off;
  if (loader_view()) return std::nullopt;
  if (const Shdr<E>* sh = find_section_by_type(SHT_GNU_verneed))
    return sh->sh_offset;
  return std::nullopt;
}

template <typename E>
std::optional<u64> Reader<E>::verdef_offset() const {
  if (auto off = mapped_table(DT_VERDEF, kVersionTableLost)) return off;
  if (loader_view()) return std::nullopt;
  if (const Shdr<E>* sh = find_section_by_type(SHT_GNU_verdef))
    return sh->sh_offset;
  return std::nullopt;
}

// Version records form chains linked by relative offsets. Links shorter than
// a record would let records overlap, so a small file could describe
// billions of them; those, loops and chains running off the file are errors.
template <typename E>
template <typename Rec, typename Aux, typename Out>
std::vector<Out> Reader<E>::walk_version_chain(u64 start, u64 count,
                                               const char* what) const {
  std::vector<Out> out;
  u64 off = start, total = 0;
  const u64 max_records = bytes_.size() / sizeof(Aux) + 1;
  for (u64 i = 0; i < count && i < 65536; ++i) {
    const Rec& rec = bytes_.contains(off, sizeof(Rec))
                         ? bytes_.at<Rec>(off, what)
                         : record_at<Rec>(off, fmt::format("{} {}", what, i));
    auto [cnt, aux_rel, next] = version_links(rec);
    Out item{off, {}};
    u64 aux =
        checked_add(off, aux_rel, name(), "version auxiliary offset", off);
    for (u32 j = 0; j < cnt; ++j) {
      const Aux& va =
          bytes_.contains(aux, sizeof(Aux))
              ? bytes_.at<Aux>(aux, "version auxiliary record")
              : record_at<Aux>(
                    aux, fmt::format("{} {}, auxiliary record {}", what, i, j));
      item.aux_offsets.push_back(aux);
      if (++total > max_records)
        throw_format(name(), aux,
                     fmt::format("{} {}, auxiliary record {}: version records "
                                 "overlap (more records than the file can "
                                 "hold)",
                                 what, i, j));
      u32 aux_next = version_aux_next(va);
      if (aux_next == 0) break;
      if (aux_next < sizeof(Aux))
        throw_format(
            name(), aux,
            fmt::format("{} {}, auxiliary record {}: link {} is smaller "
                        "than a record ({} bytes)",
                        what, i, j, aux_next, sizeof(Aux)));
      aux = checked_add(aux, aux_next, name(), "version auxiliary link", aux);
    }
    out.push_back(std::move(item));
    if (next == 0) {
      if (count != ~u64{0} && i + 1 < count)
        warn(fmt::format("{}s: the count says {} but the chain ends after {}",
                         what, count, i + 1));
      break;
    }
    if (next < sizeof(Rec))
      throw_format(
          name(), off,
          fmt::format("{} {}: link {} is smaller than a record ({} bytes)",
                      what, i, next, sizeof(Rec)));
    off = checked_add(off, next, name(), "version record link", off);
  }
  return out;
}

// The count comes from DT_VERNEEDNUM/DT_VERDEFNUM, or from the section's
// sh_info when the table was found through its section header.
template <typename E>
u64 Reader<E>::version_count(i64 tag, u32 section_type) const {
  if (auto n = dynamic_value(tag)) return *n;
  if (loader_view()) return ~u64{0};
  if (const Shdr<E>* sh = find_section_by_type(section_type))
    return sh->sh_info;
  return ~u64{0};
}

template <typename E>
std::vector<typename Reader<E>::VerneedRecord> Reader<E>::verneed_records()
    const {
  auto start = verneed_offset();
  if (!start) return {};
  return walk_version_chain<Verneed<E>, Vernaux<E>, VerneedRecord>(
      *start, version_count(DT_VERNEEDNUM, SHT_GNU_verneed),
      "version need record");
}

template <typename E>
std::vector<typename Reader<E>::VerdefRecord> Reader<E>::verdef_records()
    const {
  auto start = verdef_offset();
  if (!start) return {};
  return walk_version_chain<Verdef<E>, Verdaux<E>, VerdefRecord>(
      *start, version_count(DT_VERDEFNUM, SHT_GNU_verdef),
      "version definition record");
}

// ---- interpreter and notes ------------------------------------------------

template <typename E>
std::optional<FileRange> Reader<E>::interp_range() const {
  for (const Phdr<E>& ph : phdrs()) {
    if (ph.p_type != PT_INTERP) continue;
    file_range(ph.p_offset, ph.p_filesz, phdr_label(ph), "p_offset",
               "p_filesz");
    return FileRange{ph.p_offset, ph.p_filesz};
  }
  return std::nullopt;
}

template <typename E>
std::vector<typename Reader<E>::Note> Reader<E>::notes() const {
  std::vector<ByteView> ranges;
  std::vector<u64> aligns;
  std::vector<std::string> labels;
  for (const Phdr<E>& ph : phdrs()) {
    if (ph.p_type == PT_NOTE) {
      labels.push_back(phdr_label(ph));
      ranges.emplace_back(file_range(ph.p_offset, ph.p_filesz, labels.back(),
                                     "p_offset", "p_filesz"),
                          name(), ph.p_offset);
      aligns.push_back(ph.p_align);
    }
  }
  if (ranges.empty()) {
    for (const Shdr<E>& sh : shdrs()) {
      if (sh.sh_type == SHT_NOTE) {
        labels.push_back(shdr_label(sh));
        ranges.emplace_back(file_range(sh.sh_offset, sh.sh_size, labels.back(),
                                       "sh_offset", "sh_size"),
                            name(), sh.sh_offset);
        aligns.push_back(sh.sh_addralign);
      }
    }
  }
  std::vector<Note> out;
  for (size_t r = 0; r < ranges.size(); ++r) {
    const ByteView& seg = ranges[r];
    // Notes are 4-byte aligned, except 8-byte aligned GNU property notes in
    // ELF64 (p_align 8).
    u64 align = aligns[r] == 8 ? 8 : 4;
    u64 pos = 0;
    while (pos + sizeof(Nhdr<E>) <= seg.size()) {
      const auto& nh = seg.at<Nhdr<E>>(pos, "note header");
      u64 name_off = pos + sizeof(Nhdr<E>);
      u64 desc_off = align_up(name_off + nh.n_namesz, align);
      u64 next = align_up(desc_off + nh.n_descsz, align);
      if (!seg.contains(name_off, nh.n_namesz) ||
          !seg.contains(desc_off, nh.n_descsz))
        throw_format(
            name(), seg.base() + pos,
            fmt::format("{}: note at 0x{:x} (n_namesz 0x{:x}, "
                        "n_descsz 0x{:x}) extends past its end "
                        "(0x{:x} bytes)",
                        labels[r], seg.base() + pos, nh.n_namesz.value(),
                        nh.n_descsz.value(), seg.size()));
      std::string_view nm(reinterpret_cast<const char*>(seg.data() + name_off),
                          nh.n_namesz);
      if (!nm.empty() && nm.back() == '\0') nm.remove_suffix(1);
      out.push_back({nm, nh.n_type, seg.span().subspan(desc_off, nh.n_descsz)});
      pos = next;
    }
  }
  return out;
}

template class Reader<Elf32LE>;
template class Reader<Elf32BE>;
template class Reader<Elf64LE>;
template class Reader<Elf64BE>;

}  // namespace libpkg::elf
