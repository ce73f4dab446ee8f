// SPDX-License-Identifier: BSD-3-Clause
// A yaml2obj-style builder of small ELF images in memory, for tests and fuzz
// seeds.
//
// We want fixtures for all four class/byte-order combinations, including
// ones no compiler on this machine produces (ELF32 big-endian), and we want
// to corrupt one field at a time. So the image is laid out from a spec by
// code that writes the format.hpp structs, and `Layout` records where every
// table and field ended up so a test can poke at it afterwards.
//
// File layout (all in one read-only PT_LOAD except .dynamic, which gets its
// own PT_LOAD at a different load bias, as in a real shared library):
//   ehdr | phdrs | .interp | build-id note | property note | .hash |
//   .gnu.hash | .dynsym | .dynstr | .gnu.version | .gnu.version_r |
//   .gnu.version_d || .dynamic || .shstrtab | section headers
#pragma once

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "libpkg/base/bytes.hpp"
#include "libpkg/elf/format.hpp"

namespace libpkg::elf::testing {

struct SymbolSpec {
  std::string name;
  u64 value = 0, size = 0;
  u8 bind = STB_GLOBAL, type = STT_FUNC;
  u16 shndx = 0;   // 0: undefined
  u16 versym = 1;  // the .gnu.version entry (index | VERSYM_HIDDEN)
};

struct VernauxSpec {
  std::string name;
  u16 other = 0;  // the version index symbols use
  u16 flags = 0;
};
struct VerneedSpec {
  std::string file;
  std::vector<VernauxSpec> versions;
};
struct VerdefSpec {
  u16 ndx = 1;
  u16 flags = 0;
  std::vector<std::string> names;  // the version, then its parents
};

enum class HashStyle { none, sysv, gnu, both };

struct ElfSpec {
  u16 type = ET_DYN;
  u16 machine = EM_X86_64;
  u8 osabi = ELFOSABI_SYSV;
  u64 entry = 0;
  std::optional<std::string> interp;
  std::vector<std::string> needed;
  std::optional<std::string> soname, rpath, runpath;
  u64 flags = 0, flags_1 = 0;
  std::vector<SymbolSpec> symbols;
  std::vector<VerneedSpec> verneed;
  std::vector<VerdefSpec> verdef;
  HashStyle hash = HashStyle::both;
  std::vector<u8> build_id;           // empty: no build-id note
  std::optional<u32> x86_isa_needed;  // GNU property note
  bool section_headers = true;
  bool dynamic = true;  // PT_DYNAMIC and .dynamic
  bool dt_strsz = true;
  int spare_dynamic = 0;  // extra DT_NULL slots after the terminator
  std::vector<std::pair<i64, u64>> extra_dynamic;
  std::vector<std::string> extra_strings;  // in .dynstr, not referenced
};

struct Layout {
  static constexpr u64 kBase = 0x400000;   // vaddr of file offset 0
  static constexpr u64 kRwBias = 0x10000;  // extra bias of the RW segment

  u64 phoff = 0, phnum = 0;
  std::vector<std::pair<u32, u64>> phdrs;  // p_type, offset of the phdr
  u64 interp = 0, build_id_note = 0, property_note = 0;
  u64 hash = 0, gnu_hash = 0;
  u64 dynsym = 0, dynsym_count = 0;
  u64 dynstr = 0, dynstr_size = 0;
  std::map<std::string, u64> strings;  // .dynstr offsets
  u64 versym = 0, verneed = 0, verdef = 0;
  u64 rw_offset = 0, dynamic = 0, dynamic_count = 0;
  std::map<i64, u64> dyn;  // tag -> file offset of its first entry
  u64 shstrtab = 0, shoff = 0, shnum = 0;
  std::map<std::string, u64> shdr;   // section name -> offset of its header
  std::vector<size_t> symbol_order;  // spec index of dynsym[i + 1]
  u64 size = 0;

  u64 vaddr(u64 offset) const {
    return offset < rw_offset ? kBase + offset : kBase + kRwBias + offset;
  }
  u64 phdr_of(u32 type, int nth = 0) const {
    for (auto [t, off] : phdrs)
      if (t == type && nth-- == 0) return off;
    return 0;
  }
};

inline u32 sysv_hash(std::string_view name) {
  u32 h = 0;
  for (unsigned char c : name) {
    h = (h << 4) + c;
    u32 g = h & 0xf0000000;
    if (g) h ^= g >> 24;
    h &= ~g;
  }
  return h;
}

inline u32 gnu_hash(std::string_view name) {
  u32 h = 5381;
  for (unsigned char c : name) h = h * 33 + c;
  return h;
}

// Raw access to a struct inside an image (for building and for corrupting).
template <typename T>
T& at(std::vector<u8>& image, u64 offset) {
  static_assert(alignof(T) == 1);
  if (offset + sizeof(T) > image.size()) std::abort();
  return *reinterpret_cast<T*>(image.data() + offset);
}

template <typename E>
class ElfBuilder {
 public:
  explicit ElfBuilder(const ElfSpec& spec) : spec_(spec) {}

  std::vector<u8> build(Layout* layout_out = nullptr) {
    plan_strings();
    plan_symbols();
    emit();
    if (layout_out) *layout_out = l_;
    return std::move(out_);
  }

 private:
  static constexpr u64 kWord = E::is_64 ? 8 : 4;

  u64 align(u64 a) {
    out_.resize(align_up(out_.size(), a), 0);
    return out_.size();
  }
  u64 reserve(u64 n) {
    u64 off = out_.size();
    out_.resize(off + n, 0);
    return off;
  }
  template <typename T>
  T& get(u64 off) {
    return at<T>(out_, off);
  }
  void put_bytes(u64 off, const void* p, u64 n) {
    std::memcpy(out_.data() + off, p, n);
  }
  u64 str(const std::string& s) { return l_.strings.at(s); }

  void add_string(const std::string& s) {
    if (l_.strings.count(s)) return;
    l_.strings[s] = dynstr_.size();
    dynstr_.insert(dynstr_.end(), s.begin(), s.end());
    dynstr_.push_back(0);
  }

  void plan_strings() {
    dynstr_.push_back(0);
    l_.strings[""] = 0;
    for (const auto& s : spec_.needed) add_string(s);
    for (const auto* o : {&spec_.soname, &spec_.rpath, &spec_.runpath})
      if (*o) add_string(**o);
    for (const auto& s : spec_.symbols) add_string(s.name);
    for (const auto& n : spec_.verneed) {
      add_string(n.file);
      for (const auto& v : n.versions) add_string(v.name);
    }
    for (const auto& d : spec_.verdef)
      for (const auto& s : d.names) add_string(s);
    for (const auto& s : spec_.extra_strings) add_string(s);
  }

  // Undefined symbols first, then defined ones grouped by GNU hash bucket
  // (the order .gnu.hash requires).
  void plan_symbols() {
    std::vector<size_t> undef, def;
    for (size_t i = 0; i < spec_.symbols.size(); ++i)
      (spec_.symbols[i].shndx == 0 ? undef : def).push_back(i);
    nbuckets_ = std::max<u32>(1, static_cast<u32>(def.size() / 2));
    std::stable_sort(def.begin(), def.end(), [&](size_t a, size_t b) {
      return gnu_hash(spec_.symbols[a].name) % nbuckets_ <
             gnu_hash(spec_.symbols[b].name) % nbuckets_;
    });
    symoffset_ = static_cast<u32>(1 + undef.size());
    l_.symbol_order = undef;
    l_.symbol_order.insert(l_.symbol_order.end(), def.begin(), def.end());
    l_.dynsym_count = 1 + spec_.symbols.size();
  }

  u32 count_phdrs() const {
    u32 n = 4;  // PT_PHDR, two PT_LOADs, PT_GNU_STACK
    n += spec_.interp.has_value();
    n += spec_.dynamic;
    n += !spec_.build_id.empty();
    n += spec_.x86_isa_needed.has_value();
    return n;
  }

  void emit() {
    reserve(sizeof(Ehdr<E>));
    l_.phnum = count_phdrs();
    l_.phoff = align(kWord);
    reserve(l_.phnum * sizeof(Phdr<E>));
    if (spec_.interp) {
      l_.interp = reserve(spec_.interp->size() + 1);
      put_bytes(l_.interp, spec_.interp->data(), spec_.interp->size());
    }
    if (!spec_.build_id.empty()) emit_build_id();
    if (spec_.x86_isa_needed) emit_property_note();
    if (spec_.hash == HashStyle::sysv || spec_.hash == HashStyle::both)
      emit_sysv_hash();
    if (spec_.hash == HashStyle::gnu || spec_.hash == HashStyle::both)
      emit_gnu_hash();
    emit_dynsym();
    l_.dynstr = reserve(dynstr_.size());
    l_.dynstr_size = dynstr_.size();
    put_bytes(l_.dynstr, dynstr_.data(), dynstr_.size());
    if (!spec_.verneed.empty() || !spec_.verdef.empty()) emit_versym();
    if (!spec_.verneed.empty()) emit_verneed();
    if (!spec_.verdef.empty()) emit_verdef();
    l_.rw_offset = align(0x10);
    if (spec_.dynamic) emit_dynamic();
    u64 rw_end = out_.size();
    if (spec_.section_headers) emit_sections();
    l_.size = out_.size();
    emit_ehdr();
    emit_phdrs(rw_end);
  }

  void emit_ehdr() {
    auto& eh = get<Ehdr<E>>(0);
    std::memcpy(eh.e_ident, kElfMagic, 4);
    eh.e_ident[EI_CLASS] = E::is_64 ? ELFCLASS64 : ELFCLASS32;
    eh.e_ident[EI_DATA] = E::is_le ? ELFDATA2LSB : ELFDATA2MSB;
    eh.e_ident[EI_VERSION] = 1;
    eh.e_ident[EI_OSABI] = spec_.osabi;
    eh.e_type = spec_.type;
    eh.e_machine = spec_.machine;
    eh.e_version = 1;
    eh.e_entry = spec_.entry;
    eh.e_phoff = l_.phoff;
    eh.e_shoff = l_.shoff;
    eh.e_ehsize = sizeof(Ehdr<E>);
    eh.e_phentsize = sizeof(Phdr<E>);
    eh.e_phnum = static_cast<u16>(l_.phnum);
    eh.e_shentsize = spec_.section_headers ? sizeof(Shdr<E>) : 0;
    eh.e_shnum = static_cast<u16>(l_.shnum);
    eh.e_shstrndx = spec_.section_headers ? static_cast<u16>(l_.shnum - 1) : 0;
  }

  void phdr(u32 type, u32 flags, u64 offset, u64 filesz, u64 memsz, u64 align) {
    u64 off = l_.phoff + l_.phdrs.size() * sizeof(Phdr<E>);
    l_.phdrs.push_back({type, off});
    auto& ph = get<Phdr<E>>(off);
    ph.p_type = type;
    ph.p_flags = flags;
    ph.p_offset = offset;
    ph.p_vaddr = l_.vaddr(offset);
    ph.p_paddr = l_.vaddr(offset);
    ph.p_filesz = filesz;
    ph.p_memsz = memsz;
    ph.p_align = align;
  }

  void emit_phdrs(u64 rw_end) {
    u64 phsize = l_.phnum * sizeof(Phdr<E>);
    phdr(PT_PHDR, PF_R, l_.phoff, phsize, phsize, kWord);
    if (spec_.interp)
      phdr(PT_INTERP, PF_R, l_.interp, spec_.interp->size() + 1,
           spec_.interp->size() + 1, 1);
    phdr(PT_LOAD, PF_R | PF_X, 0, l_.rw_offset, l_.rw_offset, 0x1000);
    phdr(PT_LOAD, PF_R | PF_W, l_.rw_offset, rw_end - l_.rw_offset,
         rw_end - l_.rw_offset + 0x100, 0x1000);
    if (spec_.dynamic)
      phdr(PT_DYNAMIC, PF_R | PF_W, l_.dynamic,
           l_.dynamic_count * sizeof(Dyn<E>), l_.dynamic_count * sizeof(Dyn<E>),
           kWord);
    if (!spec_.build_id.empty())
      phdr(PT_NOTE, PF_R, l_.build_id_note, build_id_size_, build_id_size_, 4);
    if (spec_.x86_isa_needed)
      phdr(PT_NOTE, PF_R, l_.property_note, property_size_, property_size_,
           kWord);
    phdr(PT_GNU_STACK, PF_R | PF_W, 0, 0, 0, 16);
  }

  u64 note_header(u32 type, u32 descsz) {
    u64 off = reserve(sizeof(Nhdr<E>) + 4);
    auto& nh = get<Nhdr<E>>(off);
    nh.n_namesz = 4;
    nh.n_descsz = descsz;
    nh.n_type = type;
    put_bytes(off + sizeof(Nhdr<E>), "GNU", 4);
    return off;
  }

  void emit_build_id() {
    l_.build_id_note = align(4);
    note_header(NT_GNU_BUILD_ID, static_cast<u32>(spec_.build_id.size()));
    u64 d = reserve(spec_.build_id.size());
    put_bytes(d, spec_.build_id.data(), spec_.build_id.size());
    align(4);
    build_id_size_ = out_.size() - l_.build_id_note;
  }

  // Two properties, so that the reader has to step over the first.
  void emit_property_note() {
    l_.property_note = align(kWord);
    u32 prop = static_cast<u32>(align_up(8 + 4, kWord));
    note_header(NT_GNU_PROPERTY_TYPE_0, 2 * prop);
    align(kWord);
    u32 values[2][2] = {{GNU_PROPERTY_X86_FEATURE_1_AND, 3},
                        {GNU_PROPERTY_X86_ISA_1_NEEDED, *spec_.x86_isa_needed}};
    for (auto& v : values) {
      u64 p = reserve(prop);
      get<U32<E>>(p) = v[0];
      get<U32<E>>(p + 4) = 4;
      get<U32<E>>(p + 8) = v[1];
    }
    property_size_ = out_.size() - l_.property_note;
  }

  void emit_sysv_hash() {
    l_.hash = align(4);
    u32 nbucket = 3, nchain = static_cast<u32>(l_.dynsym_count);
    reserve(4 * (2 + nbucket + nchain));
    get<U32<E>>(l_.hash) = nbucket;
    get<U32<E>>(l_.hash + 4) = nchain;
    u64 buckets = l_.hash + 8, chains = buckets + 4 * nbucket;
    for (u32 i = 1; i < nchain; ++i) {
      u32 b = sysv_hash(sym(i).name) % nbucket;
      // Prepend i to bucket b's chain.
      get<U32<E>>(chains + 4 * i) = get<U32<E>>(buckets + 4 * b).value();
      get<U32<E>>(buckets + 4 * b) = i;
    }
  }

  void emit_gnu_hash() {
    l_.gnu_hash = align(kWord);
    u32 nsyms = static_cast<u32>(l_.dynsym_count);
    u32 bloom_size = 1;
    reserve(16 + kWord * bloom_size + 4 * nbuckets_ + 4 * (nsyms - symoffset_));
    get<U32<E>>(l_.gnu_hash) = nbuckets_;
    get<U32<E>>(l_.gnu_hash + 4) = symoffset_;
    get<U32<E>>(l_.gnu_hash + 8) = bloom_size;
    get<U32<E>>(l_.gnu_hash + 12) = 6;
    u64 bloom = l_.gnu_hash + 16;
    std::memset(out_.data() + bloom, 0xff, kWord * bloom_size);  // "maybe"
    u64 buckets = bloom + kWord * bloom_size;
    u64 chain = buckets + 4 * nbuckets_;
    for (u32 i = symoffset_; i < nsyms; ++i) {
      u32 h = gnu_hash(sym(i).name);
      u32 b = h % nbuckets_;
      if (get<U32<E>>(buckets + 4 * b) == 0) get<U32<E>>(buckets + 4 * b) = i;
      bool last = i + 1 == nsyms || gnu_hash(sym(i + 1).name) % nbuckets_ != b;
      get<U32<E>>(chain + 4 * (i - symoffset_)) = (h & ~1u) | (last ? 1 : 0);
    }
  }

  const SymbolSpec& sym(u64 dynsym_index) const {
    return spec_.symbols[l_.symbol_order[dynsym_index - 1]];
  }

  void emit_dynsym() {
    l_.dynsym = align(kWord);
    reserve(l_.dynsym_count * sizeof(Sym<E>));
    for (u64 i = 1; i < l_.dynsym_count; ++i) {
      const SymbolSpec& s = sym(i);
      auto& st = get<Sym<E>>(l_.dynsym + i * sizeof(Sym<E>));
      st.st_name = static_cast<u32>(str(s.name));
      st.st_value = s.value;
      st.st_size = s.size;
      st.st_info = static_cast<u8>((s.bind << 4) | s.type);
      st.st_other = STV_DEFAULT;
      st.st_shndx = s.shndx;
    }
  }

  void emit_versym() {
    l_.versym = align(2);
    reserve(2 * l_.dynsym_count);
    for (u64 i = 1; i < l_.dynsym_count; ++i)
      get<U16<E>>(l_.versym + 2 * i) = sym(i).versym;
  }

  void emit_verneed() {
    l_.verneed = align(4);
    for (size_t n = 0; n < spec_.verneed.size(); ++n) {
      const auto& need = spec_.verneed[n];
      u64 off = reserve(sizeof(Verneed<E>));
      u64 aux_start = out_.size();
      for (size_t v = 0; v < need.versions.size(); ++v) {
        u64 a = reserve(sizeof(Vernaux<E>));
        auto& va = get<Vernaux<E>>(a);
        va.vna_hash = sysv_hash(need.versions[v].name);
        va.vna_flags = need.versions[v].flags;
        va.vna_other = need.versions[v].other;
        va.vna_name = static_cast<u32>(str(need.versions[v].name));
        va.vna_next = v + 1 < need.versions.size() ? sizeof(Vernaux<E>) : 0;
      }
      auto& vn = get<Verneed<E>>(off);
      vn.vn_version = 1;
      vn.vn_cnt = static_cast<u16>(need.versions.size());
      vn.vn_file = static_cast<u32>(str(need.file));
      vn.vn_aux = static_cast<u32>(aux_start - off);
      vn.vn_next = n + 1 < spec_.verneed.size()
                       ? static_cast<u32>(out_.size() - off)
                       : 0;
    }
  }

  void emit_verdef() {
    l_.verdef = align(4);
    for (size_t n = 0; n < spec_.verdef.size(); ++n) {
      const auto& def = spec_.verdef[n];
      u64 off = reserve(sizeof(Verdef<E>));
      u64 aux_start = out_.size();
      for (size_t v = 0; v < def.names.size(); ++v) {
        u64 a = reserve(sizeof(Verdaux<E>));
        auto& va = get<Verdaux<E>>(a);
        va.vda_name = static_cast<u32>(str(def.names[v]));
        va.vda_next = v + 1 < def.names.size() ? sizeof(Verdaux<E>) : 0;
      }
      auto& vd = get<Verdef<E>>(off);
      vd.vd_version = 1;
      vd.vd_flags = def.flags;
      vd.vd_ndx = def.ndx;
      vd.vd_cnt = static_cast<u16>(def.names.size());
      vd.vd_hash = def.names.empty() ? 0 : sysv_hash(def.names[0]);
      vd.vd_aux = static_cast<u32>(aux_start - off);
      vd.vd_next =
          n + 1 < spec_.verdef.size() ? static_cast<u32>(out_.size() - off) : 0;
    }
  }

  void emit_dynamic() {
    std::vector<std::pair<i64, u64>> d;
    for (const auto& s : spec_.needed) d.push_back({DT_NEEDED, str(s)});
    if (spec_.soname) d.push_back({DT_SONAME, str(*spec_.soname)});
    if (spec_.rpath) d.push_back({DT_RPATH, str(*spec_.rpath)});
    if (spec_.runpath) d.push_back({DT_RUNPATH, str(*spec_.runpath)});
    if (l_.hash) d.push_back({DT_HASH, l_.vaddr(l_.hash)});
    if (l_.gnu_hash) d.push_back({DT_GNU_HASH, l_.vaddr(l_.gnu_hash)});
    d.push_back({DT_STRTAB, l_.vaddr(l_.dynstr)});
    d.push_back({DT_SYMTAB, l_.vaddr(l_.dynsym)});
    if (spec_.dt_strsz) d.push_back({DT_STRSZ, l_.dynstr_size});
    d.push_back({DT_SYMENT, sizeof(Sym<E>)});
    if (l_.versym) d.push_back({DT_VERSYM, l_.vaddr(l_.versym)});
    if (l_.verneed) {
      d.push_back({DT_VERNEED, l_.vaddr(l_.verneed)});
      d.push_back({DT_VERNEEDNUM, spec_.verneed.size()});
    }
    if (l_.verdef) {
      d.push_back({DT_VERDEF, l_.vaddr(l_.verdef)});
      d.push_back({DT_VERDEFNUM, spec_.verdef.size()});
    }
    if (spec_.flags) d.push_back({DT_FLAGS, spec_.flags});
    if (spec_.flags_1) d.push_back({DT_FLAGS_1, spec_.flags_1});
    for (auto e : spec_.extra_dynamic) d.push_back(e);
    for (int i = 0; i < 1 + spec_.spare_dynamic; ++i) d.push_back({DT_NULL, 0});
    l_.dynamic = align(kWord);
    l_.dynamic_count = d.size();
    reserve(d.size() * sizeof(Dyn<E>));
    for (size_t i = 0; i < d.size(); ++i) {
      u64 off = l_.dynamic + i * sizeof(Dyn<E>);
      auto& dyn = get<Dyn<E>>(off);
      dyn.d_tag = static_cast<decltype(dyn.d_tag.value())>(d[i].first);
      dyn.d_val = static_cast<decltype(dyn.d_val.value())>(d[i].second);
      l_.dyn.insert({d[i].first, off});
    }
  }

  struct SectionSpec {
    std::string name;
    u32 type;
    u64 flags, offset, size;
    std::string link;
    u32 info;
    u64 addralign, entsize;
  };

  void emit_sections() {
    std::vector<SectionSpec> secs;
    secs.push_back({"", SHT_NULL, 0, 0, 0, "", 0, 0, 0});
    if (spec_.interp)
      secs.push_back({".interp", SHT_PROGBITS, SHF_ALLOC, l_.interp,
                      spec_.interp->size() + 1, "", 0, 1, 0});
    if (l_.build_id_note)
      secs.push_back({".note.gnu.build-id", SHT_NOTE, SHF_ALLOC,
                      l_.build_id_note, build_id_size_, "", 0, 4, 0});
    if (l_.property_note)
      secs.push_back({".note.gnu.property", SHT_NOTE, SHF_ALLOC,
                      l_.property_note, property_size_, "", 0, kWord, 0});
    if (l_.hash)
      secs.push_back({".hash", SHT_HASH, SHF_ALLOC, l_.hash,
                      4 * (2 + 3 + l_.dynsym_count), ".dynsym", 0, 4, 4});
    if (l_.gnu_hash)
      secs.push_back({".gnu.hash", SHT_GNU_HASH, SHF_ALLOC, l_.gnu_hash,
                      l_.dynsym - l_.gnu_hash, ".dynsym", 0, kWord, 0});
    secs.push_back({".dynsym", SHT_DYNSYM, SHF_ALLOC, l_.dynsym,
                    l_.dynsym_count * sizeof(Sym<E>), ".dynstr", 1, kWord,
                    sizeof(Sym<E>)});
    secs.push_back({".dynstr", SHT_STRTAB, SHF_ALLOC, l_.dynstr, l_.dynstr_size,
                    "", 0, 1, 0});
    if (l_.versym)
      secs.push_back({".gnu.version", SHT_GNU_versym, SHF_ALLOC, l_.versym,
                      2 * l_.dynsym_count, ".dynsym", 0, 2, 2});
    if (l_.verneed)
      secs.push_back({".gnu.version_r", SHT_GNU_verneed, SHF_ALLOC, l_.verneed,
                      (l_.verdef ? l_.verdef : l_.rw_offset) - l_.verneed,
                      ".dynstr", static_cast<u32>(spec_.verneed.size()), 4, 0});
    if (l_.verdef)
      secs.push_back({".gnu.version_d", SHT_GNU_verdef, SHF_ALLOC, l_.verdef,
                      l_.rw_offset - l_.verdef, ".dynstr",
                      static_cast<u32>(spec_.verdef.size()), 4, 0});
    if (spec_.dynamic)
      secs.push_back({".dynamic", SHT_DYNAMIC, SHF_ALLOC | SHF_WRITE,
                      l_.dynamic, l_.dynamic_count * sizeof(Dyn<E>), ".dynstr",
                      0, kWord, sizeof(Dyn<E>)});
    secs.push_back({".shstrtab", SHT_STRTAB, 0, 0, 0, "", 0, 1, 0});

    std::string names(1, '\0');
    std::vector<u32> name_off;
    for (const auto& s : secs) {
      if (s.name.empty()) {
        name_off.push_back(0);
        continue;
      }
      name_off.push_back(static_cast<u32>(names.size()));
      names += s.name;
      names += '\0';
    }
    l_.shstrtab = reserve(names.size());
    put_bytes(l_.shstrtab, names.data(), names.size());
    secs.back().offset = l_.shstrtab;
    secs.back().size = names.size();

    l_.shoff = align(kWord);
    l_.shnum = secs.size();
    reserve(secs.size() * sizeof(Shdr<E>));
    auto index_of = [&](const std::string& name) -> u32 {
      for (size_t i = 0; i < secs.size(); ++i)
        if (secs[i].name == name) return static_cast<u32>(i);
      return 0;
    };
    for (size_t i = 0; i < secs.size(); ++i) {
      const auto& s = secs[i];
      u64 off = l_.shoff + i * sizeof(Shdr<E>);
      l_.shdr[s.name] = off;
      auto& sh = get<Shdr<E>>(off);
      sh.sh_name = name_off[i];
      sh.sh_type = s.type;
      sh.sh_flags = s.flags;
      sh.sh_addr = (s.flags & SHF_ALLOC) ? l_.vaddr(s.offset) : 0;
      sh.sh_offset = s.offset;
      sh.sh_size = s.size;
      sh.sh_link = s.link.empty() ? 0 : index_of(s.link);
      sh.sh_info = s.info;
      sh.sh_addralign = s.addralign;
      sh.sh_entsize = s.entsize;
    }
  }

  const ElfSpec& spec_;
  Layout l_;
  std::vector<u8> out_;
  std::vector<u8> dynstr_;
  u32 nbuckets_ = 1, symoffset_ = 1;
  u64 build_id_size_ = 0, property_size_ = 0;
};

template <typename E>
std::vector<u8> build_elf(const ElfSpec& spec, Layout* layout = nullptr) {
  return ElfBuilder<E>(spec).build(layout);
}

// Runtime dispatch, for code that does not know E statically (fuzz seeds).
inline std::vector<u8> build_elf(bool is_64, bool is_le, const ElfSpec& spec,
                                 Layout* layout = nullptr) {
  if (is_64)
    return is_le ? build_elf<Elf64LE>(spec, layout)
                 : build_elf<Elf64BE>(spec, layout);
  return is_le ? build_elf<Elf32LE>(spec, layout)
               : build_elf<Elf32BE>(spec, layout);
}

// A shared library with a bit of everything.
inline ElfSpec full_spec() {
  ElfSpec s;
  s.interp = "/lib64/ld-linux-x86-64.so.2";
  s.needed = {"libm.so.6", "libc.so.6"};
  s.soname = "libdemo.so.1";
  s.runpath = "$ORIGIN/../lib";
  s.flags = DF_BIND_NOW;
  s.flags_1 = DF_1_NOW | DF_1_NODELETE;
  s.build_id = {0xde, 0xad, 0xbe, 0xef, 0x01, 0x23, 0x45, 0x67, 0x89, 0xab,
                0xcd, 0xef, 0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77};
  s.x86_isa_needed =
      GNU_PROPERTY_X86_ISA_1_BASELINE | GNU_PROPERTY_X86_ISA_1_V2;
  s.verneed = {{"libc.so.6", {{"GLIBC_2.2.5", 3}, {"GLIBC_2.34", 4}}},
               {"libm.so.6", {{"GLIBC_2.29", 5, VER_FLG_WEAK}}}};
  s.verdef = {{1, VER_FLG_BASE, {"libdemo.so.1"}},
              {2, 0, {"DEMO_1.0"}},
              {6, 0, {"DEMO_2.0", "DEMO_1.0"}}};
  s.symbols = {
      {"printf", 0, 0, STB_GLOBAL, STT_FUNC, 0, 3},
      {"exp", 0, 0, STB_GLOBAL, STT_FUNC, 0, 5},
      {"__libc_start_main", 0, 0, STB_GLOBAL, STT_FUNC, 0, 4},
      {"__gmon_start__", 0, 0, STB_WEAK, STT_NOTYPE, 0, 0},
      {"demo_init", 0x1100, 42, STB_GLOBAL, STT_FUNC, 11, 2},
      {"demo_run", 0x1200, 17, STB_GLOBAL, STT_FUNC, 11, 6},
      {"demo_old", 0x1300, 5, STB_GLOBAL, STT_FUNC, 11, 2 | VERSYM_HIDDEN},
      {"demo_table", 0x3000, 64, STB_GLOBAL, STT_OBJECT, 12, 6},
      {"_ZN4demo3runEv", 0x1400, 8, STB_WEAK, STT_FUNC, 11, 1},
  };
  return s;
}

}  // namespace libpkg::elf::testing
