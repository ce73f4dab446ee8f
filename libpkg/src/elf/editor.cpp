// SPDX-License-Identifier: BSD-3-Clause
// The byte-layout half of an ELF edit (see editor.hpp for the strategy).
//
// Input: the file (through Reader<E>) and the logical result of the requested
// operations (EditModel). Output: an Overlay. Nothing in the input moves:
// changes are either written over bytes whose meaning we own (a string only
// the edited entry references, the dynamic table, a version-need record) or
// appended in one extra PT_LOAD at the end of the file (edit_segment.cpp).
#include "libpkg/elf/editor.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <set>

#include "edit_layout.hpp"
#include "edit_model.hpp"
#include "reader.hpp"

namespace libpkg::elf {
namespace layout {

template <typename E>
void Layout<E>::load_tables() {
  u32 i = 0;
  for (const auto& ph : r_.phdrs())
    phdrs_.push_back({i++, ph.p_type, ph.p_flags, ph.p_offset, ph.p_vaddr,
                      ph.p_paddr, ph.p_filesz, ph.p_memsz, ph.p_align});
  auto pt = r_.phdr_table();
  phdr_table_ = {pt.offset, pt.size};
  if (auto d = r_.dynstr_range()) {
    dynstr_ = Range{d->offset, d->size};
    dynstr_keep_ = d->size;  // trimmed only when rebuilding our own table
    dynstr_view_ = r_.bytes().slice(d->offset, d->size, ".dynstr");
  }
  if (auto d = r_.dynamic_range()) dynamic_ = Range{d->offset, d->size};
  if (auto d = r_.interp_range()) interp_ = Range{d->offset, d->size};
  own_ = find_own_segment();
}

// A PT_LOAD we appended in an earlier edit: the last segment in the file,
// ending at EOF, with no bss, made up only of tables we relocate (program
// headers, notes, interpreter, .dynstr, .dynamic) plus alignment padding.
// Rebuilding it instead of appending another keeps repeated edits bounded.
template <typename E>
std::optional<size_t> Layout<E>::find_own_segment() const {
  std::optional<size_t> last;
  size_t loads = 0;
  for (size_t i = 0; i < phdrs_.size(); ++i) {
    if (phdrs_[i].type != PT_LOAD) continue;
    ++loads;
    if (!last || phdrs_[i].offset > phdrs_[*last].offset) last = i;
  }
  if (!last || loads < 2) return std::nullopt;
  const ProgramHeader& seg = phdrs_[*last];
  if (seg.offset + seg.filesz != r_.bytes().size() || seg.filesz != seg.memsz ||
      seg.filesz == 0)
    return std::nullopt;
  std::vector<Range> items;
  auto add = [&](std::optional<Range> rg) {
    if (rg && rg->offset >= seg.offset && rg->end() <= seg.offset + seg.filesz)
      items.push_back(*rg);
  };
  add(phdr_table_);
  add(dynstr_);
  add(dynamic_);
  add(interp_);
  for (const auto& ph : phdrs_)
    if (ph.type == PT_NOTE) add(Range{ph.offset, ph.filesz});
  for (const auto& h : hash_tables()) add(h.from);
  if (items.empty()) return std::nullopt;
  std::sort(items.begin(), items.end(),
            [](const Range& a, const Range& b) { return a.offset < b.offset; });
  u64 pos = seg.offset;
  for (const Range& it : items) {
    if (it.offset < pos) return std::nullopt;  // overlapping: not our layout
    if (it.offset - pos > 8) return std::nullopt;  // unknown bytes in between
    pos = it.end();
  }
  if (seg.offset + seg.filesz - pos > 8) return std::nullopt;
  return last;
}

// ---- strings ----------------------------------------------------------------

// Length of the string at `offset` in .dynstr, through the range found once
// in load_tables (the trim path asks this for every symbol name).
template <typename E>
u64 Layout<E>::string_length(u64 offset) const {
  return dynstr_view_.cstring(offset, "dynamic string").size();
}

// Offsets of every string reference that stays as it is after the edit:
// symbol names, version names, unchanged dynamic entries, unchanged vn_file.
template <typename E>
std::vector<u64> Layout<E>::kept_string_starts() const {
  std::vector<u64> starts;
  for (const auto& e : m_.entries)
    if (e.old_offset && !e.text_changed) starts.push_back(*e.old_offset);
  std::set<u64> changed_records;
  for (const auto& c : m_.verneed_changes)
    changed_records.insert(c.record_offset);
  for (const auto& rec : r_.verneed_records()) {
    const auto& vn = r_.bytes().template at<Verneed<E>>(rec.offset, "verneed");
    if (!changed_records.contains(rec.offset)) starts.push_back(vn.vn_file);
    for (u64 aux : rec.aux_offsets)
      starts.push_back(
          r_.bytes().template at<Vernaux<E>>(aux, "vernaux").vna_name);
  }
  for (const auto& rec : r_.verdef_records())
    for (u64 aux : rec.aux_offsets)
      starts.push_back(
          r_.bytes().template at<Verdaux<E>>(aux, "verdaux").vda_name);
  if (auto syms = r_.dynsym_range()) {
    u64 count = syms->size / sizeof(Sym<E>);
    auto bytes =
        r_.bytes().range(syms->offset, count * sizeof(Sym<E>), ".dynsym");
    auto table = reinterpret_cast<const Sym<E>*>(bytes.data());
    for (u64 i = 1; i < count; ++i)
      if (table[i].st_name != 0) starts.push_back(table[i].st_name);
  }
  // The original entries that are kept but whose tag changed are covered by
  // m_.entries; string-valued entries we don't model (none) would go here.
  std::sort(starts.begin(), starts.end());
  starts.erase(std::unique(starts.begin(), starts.end()), starts.end());
  return starts;
}

template <typename E>
std::optional<u64> Layout<E>::find_existing(
    const std::string& s, const std::vector<Range>& avoid) const {
  if (!dynstr_) return std::nullopt;
  auto table = r_.bytes().range(dynstr_->offset, dynstr_->size, ".dynstr");
  const u8* base = table.data();
  u64 n = table.size();
  u64 need = s.size() + 1;  // the string and its NUL
  for (u64 pos = 0; pos + need <= n;) {
    const void* hit = need == 1 ? std::memchr(base + pos, 0, n - pos)
                                : memmem(base + pos, n - pos, s.c_str(), need);
    if (hit == nullptr) return std::nullopt;
    u64 at = static_cast<u64>(static_cast<const u8*>(hit) - base);
    bool clash = std::any_of(avoid.begin(), avoid.end(), [&](const Range& rg) {
      return rg.overlaps(at, need);
    });
    if (!clash) return at;
    pos = at + 1;
  }
  return std::nullopt;
}

// Decides where every new string lives: an identical string (or suffix)
// already in .dynstr; a released string's bytes when nothing else points
// into them and the new one fits; or appended to a relocated table.
template <typename E>
void Layout<E>::allocate_strings() {
  std::vector<std::string> wanted;
  for (const auto& e : m_.entries)
    if (e.text && e.text_changed) wanted.push_back(*e.text);
  for (const auto& c : m_.verneed_changes) wanted.push_back(c.text);
  for (const auto& [index, name] : sym_renames_) wanted.push_back(name);
  if (wanted.empty()) return;
  if (!dynstr_)
    throw Error(Errc::format, r_.name(),
                "the file has no dynamic string table to edit");
  // Longest first: they need the big slots; short ones may then be suffixes.
  std::sort(wanted.begin(), wanted.end(), [](const auto& a, const auto& b) {
    return a.size() != b.size() ? a.size() > b.size() : a < b;
  });
  wanted.erase(std::unique(wanted.begin(), wanted.end()), wanted.end());

  std::vector<u64> kept = kept_string_starts();
  auto table = r_.bytes().range(dynstr_->offset, dynstr_->size, ".dynstr");
  // Released strings whose bytes nobody else uses can be overwritten.
  struct Slot {
    Range range;  // string bytes plus its NUL
    bool used = false;
  };
  std::vector<Slot> slots;
  std::set<u64> released(m_.released_offsets.begin(),
                         m_.released_offsets.end());
  for (u64 off : released) {
    u64 len = string_length(off);
    bool starts_string = off > 0 && table[off - 1] == 0;
    auto it = std::lower_bound(kept.begin(), kept.end(), off);
    bool shared = it != kept.end() && *it <= off + len;
    if (starts_string && !shared) slots.push_back({{off, len + 1}, false});
  }
  std::vector<Range> avoid;
  for (const auto& s : slots) avoid.push_back(s.range);

  for (const std::string& s : wanted) {
    if (auto at = find_existing(s, avoid)) {
      string_offset_[s] = *at;
      continue;
    }
    Slot* best = nullptr;
    for (auto& slot : slots)
      if (!slot.used && slot.range.size >= s.size() + 1 &&
          (!best || slot.range.size < best->range.size))
        best = &slot;
    if (best) {
      best->used = true;
      string_offset_[s] = best->range.offset;
      overwrites_.push_back({best->range, s});
      continue;
    }
    string_offset_[s] = ~u64{0};  // appended; offset fixed below
  }

  bool appends =
      std::any_of(string_offset_.begin(), string_offset_.end(),
                  [](const auto& kv) { return kv.second == ~u64{0}; });
  if (appends && in_own(dynstr_->offset, dynstr_->size)) {
    // Our own earlier table: drop strings at its end that nothing references
    // any more (the previous edit's values), so repeated edits don't grow it.
    u64 keep = 1;
    for (u64 start : kept)
      keep = std::max(keep, start + string_length(start) + 1);
    for (const auto& [s, off] : string_offset_)
      if (off != ~u64{0}) keep = std::max(keep, off + s.size() + 1);
    // A reused slot is rewritten whole (new string, then NULs to its old
    // end), so all of it stays.
    for (const auto& [rg, text] : overwrites_) keep = std::max(keep, rg.end());
    dynstr_keep_ = std::min(keep, dynstr_->size);
  }
  for (auto& [s, off] : string_offset_) {
    if (off != ~u64{0}) continue;
    off = dynstr_keep_ + appended_.size();
    appended_ += s;
    appended_ += '\0';
  }
}

template <typename E>
std::vector<u8> Layout<E>::dynstr_bytes() const {
  auto table = r_.bytes().range(dynstr_->offset, dynstr_->size, ".dynstr");
  std::vector<u8> out(table.begin(),
                      table.begin() + static_cast<long>(dynstr_keep_));
  for (const auto& [rg, s] : overwrites_) {
    if (rg.end() > out.size())
      throw Error(
          Errc::unsupported, r_.name(),
          "internal error: a reused string slot lies outside the kept table");
    std::fill(out.begin() + static_cast<long>(rg.offset),
              out.begin() + static_cast<long>(rg.end()), 0);
    std::memcpy(out.data() + rg.offset, s.data(), s.size());
  }
  out.insert(out.end(), appended_.begin(), appended_.end());
  return out;
}

// ---- dynamic table ----------------------------------------------------------

template <typename E>
std::vector<u8> Layout<E>::dynamic_bytes(u64 capacity) const {
  std::vector<u8> out(capacity * sizeof(Dyn<E>), 0);
  auto* dyn = reinterpret_cast<Dyn<E>*>(out.data());
  u64 i = 0;
  for (const auto& e : m_.entries) {
    dyn[i].d_tag = static_cast<decltype(dyn[i].d_tag.value())>(e.tag);
    u64 value = e.value;
    if (e.text)
      value = e.text_changed ? string_offset_.at(*e.text) : *e.old_offset;
    if (dynstr_pl_.moves && e.tag == DT_STRTAB)
      value = seg_vaddr_ + (dynstr_pl_.offset - seg_off_);
    if (dynstr_pl_.moves && e.tag == DT_STRSZ) value = dynstr_pl_.size;
    if (u64 moved = new_vaddr_of_tag(e.tag)) value = moved;
    dyn[i].d_val = static_cast<decltype(dyn[i].d_val.value())>(value);
    ++i;
  }
  // The rest stays DT_NULL (zero): the terminator and the spare slots.
  return out;
}

// ---- program header room ----------------------------------------------------

// Frees one program-header-sized gap right after the table by moving what
// follows it into the new segment: note and interpreter segments, and the
// symbol hash tables (found only through DT_HASH/DT_GNU_HASH and their
// section headers). Keeping the table at the start of the file keeps it in
// the first PT_LOAD, which old kernels (AT_PHDR) and `strip` (BFD) rely on.
template <typename E>
bool Layout<E>::make_room_after_phdrs() {
  u64 ph_end = phdr_table_.end();
  Range want{ph_end, sizeof(Phdr<E>)};
  bool covered =
      std::any_of(phdrs_.begin(), phdrs_.end(), [&](const ProgramHeader& p) {
        return p.type == PT_LOAD && p.offset <= phdr_table_.offset &&
               want.end() <= p.offset + p.filesz;
      });
  if (!covered) return false;

  std::vector<Moved> movable;
  for (const auto& p : phdrs_)
    if ((p.type == PT_NOTE || p.type == PT_INTERP) && p.filesz > 0)
      movable.push_back({{p.offset, p.filesz},
                         {},
                         p.type == PT_NOTE ? note_align(p.align) : 1u});
  for (const Moved& h : hash_tables()) movable.push_back(h);
  auto in_movable = [&](u64 off, u64 size) {
    return std::any_of(movable.begin(), movable.end(), [&](const Moved& m) {
      return m.from.contains(off, size);
    });
  };
  auto blocks = [&](u64 off, u64 size) {
    size = std::max<u64>(size, 1);
    return want.overlaps(off, size) && !in_movable(off, size);
  };
  for (const auto& p : phdrs_) {
    if (p.type == PT_LOAD || p.type == PT_PHDR || p.filesz == 0) continue;
    if (blocks(p.offset, p.filesz)) return false;
  }
  for (const auto& sh : r_.shdrs()) {
    if (sh.sh_type == SHT_NOBITS || sh.sh_type == SHT_NULL || sh.sh_size == 0)
      continue;
    if (blocks(sh.sh_offset, sh.sh_size)) return false;
  }
  if (r_.ehdr().e_shoff != 0 && blocks(r_.ehdr().e_shoff, 1)) return false;
  // Without section headers, the tables the dynamic section points at are
  // the only map of what follows; none may sit in the gap unless it moves.
  static const i64 kPointerTags[] = {
      DT_HASH,       DT_GNU_HASH,   DT_STRTAB,        DT_SYMTAB,  DT_RELA,
      DT_REL,        DT_JMPREL,     DT_VERSYM,        DT_VERNEED, DT_VERDEF,
      DT_INIT_ARRAY, DT_FINI_ARRAY, DT_PREINIT_ARRAY, DT_RELR,    DT_PLTGOT,
      DT_INIT,       DT_FINI};
  for (i64 tag : kPointerTags) {
    auto v = r_.dynamic_value(tag);
    if (!v) continue;
    auto off = r_.vaddr_to_offset(*v);
    if (off && blocks(*off, 1)) return false;
  }
  if (auto entry = r_.vaddr_to_offset(r_.ehdr().e_entry);
      entry && blocks(*entry, 1))
    return false;
  for (Moved& m : movable) {
    if (!m.from.overlaps(want.offset, want.size)) continue;
    if (interp_ && m.from.offset == interp_->offset &&
        m.from.size == interp_->size) {
      interp_pl_.moves = true;
    } else {
      m.to = {true, 0, m.from.size};
      moved_.push_back(m);
    }
  }
  return true;
}

// The symbol hash tables with their extent (from their section headers;
// without one the size is not recorded anywhere, so they stay put).
template <typename E>
std::vector<typename Layout<E>::Moved> Layout<E>::hash_tables() const {
  std::vector<Moved> out;
  for (i64 tag : {i64{DT_GNU_HASH}, i64{DT_HASH}}) {
    auto addr = r_.dynamic_value(tag);
    if (!addr) continue;
    auto off = r_.vaddr_to_offset(*addr);
    if (!off) continue;
    for (const auto& sh : r_.shdrs()) {
      if (sh.sh_offset == *off && sh.sh_size > 0 &&
          (sh.sh_type == SHT_GNU_HASH || sh.sh_type == SHT_HASH)) {
        out.push_back({{*off, sh.sh_size}, {}, E::is_64 ? 8u : 4u, tag});
        break;
      }
    }
  }
  return out;
}

template <typename E>
u64 Layout<E>::new_vaddr_of_tag(i64 tag) const {
  for (const auto& m : moved_)
    if (m.dt_tag == tag) return seg_vaddr_ + (m.to.offset - seg_off_);
  return 0;
}

// Rewrites .gnu.version_r without the records of removed libraries: the
// kept records (with renamed file names) are packed from the table's start,
// so DT_VERNEED and the section start stay put; DT_VERNEEDNUM was updated in
// the model. Symbols that required a dropped version become unversioned
// (index 1), so they bind to whatever library provides them now.
template <typename E>
void Layout<E>::rewrite_verneeds() {
  std::set<u64> removed(m_.removed_verneeds.begin(), m_.removed_verneeds.end());
  std::map<u64, u64> renamed;  // record offset -> new vn_file
  for (const auto& c : m_.verneed_changes)
    renamed[c.record_offset] = string_offset_.at(c.text);
  auto records = r_.verneed_records();
  if (records.empty()) return;
  u64 start = records.front().offset, old_end = start;
  std::set<u16>& dropped = dropped_versions_;
  std::vector<u8> out;
  size_t kept = 0;
  for (const auto& rec : records) {
    old_end = std::max(old_end, rec.offset + sizeof(Verneed<E>));
    for (u64 aux : rec.aux_offsets)
      old_end = std::max(old_end, aux + sizeof(Vernaux<E>));
    if (removed.contains(rec.offset)) {
      for (u64 aux : rec.aux_offsets)
        dropped.insert(
            r_.bytes().template at<Vernaux<E>>(aux, "vernaux").vna_other &
            VERSYM_VERSION);
      continue;
    }
    ++kept;
  }
  size_t written = 0;
  for (const auto& rec : records) {
    if (removed.contains(rec.offset)) continue;
    Verneed<E> vn = r_.bytes().template at<Verneed<E>>(rec.offset, "verneed");
    if (auto it = renamed.find(rec.offset); it != renamed.end())
      vn.vn_file = static_cast<u32>(it->second);
    u64 size = sizeof(Verneed<E>) + rec.aux_offsets.size() * sizeof(Vernaux<E>);
    vn.vn_cnt = static_cast<u16>(rec.aux_offsets.size());
    vn.vn_aux = sizeof(Verneed<E>);
    vn.vn_next = ++written < kept ? static_cast<u32>(size) : 0u;
    auto b = as_bytes(vn);
    out.insert(out.end(), b.begin(), b.end());
    for (size_t j = 0; j < rec.aux_offsets.size(); ++j) {
      Vernaux<E> va =
          r_.bytes().template at<Vernaux<E>>(rec.aux_offsets[j], "vernaux");
      va.vna_next = j + 1 < rec.aux_offsets.size()
                        ? static_cast<u32>(sizeof(Vernaux<E>))
                        : 0u;
      auto bb = as_bytes(va);
      out.insert(out.end(), bb.begin(), bb.end());
    }
  }
  u64 new_size = out.size();
  out.resize(old_end - start, 0);
  ov_.write(start, out);

  if (auto versym = r_.versym_offset(); versym && !dropped.empty()) {
    u64 count =
        r_.dynsym_range() ? r_.dynsym_range()->size / sizeof(Sym<E>) : 0;
    auto bytes = r_.bytes().range(*versym, count * 2, ".gnu.version");
    auto table = reinterpret_cast<const U16<E>*>(bytes.data());
    for (u64 i = 1; i < count; ++i) {
      u16 v = table[i];
      if (!dropped.contains(v & VERSYM_VERSION)) continue;
      U16<E> global = static_cast<u16>((v & VERSYM_HIDDEN) | VER_NDX_GLOBAL);
      ov_.write(*versym + 2 * i, as_bytes(global));
    }
  }
  auto shdrs = r_.shdrs();
  // With no version records left (and no definitions), DT_VERSYM is gone too
  // (see drop_verneed_entries); the .gnu.version/.gnu.version_r headers then
  // describe nothing and become null sections, so readelf and elflint don't
  // look for the tables.
  bool no_versions_left = kept == 0 && !r_.dynamic_value(DT_VERDEF);
  std::set<u64> nulled;
  for (size_t i = 0; i < shdrs.size(); ++i) {
    if (no_versions_left && (shdrs[i].sh_type == SHT_GNU_verneed ||
                             shdrs[i].sh_type == SHT_GNU_versym)) {
      Shdr<E> null{};
      ov_.write(r_.ehdr().e_shoff + i * sizeof(Shdr<E>), as_bytes(null));
      nulled.insert(i);
      continue;
    }
    if (shdrs[i].sh_type != SHT_GNU_verneed) continue;
    Shdr<E> sh = shdrs[i];
    sh.sh_info = static_cast<u32>(kept);
    sh.sh_size = new_size;
    ov_.write(r_.ehdr().e_shoff + i * sizeof(Shdr<E>), as_bytes(sh));
  }
  // Section symbols of the nulled headers would point at nothing.
  if (!nulled.empty()) {
    for_each_static_symbol(
        [&](const Sym<E>& sym, u64 at, const std::optional<ByteView>&) {
          if (!nulled.contains(sym.st_shndx)) return;
          Sym<E> null{};
          ov_.write(at, as_bytes(null));
        });
  }
}

// The stack segment's PF_X is changed in our copy of the program headers,
// so a table rewritten for growth carries it; otherwise only that p_flags
// field is patched. A file without PT_GNU_STACK is refused: patchelf adds a
// header there, which we do not (it is an error, never a silent no-op).
template <typename E>
void Layout<E>::apply_execstack() {
  if (!o_.execstack) return;
  for (size_t i = 0; i < phdrs_.size(); ++i) {
    ProgramHeader& p = phdrs_[i];
    if (p.type != PT_GNU_STACK) continue;
    u32 flags = *o_.execstack ? (p.flags | PF_X) : (p.flags & ~u32{PF_X});
    if (flags == p.flags) return;
    p.flags = flags;
    U32<E> v = flags;
    ov_.write(
        phdr_table_.offset + i * sizeof(Phdr<E>) + offsetof(Phdr<E>, p_flags),
        as_bytes(v));
    return;
  }
  throw Error(Errc::unsupported, r_.name(),
              "the file has no PT_GNU_STACK program header; adding one for "
              "--set-execstack/--clear-execstack is not supported");
}

// EI_OSABI goes last (the grown layout rewrites the whole ELF header), and
// --clear-symbol-version sets .gnu.version entries of the named dynamic
// symbols to 1 (VER_NDX_GLOBAL) in place; names not found change nothing,
// as with patchelf.
template <typename E>
void Layout<E>::write_header_edits() {
  if (o_.os_abi) {
    u8 abi = *o_.os_abi;
    if (abi != r_.bytes().data()[EI_OSABI])
      ov_.write(EI_OSABI, std::span<const u8>(&abi, 1));
  }
  if (o_.clear_symbol_version.empty()) return;
  auto syms = r_.dynsym_range();
  auto versym = r_.versym_offset();
  if (!syms || !versym)
    throw Error(Errc::not_found, r_.name(),
                "--clear-symbol-version: the file has no dynamic symbol "
                "version table (.gnu.version)");
  std::set<std::string, std::less<>> names(o_.clear_symbol_version.begin(),
                                           o_.clear_symbol_version.end());
  u64 count = syms->size / sizeof(Sym<E>);
  auto bytes =
      r_.bytes().range(syms->offset, count * sizeof(Sym<E>), ".dynsym");
  auto table = reinterpret_cast<const Sym<E>*>(bytes.data());
  r_.bytes().range(*versym, count * 2, ".gnu.version");
  auto strings = r_.string_table();
  for (u64 i = 1; i < count; ++i) {
    if (!names.contains(strings(table[i].st_name))) continue;
    U16<E> global = u16{1};
    u64 at = sym_new_index_.empty() ? i : sym_new_index_[i];
    ov_.write(*versym + 2 * at, as_bytes(global));
  }
}

template <typename E>
EditPlan Layout<E>::run() {
  load_tables();
  apply_execstack();
  plan_symbol_renames();
  allocate_strings();

  bool dynstr_grows = !appended_.empty();
  u64 entries_needed = m_.entries.size() + 1;
  u64 capacity = dynamic_ ? dynamic_->size / sizeof(Dyn<E>) : 0;
  bool dynamic_grows = m_.dynamic_changed && entries_needed > capacity;
  bool interp_grows =
      m_.interpreter && interp_ && m_.interpreter->size() + 1 > interp_->size;
  bool grows = dynstr_grows || dynamic_grows || interp_grows;

  if (grows) {
    dynstr_pl_.moves = dynstr_grows;
    dynamic_pl_.moves = dynamic_grows;
    interp_pl_.moves = interp_grows;
    if (own_) {
      // Rebuild our segment: everything that lives in it moves again.
      if (dynstr_ && in_own(dynstr_->offset, dynstr_->size))
        dynstr_pl_.moves = true;
      if (dynamic_ && in_own(dynamic_->offset, dynamic_->size))
        dynamic_pl_.moves = true;
      if (interp_ && in_own(interp_->offset, interp_->size))
        interp_pl_.moves = true;
      if (in_own(phdr_table_.offset, phdr_table_.size)) ph_.moves = true;
      for (const auto& p : phdrs_)
        if (p.type == PT_NOTE && in_own(p.offset, p.filesz))
          moved_.push_back(
              {{p.offset, p.filesz}, {true, 0, p.filesz}, note_align(p.align)});
      for (Moved h : hash_tables()) {
        if (!in_own(h.from.offset, h.from.size)) continue;
        h.to = {true, 0, h.from.size};
        moved_.push_back(h);
      }
      notes_.push_back("rebuilt the segment appended by an earlier edit");
    } else {
      new_segment_ = true;
      for (size_t i = 0; i < phdrs_.size(); ++i)
        if (phdrs_[i].type == PT_NULL) null_slot_ = i;
      if (null_slot_) {
        notes_.push_back("reused a PT_NULL program header for the new segment");
      } else if (make_room_after_phdrs()) {
        notes_.push_back(
            "moved note/interp segments to grow the program header table in "
            "place");
      } else {
        ph_.moves = true;
        notes_.push_back("moved the program header table into the new segment");
      }
    }
    place_segment();
  }

  // In-place string writes (when .dynstr stays where it is).
  if (!dynstr_pl_.moves) {
    for (const auto& [rg, s] : overwrites_) {
      std::vector<u8> bytes(rg.size, 0);
      std::memcpy(bytes.data(), s.data(), s.size());
      ov_.write(dynstr_->offset + rg.offset, bytes);
    }
  }
  // Version-need records naming a renamed library (all of .gnu.version_r is
  // rewritten instead when records are dropped).
  if (m_.removed_verneeds.empty()) {
    for (const auto& c : m_.verneed_changes) {
      U32<E> v = static_cast<u32>(string_offset_.at(c.text));
      ov_.write(c.record_offset + offsetof(Verneed<E>, vn_file), as_bytes(v));
    }
  } else {
    rewrite_verneeds();
  }
  // The dynamic table.
  bool tables_moved =
      std::any_of(moved_.begin(), moved_.end(),
                  [](const Moved& m) { return m.dt_tag != DT_NULL; });
  if (m_.dynamic_changed || dynstr_pl_.moves || dynamic_pl_.moves ||
      tables_moved) {
    if (dynamic_pl_.moves) {
      ov_.write(dynamic_pl_.offset, dynamic_bytes(new_dynamic_capacity_));
    } else {
      ov_.write(dynamic_->offset, dynamic_bytes(capacity));
    }
  }
  // The interpreter.
  if (m_.interpreter || interp_pl_.moves) {
    if (!m_.interpreter) {
      // Moved unchanged: copy its bytes as they are (bounded by p_filesz).
      ov_.write(interp_pl_.offset,
                r_.bytes().range(interp_->offset, interp_->size, "PT_INTERP"));
    } else if (interp_pl_.moves) {
      std::vector<u8> bytes(interp_pl_.size, 0);
      std::memcpy(bytes.data(), m_.interpreter->data(), m_.interpreter->size());
      ov_.write(interp_pl_.offset, bytes);
    } else {
      const std::string& text = *m_.interpreter;
      std::vector<u8> bytes(interp_->size, 0);
      std::memcpy(bytes.data(), text.data(), text.size());
      ov_.write(interp_->offset, bytes);
    }
  }
  if (grows) {
    if (dynstr_pl_.moves) ov_.write(dynstr_pl_.offset, dynstr_bytes());
    for (const auto& m : moved_)
      ov_.write(m.to.offset,
                r_.bytes().range(m.from.offset, m.from.size, "moved table"));
    write_phdrs();
    write_sections();
    ov_.resize(seg_off_ + seg_size_);
    notes_.push_back(
        fmt::format("appended {} bytes in a PT_LOAD at offset 0x{:x}",
                    seg_size_, seg_off_));
  }
  write_symbol_renames();
  write_header_edits();
  EditPlan plan{std::move(ov_), grows, std::move(m_.notes)};
  plan.notes.insert(plan.notes.end(), notes_.begin(), notes_.end());
  return plan;
}

}  // namespace layout

EditPlan plan_edit(const ElfFile& elf, const EditOptions& options) {
  return visit_reader(
      elf.is_64(), elf.is_little_endian(), elf.bytes(),
      [&]<typename E>(const Reader<E>& r) {
        r.check_section_headers();
        EditModel model = build_edit_model(r, options);
        EditPlan plan = layout::Layout<E>(r, options, std::move(model)).run();
        // Only the bytes that change: a zip writer splicing the edited
        // member then copies the chunk of an unchanged .dynamic. A lazy
        // view (a member read in place) has inflated what the edit read,
        // which covers what it rewrites; ensure() makes that certain.
        const ByteView& input = elf.bytes();
        for (const Patch& p : plan.overlay.patches())
          if (p.offset < input.size())
            input.ensure(p.offset, std::min<u64>(p.bytes.size(),
                                                 input.size() - p.offset));
        plan.overlay = plan.overlay.without_unchanged(input.span());
        return plan;
      });
}

EditReport edit_file(const std::filesystem::path& input,
                     const std::filesystem::path& output,
                     const EditOptions& options, WriteMode mode) {
  ElfFile elf = ElfFile::open(input);
  EditPlan plan = options.empty()
                      ? EditPlan{Overlay(elf.bytes().size()), false, {}}
                      : plan_edit(elf, options);
  WriteResult written =
      write_overlay(*elf.mapped_file(), plan.overlay, output, mode);
  return {written.changed, plan.grows, written.in_place, elf.bytes().size(),
          plan.overlay.size()};
}

}  // namespace libpkg::elf
