// The byte-layout half of an ELF edit (see editor.hpp for the strategy).
//
// Input: the file (through Reader<E>) and the logical result of the requested
// operations (EditModel). Output: an Overlay. Nothing in the input moves:
// changes are either written over bytes whose meaning we own (a string only
// the edited entry references, the dynamic table, a version-need record) or
// appended in one extra PT_LOAD at the end of the file.
#include "libpkg/elf/editor.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <set>

#include "edit_model.hpp"
#include "reader.hpp"

namespace libpkg::elf {

namespace {

// Spare DT_NULL slots left in a relocated .dynamic, so a later --add-needed
// or new RUNPATH fits in place instead of rebuilding the segment.
constexpr u64 kSpareDynamicSlots = 4;

// Notes are 4-byte aligned, or 8 for ELF64 GNU property notes (p_align 8):
// the same rule the reader uses. Any other p_align (a corrupt 1 GiB) is not
// trusted for placement.
u64 note_align(u64 p_align) { return p_align == 8 ? 8 : 4; }

// Beyond this gap, the AT_PHDR-compatible placement for executables is not
// worth a hole that large in the file (a huge .bss); newer kernels (5.18+)
// find the table through the segment that contains it.
constexpr u64 kMaxPlacementGap = 256ull << 20;

template <typename T>
std::span<const u8> as_bytes(const T& v) {
  return {reinterpret_cast<const u8*>(&v), sizeof(T)};
}

struct Range {
  u64 offset = 0, size = 0;
  u64 end() const { return offset + size; }
  bool overlaps(u64 o, u64 s) const { return o < end() && offset < o + s; }
  bool contains(u64 o, u64 s) const { return o >= offset && o + s <= end(); }
};

// Where each relocatable table ends up in the new segment.
struct Placement {
  bool moves = false;
  u64 offset = 0;  // new file offset
  u64 size = 0;
};

template <typename E>
class Layout {
 public:
  Layout(const Reader<E>& r, const EditOptions& o, EditModel m)
      : r_(r), o_(o), m_(std::move(m)), ov_(r.bytes().size()) {}

  EditPlan run();

 private:
  using Off = u64;

  // -- inputs --
  void load_tables();
  std::optional<size_t> find_own_segment() const;
  bool in_own(u64 offset, u64 size) const {
    return own_ && phdrs_[*own_].offset <= offset &&
           offset + size <= phdrs_[*own_].offset + phdrs_[*own_].filesz;
  }

  // -- strings --
  void allocate_strings();
  std::vector<u64> kept_string_starts() const;
  u64 string_length(u64 offset) const;
  std::optional<u64> find_existing(const std::string& s,
                                   const std::vector<Range>& avoid) const;

  // -- program headers --
  bool make_room_after_phdrs();
  u64 max_dynamic_symbol_size() const;

  // -- version needs of removed libraries --
  void rewrite_verneeds();

  // -- output --
  std::vector<u8> dynamic_bytes(u64 capacity) const;
  std::vector<u8> dynstr_bytes() const;
  void place_segment();
  void write_phdrs();
  void write_sections();
  struct MovedSection {
    u64 index, old_addr, old_size, new_addr;
  };
  void update_symtab(const std::vector<MovedSection>& moved);
  // Calls fn(symbol, its file offset, the table's string table) for every
  // entry but the first of each .symtab.
  template <typename F>
  void for_each_static_symbol(F&& fn) const;

  const Reader<E>& r_;
  const EditOptions& o_;
  EditModel m_;
  Overlay ov_;
  std::vector<std::string> notes_;

  std::vector<ProgramHeader> phdrs_;
  std::optional<Range> dynstr_;
  std::optional<Range> dynamic_;  // the whole PT_DYNAMIC table
  std::optional<Range> interp_;
  Range phdr_table_;
  std::optional<size_t> own_;  // index of a PT_LOAD we appended earlier

  // String placement.
  std::map<std::string, u64> string_offset_;  // final offset per string
  std::vector<std::pair<Range, std::string>>
      overwrites_;        // in-place writes into .dynstr
  std::string appended_;  // strings after the kept prefix
  u64 dynstr_keep_ = 0;   // bytes of the old table kept
  ByteView dynstr_view_;  // the table dynstr_ describes

  // What moves into the appended segment.
  Placement ph_, dynstr_pl_, dynamic_pl_, interp_pl_;
  // Tables moved into the new segment to free room after the program
  // headers, or because they live in our segment being rebuilt: note and
  // interpreter segments, and hash tables found through DT_HASH/DT_GNU_HASH.
  struct Moved {
    Range from;
    Placement to;
    u64 align = 4;
    i64 dt_tag = DT_NULL;  // the dynamic entry pointing at it, if any
  };
  std::vector<Moved> moved_;
  u64 new_vaddr_of_tag(i64 tag) const;
  std::vector<Moved> hash_tables() const;
  bool new_segment_ = false;
  std::optional<size_t>
      null_slot_;  // a PT_NULL entry reused for the new PT_LOAD
  u64 seg_off_ = 0, seg_vaddr_ = 0, seg_size_ = 0, seg_align_ = 0;
  u64 new_dynamic_capacity_ = 0;
};

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

// ---- the appended segment ---------------------------------------------------

template <typename E>
u64 Layout<E>::max_dynamic_symbol_size() const {
  auto syms = r_.dynsym_range();
  if (!syms) return 0;
  u64 count = syms->size / sizeof(Sym<E>);
  auto bytes =
      r_.bytes().range(syms->offset, count * sizeof(Sym<E>), ".dynsym");
  auto table = reinterpret_cast<const Sym<E>*>(bytes.data());
  u64 largest = 0;
  for (u64 i = 1; i < count; ++i)
    largest = std::max<u64>(largest, table[i].st_size);
  return largest;
}

template <typename E>
void Layout<E>::place_segment() {
  const u64 file_size = r_.bytes().size();
  u64 max_align = 0, max_vend = 0;
  const ProgramHeader* first_load = nullptr;
  for (const auto& p : phdrs_) {
    if (p.type != PT_LOAD) continue;
    if (own_ && p.index == phdrs_[*own_].index) continue;
    max_align = std::max(max_align, p.align);
    max_vend = std::max(max_vend, checked_add(p.vaddr, p.memsz, r_.name(),
                                              "PT_LOAD p_vaddr + p_memsz"));
    if (!first_load || p.vaddr < first_load->vaddr) first_load = &p;
  }
  seg_align_ = o_.page_size
                   ? o_.page_size
                   : std::max(max_page_size(r_.ehdr().e_machine), max_align);

  if (own_) {
    seg_off_ = phdrs_[*own_].offset;
    seg_vaddr_ = phdrs_[*own_].vaddr;
    seg_align_ = std::max(seg_align_, phdrs_[*own_].align);
  } else {
    seg_off_ = align_up(file_size, 16);
    if (max_vend > ~u64{0} - 2 * seg_align_ ||
        (!E::is_64 && max_vend > 0xffffffffull))
      throw Error(
          Errc::format, r_.name(),
          fmt::format(
              "segments end at 0x{:x}: no address space left for new tables",
              max_vend));
    // eu-elflint attributes a relocation to every PT_LOAD overlapping
    // [r_offset, r_offset + st_size of its symbol] and reports a read-only
    // one as an unflagged text relocation. Our (read-only) segment sits
    // above the writable data, so keep it further away than any symbol is
    // long; the gap costs address space only, never file bytes or memory.
    // (Skipped where it would not fit the address space.)
    u64 gap = max_dynamic_symbol_size();
    const u64 limit = E::is_64 ? ~u64{0} : 0xffffffffull;
    if (gap > limit - 2 * seg_align_ - max_vend) gap = 0;
    seg_vaddr_ = align_up(max_vend + gap, seg_align_) + seg_off_ % seg_align_;
    bool executable = interp_.has_value() || r_.ehdr().e_type == ET_EXEC;
    if (ph_.moves && executable && first_load) {
      // Kernels before 5.18 compute AT_PHDR as first_load_vaddr -
      // first_load_offset + e_phoff; place the segment so that formula gives
      // the table's real address.
      i64 delta = static_cast<i64>(first_load->vaddr - first_load->offset);
      if (delta >= 0 && static_cast<u64>(delta) % seg_align_ == 0) {
        u64 d = static_cast<u64>(delta);
        u64 vstart = align_up(max_vend + gap, seg_align_);
        u64 off =
            align_up(std::max(file_size, vstart > d ? vstart - d : 0), 16);
        if (off - file_size <= kMaxPlacementGap) {
          seg_off_ = off;
          seg_vaddr_ = seg_off_ + d;
        } else {
          notes_.push_back(
              "program headers moved without the pre-5.18-kernel AT_PHDR "
              "placement "
              "(it would need a hole of more than 256 MiB)");
        }
      }
    }
  }

  u64 cur = seg_off_;
  auto place = [&](Placement& pl, u64 size, u64 align) {
    cur = align_up(cur, align);
    pl.offset = cur;
    pl.size = size;
    cur += size;
  };
  u64 phnum = phdrs_.size() + ((new_segment_ && !null_slot_) ? 1 : 0);
  if (ph_.moves) place(ph_, phnum * sizeof(Phdr<E>), 8);
  for (auto& m : moved_) place(m.to, m.from.size, m.align);
  if (interp_pl_.moves) {
    u64 len = m_.interpreter ? m_.interpreter->size() + 1 : interp_->size;
    place(interp_pl_, len, 1);
  }
  if (dynstr_pl_.moves) place(dynstr_pl_, dynstr_keep_ + appended_.size(), 1);
  if (dynamic_pl_.moves) {
    new_dynamic_capacity_ = m_.entries.size() + 1 + kSpareDynamicSlots;
    place(dynamic_pl_, new_dynamic_capacity_ * sizeof(Dyn<E>),
          E::is_64 ? 8 : 4);
  }
  seg_size_ = cur - seg_off_;
  if (!E::is_64 && seg_vaddr_ + seg_size_ > 0xffffffffull)
    throw Error(Errc::unsupported, r_.name(),
                "no room in the 32-bit address space for the grown tables");
}

template <typename E>
void Layout<E>::write_phdrs() {
  std::vector<ProgramHeader> out = phdrs_;
  auto vaddr_of = [&](u64 off) { return seg_vaddr_ + (off - seg_off_); };
  for (auto& p : out) {
    if (p.type == PT_DYNAMIC && dynamic_pl_.moves) {
      p.offset = dynamic_pl_.offset;
      p.vaddr = p.paddr = vaddr_of(p.offset);
      p.filesz = p.memsz = dynamic_pl_.size;
    } else if (p.type == PT_INTERP && interp_pl_.moves) {
      p.offset = interp_pl_.offset;
      p.vaddr = p.paddr = vaddr_of(p.offset);
      p.filesz = p.memsz = interp_pl_.size;
      p.align = 1;
    } else if (p.type == PT_NOTE || p.type == PT_GNU_PROPERTY) {
      for (const auto& m : moved_) {
        if (!m.from.contains(p.offset, p.filesz)) continue;
        p.offset = m.to.offset + (p.offset - m.from.offset);
        p.vaddr = p.paddr = vaddr_of(p.offset);
        break;
      }
    }
  }
  u32 flags = PF_R | (dynamic_pl_.moves ? u32{PF_W} : 0u);
  if (own_) {
    ProgramHeader& seg = out[*own_];
    seg.filesz = seg.memsz = seg_size_;
    seg.flags = flags;
    seg.align = seg_align_;
  } else if (new_segment_) {
    ProgramHeader seg{0,          PT_LOAD,   flags,     seg_off_,  seg_vaddr_,
                      seg_vaddr_, seg_size_, seg_size_, seg_align_};
    if (null_slot_) out.erase(out.begin() + static_cast<long>(*null_slot_));
    // PT_LOAD entries must stay sorted by p_vaddr: ours has the highest.
    size_t pos = 0;
    for (size_t i = 0; i < out.size(); ++i)
      if (out[i].type == PT_LOAD) pos = i + 1;
    out.insert(out.begin() + static_cast<long>(pos), seg);
  }
  u64 table_off = ph_.moves ? ph_.offset : phdr_table_.offset;
  for (auto& p : out) {
    if (p.type != PT_PHDR) continue;
    p.offset = table_off;
    p.filesz = p.memsz = out.size() * sizeof(Phdr<E>);
    if (ph_.moves) {
      p.vaddr = p.paddr = vaddr_of(table_off);
    } else {
      // Still inside the first PT_LOAD at its old address.
      p.vaddr = p.paddr = phdrs_[p.index].vaddr;
    }
  }
  std::vector<u8> bytes(out.size() * sizeof(Phdr<E>));
  auto* ph = reinterpret_cast<Phdr<E>*>(bytes.data());
  for (size_t i = 0; i < out.size(); ++i) {
    ph[i].p_type = out[i].type;
    ph[i].p_flags = out[i].flags;
    ph[i].p_offset = out[i].offset;
    ph[i].p_vaddr = out[i].vaddr;
    ph[i].p_paddr = out[i].paddr;
    ph[i].p_filesz = out[i].filesz;
    ph[i].p_memsz = out[i].memsz;
    ph[i].p_align = out[i].align;
  }
  ov_.write(table_off, bytes);
  Ehdr<E> eh = r_.ehdr();
  eh.e_phoff = table_off;
  if (out.size() >= 0xffff)
    throw Error(Errc::unsupported, r_.name(), "too many program headers");
  eh.e_phnum = static_cast<u16>(out.size());
  ov_.write(0, as_bytes(eh));
}

template <typename E>
void Layout<E>::write_sections() {
  auto shdrs = r_.shdrs();
  std::vector<MovedSection> moved_sections;
  u64 base = r_.ehdr().e_shoff;
  auto vaddr_of = [&](u64 off) { return seg_vaddr_ + (off - seg_off_); };
  for (size_t i = 0; i < shdrs.size(); ++i) {
    Shdr<E> sh = shdrs[i];
    bool changed = false;
    auto relocate = [&](u64 off, u64 size) {
      sh.sh_offset = off;
      if (sh.sh_flags & SHF_ALLOC) sh.sh_addr = vaddr_of(off);
      sh.sh_size = size;
      changed = true;
    };
    if (sh.sh_type == SHT_DYNAMIC && dynamic_pl_.moves && dynamic_ &&
        sh.sh_offset == dynamic_->offset) {
      relocate(dynamic_pl_.offset, dynamic_pl_.size);
    } else if (dynstr_pl_.moves && sh.sh_type == SHT_STRTAB && dynstr_ &&
               sh.sh_offset == dynstr_->offset && (sh.sh_flags & SHF_ALLOC)) {
      relocate(dynstr_pl_.offset, dynstr_pl_.size);
    } else if (interp_pl_.moves && interp_ && sh.sh_offset == interp_->offset &&
               sh.sh_type == SHT_PROGBITS) {
      relocate(interp_pl_.offset, interp_pl_.size);
    } else if (sh.sh_size > 0 && sh.sh_type != SHT_NOBITS) {
      for (const auto& m : moved_) {
        if (!m.from.contains(sh.sh_offset, sh.sh_size)) continue;
        relocate(m.to.offset + (sh.sh_offset - m.from.offset), sh.sh_size);
        break;
      }
    }
    if (changed) {
      ov_.write(base + i * sizeof(Shdr<E>), as_bytes(sh));
      if (shdrs[i].sh_flags & SHF_ALLOC) {
        moved_sections.push_back({i, shdrs[i].sh_addr, shdrs[i].sh_size,
                                  static_cast<u64>(sh.sh_addr)});
      }
    }
  }
  update_symtab(moved_sections);
}

// The static symbol table (.symtab, not used by the loader) has section
// symbols and labels such as _DYNAMIC inside the tables we moved; shift them
// with their section so debuggers and eu-elflint see consistent addresses.
// .dynsym is left alone: code was linked against those addresses.
template <typename E>
void Layout<E>::update_symtab(const std::vector<MovedSection>& moved) {
  if (moved.empty()) return;
  // _DYNAMIC is often absolute (SHN_ABS) rather than section-relative; it
  // must name the dynamic section PT_DYNAMIC now points at.
  std::optional<std::pair<u64, u64>> dynamic_move;
  auto shdrs = r_.shdrs();
  for (const auto& m : moved)
    if (m.index < shdrs.size() && shdrs[m.index].sh_type == SHT_DYNAMIC)
      dynamic_move = {m.old_addr, m.new_addr};
  for_each_static_symbol([&](Sym<E> sym, u64 at,
                             const std::optional<ByteView>& names) {
    u64 value = sym.st_value;
    bool changed = false;
    for (const auto& m : moved) {
      if (sym.st_shndx != m.index) continue;
      if (value >= m.old_addr && value <= m.old_addr + m.old_size) {
        sym.st_value = value - m.old_addr + m.new_addr;
        changed = true;
      }
      break;
    }
    if (!changed && dynamic_move && sym.st_shndx == SHN_ABS &&
        value == dynamic_move->first && names && sym.st_name < names->size() &&
        names->cstring(sym.st_name, "symbol name") == "_DYNAMIC") {
      sym.st_value = dynamic_move->second;
      changed = true;
    }
    if (changed) ov_.write(at, as_bytes(sym));
  });
}

template <typename E>
template <typename F>
void Layout<E>::for_each_static_symbol(F&& fn) const {
  auto shdrs = r_.shdrs();
  for (const auto& sh : shdrs) {
    if (sh.sh_type != SHT_SYMTAB || sh.sh_entsize != sizeof(Sym<E>)) continue;
    u64 count = sh.sh_size / sizeof(Sym<E>);
    auto bytes =
        r_.bytes().range(sh.sh_offset, count * sizeof(Sym<E>), ".symtab");
    auto table = reinterpret_cast<const Sym<E>*>(bytes.data());
    std::optional<ByteView> names;
    if (sh.sh_link < shdrs.size() && shdrs[sh.sh_link].sh_type == SHT_STRTAB)
      names = r_.bytes().slice(shdrs[sh.sh_link].sh_offset,
                               shdrs[sh.sh_link].sh_size, ".strtab");
    for (u64 i = 1; i < count; ++i)
      fn(table[i], sh.sh_offset + i * sizeof(Sym<E>), names);
  }
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
  std::set<u16> dropped;
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

template <typename E>
EditPlan Layout<E>::run() {
  load_tables();
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
  EditPlan plan{std::move(ov_), grows, std::move(m_.notes)};
  plan.notes.insert(plan.notes.end(), notes_.begin(), notes_.end());
  return plan;
}

}  // namespace

EditPlan plan_edit(const ElfFile& elf, const EditOptions& options) {
  return visit_reader(elf.is_64(), elf.is_little_endian(), elf.bytes(),
                      [&]<typename E>(const Reader<E>& r) {
                        EditModel model = build_edit_model(r, options);
                        return Layout<E>(r, options, std::move(model)).run();
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
