// SPDX-License-Identifier: BSD-3-Clause
// The appended segment of an ELF edit: where the new PT_LOAD goes (file
// offset and address), and the program header, section header and .symtab
// updates that describe the tables moved into it. Part of Layout<E> (see
// edit_layout.hpp).
#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "edit_layout.hpp"
#include "libpkg/base/error.hpp"

namespace libpkg::elf::layout {

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

// editor.cpp calls these; they are defined here, so instantiate them for the
// four ELF classes (their helpers are instantiated implicitly with them).
#define LIBPKG_LAYOUT_SEGMENT_MEMBERS(E)                   \
  template u64 Layout<E>::max_dynamic_symbol_size() const; \
  template void Layout<E>::place_segment();                \
  template void Layout<E>::write_phdrs();                  \
  template void Layout<E>::write_sections();
LIBPKG_LAYOUT_SEGMENT_MEMBERS(Elf32LE)
LIBPKG_LAYOUT_SEGMENT_MEMBERS(Elf32BE)
LIBPKG_LAYOUT_SEGMENT_MEMBERS(Elf64LE)
LIBPKG_LAYOUT_SEGMENT_MEMBERS(Elf64BE)
#undef LIBPKG_LAYOUT_SEGMENT_MEMBERS

}  // namespace libpkg::elf::layout
