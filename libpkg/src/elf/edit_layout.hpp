// SPDX-License-Identifier: BSD-3-Clause
// Private to the ELF editor: the byte layout of one edit (see editor.hpp
// for the strategy). Layout<E> is defined in two files by purpose:
// editor.cpp (strings, dynamic table, program-header room, version needs,
// the overall run) and edit_segment.cpp (placing the appended PT_LOAD and
// rewriting program and section headers for it); the latter instantiates
// its members for the four ELF classes explicitly.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "edit_model.hpp"
#include "libpkg/elf/editor.hpp"
#include "reader.hpp"

namespace libpkg::elf::layout {

// Spare DT_NULL slots left in a relocated .dynamic, so a later --add-needed
// or new RUNPATH fits in place instead of rebuilding the segment.
constexpr u64 kSpareDynamicSlots = 4;

// Notes are 4-byte aligned, or 8 for ELF64 GNU property notes (p_align 8):
// the same rule the reader uses. Any other p_align (a corrupt 1 GiB) is not
// trusted for placement.
inline u64 note_align(u64 p_align) { return p_align == 8 ? 8 : 4; }

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
  // patchelf 0.18 header/flag edits (editor.cpp): PF_X of PT_GNU_STACK in
  // phdrs_ (written with the table), then EI_OSABI and .gnu.version entries
  // as the last patches.
  void apply_execstack();
  void write_header_edits();
  // --rename-dynamic-symbols (edit_symbols.cpp): which .dynsym entries get
  // which name (before strings are allocated), then the symbols, version
  // indices, hash tables and relocations written (after tables moved).
  void plan_symbol_renames();
  void write_symbol_renames();
  u64 current_offset(i64 tag, u64 original) const;
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

  std::map<u64, std::string> sym_renames_;  // .dynsym index -> new name
  // Old .dynsym index -> new one when renaming reordered the table (empty
  // otherwise); later writes indexed by symbol go through it.
  std::vector<u64> sym_new_index_;
  // Version indices of removed libraries' records (rewrite_verneeds): the
  // symbols using them become unversioned.
  std::set<u16> dropped_versions_;
};

// Used by both files, so defined here.
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

}  // namespace libpkg::elf::layout
