// SPDX-License-Identifier: BSD-3-Clause
// --rename-dynamic-symbols (patchelf 0.18): new names for .dynsym entries.
//
// A symbol's name is found through the hash tables, so renaming a defined
// symbol means rebuilding them:
//  - .gnu.hash keeps its size and parameters (bucket count, symbol offset,
//    bloom size and shift), so it is rewritten where it is. Its lookup walks
//    a bucket's symbols as one contiguous run, so the hashed part of .dynsym
//    is stably re-sorted by bucket; the version indices (.gnu.version) are
//    permuted with it and every relocation's symbol index is rewritten.
//  - .hash (SysV) has one chain slot per symbol and is rebuilt in place.
// New names are appended to .dynstr like any other new string (editor.cpp);
// old names stay, nothing else in the file moves.
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <numeric>

#include "edit_layout.hpp"
#include "libpkg/base/error.hpp"

namespace libpkg::elf::layout {
namespace {

u32 gnu_hash(std::string_view s) {
  u32 h = 5381;
  for (unsigned char c : s) h = h * 33 + c;
  return h;
}

u32 sysv_hash(std::string_view s) {
  u32 h = 0;
  for (unsigned char c : s) {
    h = (h << 4) + c;
    u32 g = h & 0xf0000000u;
    if (g != 0) h ^= g >> 24;
    h &= ~g;
  }
  return h;
}

// Android's packed relocations and the per-symbol side tables below cannot
// be rewritten for a reordered .dynsym.
constexpr i64 kAndroidRel = 0x6000000f, kAndroidRela = 0x60000011;
constexpr i64 kSyminfo = 0x6ffffeff;
// prelink's tags: DT_GNU_CONFLICT/DT_GNU_CONFLICTSZ, DT_GNU_LIBLIST,
// DT_GNU_PRELINKED and DT_CHECKSUM.
constexpr i64 kGnuConflict = 0x6ffffef8, kGnuConflictSz = 0x6ffffdf6,
              kGnuLiblist = 0x6ffffef9, kGnuPrelinked = 0x6ffffdf5,
              kChecksum = 0x6ffffdf8;

template <typename E>
void put(std::vector<u8>& out, u64 at, u32 v) {
  U32<E> x = v;
  std::memcpy(out.data() + at, &x, 4);
}

}  // namespace

// Where a table found through `tag` lives now: moved into the new segment
// (make_room_after_phdrs or a rebuilt segment of ours) or where it was.
template <typename E>
u64 Layout<E>::current_offset(i64 tag, u64 original) const {
  for (const auto& m : moved_)
    if (m.dt_tag == tag && m.from.offset == original) return m.to.offset;
  return original;
}

template <typename E>
void Layout<E>::plan_symbol_renames() {
  if (o_.rename_dynamic_symbols.empty()) return;
  std::map<std::string, std::string, std::less<>> map(
      o_.rename_dynamic_symbols.begin(), o_.rename_dynamic_symbols.end());
  auto syms = r_.dynsym_range();
  if (!syms) return;  // nothing to rename (patchelf: a no-op too)
  u64 count = syms->size / sizeof(Sym<E>);
  auto bytes =
      r_.bytes().range(syms->offset, count * sizeof(Sym<E>), ".dynsym");
  auto table = reinterpret_cast<const Sym<E>*>(bytes.data());
  auto strings = r_.string_table();
  for (u64 i = 1; i < count; ++i) {
    auto it = map.find(strings(table[i].st_name));
    if (it != map.end() && it->second != it->first)
      sym_renames_[i] = it->second;
  }
  if (sym_renames_.empty()) return;
  // A prelinked object's bindings were computed at prelink time, by name:
  // .gnu.conflict holds the resolved values ld.so applies at startup for
  // symbols whose binding differed, and DT_GNU_LIBLIST/DT_CHECKSUM tell
  // ld.so whether to trust them. None refers to a symbol index, so nothing
  // here can be rewritten to follow a rename; renaming would leave ld.so
  // applying bindings made for the old names. prelink -u undoes it first.
  for (auto [tag, name] : {std::pair{kGnuConflict, "DT_GNU_CONFLICT"},
                           std::pair{kGnuConflictSz, "DT_GNU_CONFLICTSZ"},
                           std::pair{kGnuLiblist, "DT_GNU_LIBLIST"},
                           std::pair{kGnuPrelinked, "DT_GNU_PRELINKED"},
                           std::pair{kChecksum, "DT_CHECKSUM"}})
    if (r_.dynamic_value(tag))
      throw Error(Errc::unsupported, r_.name(),
                  fmt::format("--rename-dynamic-symbols: the file is "
                              "prelinked ({}): its prelink conflict and "
                              "library tables bind the old names; undo "
                              "prelink first (prelink -u)",
                              name));
  notes_.push_back(
      fmt::format("renamed {} dynamic symbols", sym_renames_.size()));
}

template <typename E>
void Layout<E>::write_symbol_renames() {
  if (sym_renames_.empty()) return;
  const ByteView& b = r_.bytes();
  auto syms = *r_.dynsym_range();
  u64 count = syms.size / sizeof(Sym<E>);
  auto sym_bytes = b.range(syms.offset, count * sizeof(Sym<E>), ".dynsym");
  auto table = reinterpret_cast<const Sym<E>*>(sym_bytes.data());
  auto strings = r_.string_table();
  std::vector<std::string_view> names(count);
  for (u64 i = 1; i < count; ++i) names[i] = strings(table[i].st_name);
  for (const auto& [i, name] : sym_renames_) names[i] = name;
  std::vector<u64> order(count);  // new position -> old index
  std::iota(order.begin(), order.end(), u64{0});

  // .gnu.hash: re-sort the hashed symbols by their new bucket, rebuild.
  // Only needed when a hashed symbol is renamed: an undefined one (below
  // symoffset) is not in the table, and a table whose buckets are all empty
  // hashes nothing (linkers then write symoffset 1 and no chain at all).
  if (auto addr = r_.dynamic_value(DT_GNU_HASH)) {
    auto off = r_.vaddr_to_offset(*addr);
    if (!off)
      throw Error(Errc::format, r_.name(),
                  "DT_GNU_HASH points outside every segment");
    auto head = b.template at<std::array<U32<E>, 4>>(*off, ".gnu.hash header");
    u32 nbuckets = head[0], symoffset = head[1], bloom_size = head[2],
        shift = head[3];
    constexpr u32 kWordBits = E::is_64 ? 64 : 32;
    // symoffset 0 would hash (and move) the null symbol.
    if (nbuckets == 0 || bloom_size == 0 || symoffset == 0 ||
        symoffset > count || (bloom_size & (bloom_size - 1)) != 0 ||
        shift >= kWordBits)
      throw Error(Errc::format, r_.name(),
                  fmt::format(".gnu.hash header is invalid (buckets {}, "
                              "symbol offset {} of {}, bloom words {}, "
                              "shift {})",
                              nbuckets, symoffset, count, bloom_size, shift),
                  *off);
    u64 bloom_at = 16, buckets_at = bloom_at + u64{bloom_size} * kWordBits / 8;
    u64 chains_at = buckets_at + u64{nbuckets} * 4;
    auto buckets =
        b.range(*off + buckets_at, u64{nbuckets} * 4, ".gnu.hash buckets");
    const auto* bucket_words = reinterpret_cast<const U32<E>*>(buckets.data());
    bool hashes_any = std::any_of(bucket_words, bucket_words + nbuckets,
                                  [](const U32<E>& w) { return w != 0; });
    bool renames_hashed =
        sym_renames_.lower_bound(symoffset) != sym_renames_.end();
    if (hashes_any && renames_hashed) {
      u64 size = chains_at + (count - symoffset) * 4;
      b.range(*off, size, ".gnu.hash");
      std::vector<u32> hashes(count);
      for (u64 i = symoffset; i < count; ++i) hashes[i] = gnu_hash(names[i]);
      std::stable_sort(order.begin() + symoffset, order.end(),
                       [&](u64 x, u64 y) {
                         return hashes[x] % nbuckets < hashes[y] % nbuckets;
                       });
      std::vector<u8> out(size, 0);
      std::memcpy(out.data(), b.range(*off, 16, ".gnu.hash").data(), 16);
      std::vector<Word<E>> bloom(bloom_size);
      using W = decltype(bloom[0].value());
      for (u64 pos = symoffset; pos < count; ++pos) {
        u32 h = hashes[order[pos]];
        u32 bucket = h % nbuckets;
        auto& word = bloom[(h / kWordBits) % bloom_size];
        word = static_cast<W>(word.value() | (W{1} << (h % kWordBits)) |
                              (W{1} << ((h >> shift) % kWordBits)));
        u64 bucket_at = buckets_at + u64{bucket} * 4;
        U32<E> first;
        std::memcpy(&first, out.data() + bucket_at, 4);
        if (first == 0) put<E>(out, bucket_at, static_cast<u32>(pos));
        bool last =
            pos + 1 == count || hashes[order[pos + 1]] % nbuckets != bucket;
        put<E>(out, chains_at + (pos - symoffset) * 4, last ? h | 1u : h & ~1u);
      }
      std::memcpy(out.data() + bloom_at, bloom.data(),
                  bloom.size() * sizeof(Word<E>));
      ov_.write(current_offset(DT_GNU_HASH, *off), out);
    }
  }

  bool reordered = false;
  std::vector<u64> new_index(count);
  for (u64 pos = 0; pos < count; ++pos) {
    new_index[order[pos]] = pos;
    reordered |= order[pos] != pos;
  }
  if (reordered) {
    if (r_.ehdr().e_machine == EM_MIPS)
      throw Error(Errc::unsupported, r_.name(),
                  "--rename-dynamic-symbols: reordering .dynsym for .gnu.hash "
                  "is not supported on MIPS (its GOT follows symbol order)");
    for (i64 tag : {kAndroidRel, kAndroidRela, kSyminfo, i64{DT_SYMTAB_SHNDX}})
      if (r_.dynamic_value(tag))
        throw Error(Errc::unsupported, r_.name(),
                    fmt::format("--rename-dynamic-symbols: reordering .dynsym "
                                "for .gnu.hash is not supported with dynamic "
                                "tag 0x{:x}",
                                tag));
    sym_new_index_ = new_index;
  }

  // The symbols: new names, in the new order.
  for (u64 pos = 1; pos < count; ++pos) {
    u64 old = order[pos];
    auto rn = sym_renames_.find(old);
    if (old == pos && rn == sym_renames_.end()) continue;
    Sym<E> s = table[old];
    if (rn != sym_renames_.end())
      s.st_name = static_cast<u32>(string_offset_.at(rn->second));
    ov_.write(syms.offset + pos * sizeof(Sym<E>), as_bytes(s));
  }
  if (reordered) {
    // Version indices follow their symbols (with the versions of removed
    // libraries dropped, as rewrite_verneeds did by old index).
    if (auto versym = r_.versym_offset()) {
      auto vb = b.range(*versym, count * 2, ".gnu.version");
      auto v = reinterpret_cast<const U16<E>*>(vb.data());
      std::vector<U16<E>> out(count);
      for (u64 pos = 0; pos < count; ++pos) {
        u16 x = v[order[pos]];
        if (dropped_versions_.contains(x & VERSYM_VERSION))
          x = static_cast<u16>((x & VERSYM_HIDDEN) | VER_NDX_GLOBAL);
        out[pos] = x;
      }
      ov_.write(*versym,
                std::span<const u8>(reinterpret_cast<const u8*>(out.data()),
                                    count * 2));
    }
    // Relocations: every table the dynamic section or a section header
    // (linked to .dynsym) names; an entry is rewritten once even when the
    // tables overlap (.rela.plt inside DT_RELA on some targets).
    struct Table {
      u64 offset, size;
      bool rela;
    };
    std::vector<Table> tables;
    auto add = [&](i64 at_tag, i64 size_tag, bool rela) {
      auto at = r_.dynamic_value(at_tag), size = r_.dynamic_value(size_tag);
      if (!at || !size) return;
      auto off = r_.vaddr_to_offset(*at);
      if (!off)
        throw Error(Errc::format, r_.name(),
                    "a relocation table lies outside every segment");
      tables.push_back({*off, *size, rela});
    };
    add(DT_RELA, DT_RELASZ, true);
    add(DT_REL, DT_RELSZ, false);
    if (auto kind = r_.dynamic_value(DT_PLTREL))
      add(DT_JMPREL, DT_PLTRELSZ, *kind == DT_RELA);
    auto shdrs = r_.shdrs();
    for (const auto& sh : shdrs)
      if ((sh.sh_type == SHT_RELA || sh.sh_type == SHT_REL) &&
          sh.sh_link < shdrs.size() && shdrs[sh.sh_link].sh_type == SHT_DYNSYM)
        tables.push_back({sh.sh_offset, sh.sh_size, sh.sh_type == SHT_RELA});
    std::set<u64> done;
    constexpr u64 kWord = sizeof(Word<E>);
    for (const Table& t : tables) {
      u64 entsize = t.rela ? 3 * kWord : 2 * kWord;
      auto rb = b.range(t.offset, t.size / entsize * entsize, "relocations");
      for (u64 at = 0; at + entsize <= rb.size(); at += entsize) {
        if (!done.insert(t.offset + at).second) continue;
        Word<E> info;
        std::memcpy(&info, rb.data() + at + kWord, kWord);
        u64 v = info;
        u64 sym = E::is_64 ? v >> 32 : v >> 8;
        u64 type = E::is_64 ? v & 0xffffffffu : v & 0xffu;
        if (sym >= count)
          throw Error(Errc::format, r_.name(),
                      "a relocation names a symbol beyond .dynsym",
                      t.offset + at);
        if (new_index[sym] == sym) continue;
        u64 n = new_index[sym];
        info = static_cast<decltype(info.value())>(E::is_64 ? (n << 32) | type
                                                            : (n << 8) | type);
        ov_.write(t.offset + at + kWord, as_bytes(info));
      }
    }
  }

  // .hash (SysV): every symbol, chained by its new index. Its words are
  // 8 bytes on 64-bit s390 and Alpha, 4 everywhere else.
  if (auto addr = r_.dynamic_value(DT_HASH)) {
    auto off = r_.vaddr_to_offset(*addr);
    if (!off)
      throw Error(Errc::format, r_.name(),
                  "DT_HASH points outside every segment");
    const u64 w = r_.hash_word_size();
    const bool wide = w == 8;
    auto word_at = [&](std::span<const u8> bytes, u64 at) -> u64 {
      if (wide) {
        U64<E> x;
        std::memcpy(&x, bytes.data() + at, 8);
        return x;
      }
      U32<E> x;
      std::memcpy(&x, bytes.data() + at, 4);
      return x;
    };
    auto head = b.range(*off, 2 * w, ".hash header");
    u64 nbucket = word_at(head, 0), nchain = word_at(head, w);
    if (nbucket == 0 || nbucket > u32{0xffffffff} || nchain != count)
      throw Error(Errc::format, r_.name(),
                  fmt::format(".hash has {} buckets and {} chains for {} "
                              "dynamic symbols",
                              nbucket, nchain, count),
                  *off);
    u64 size = (2 + nbucket + nchain) * w;
    // The symbols the table held (GNU ld leaves local section symbols
    // out), found by walking every chain once.
    auto table_bytes = b.range(*off, size, ".hash");
    std::vector<bool> listed(count, false);
    for (u64 i = 0; i < nbucket; ++i) {
      u64 steps = 0;
      for (u64 k = word_at(table_bytes, (2 + i) * w); k != 0 && k < count;
           k = word_at(table_bytes, (2 + nbucket + k) * w)) {
        if (listed[k] || ++steps > count) break;  // a loop: stop, as ld.so
        listed[k] = true;
      }
    }
    std::vector<u64> bucket(nbucket, 0), chain(nchain, 0);
    // Insert from the last symbol so each chain lists symbols in table
    // order, as linkers write it.
    for (u64 pos = count; pos-- > 1;) {
      if (!listed[order[pos]]) continue;
      u64 slot = sysv_hash(names[order[pos]]) % nbucket;
      chain[pos] = bucket[slot];
      bucket[slot] = pos;
    }
    std::vector<u8> out(size, 0);
    auto store = [&](u64 at, u64 v) {
      if (wide) {
        U64<E> x = v;
        std::memcpy(out.data() + at, &x, 8);
      } else {
        put<E>(out, at, static_cast<u32>(v));
      }
    };
    store(0, nbucket);
    store(w, nchain);
    for (u64 i = 0; i < nbucket; ++i) store((2 + i) * w, bucket[i]);
    for (u64 i = 0; i < nchain; ++i) store((2 + nbucket + i) * w, chain[i]);
    ov_.write(current_offset(DT_HASH, *off), out);
  }
}

#define LIBPKG_LAYOUT_SYMBOL_MEMBERS(E)                   \
  template u64 Layout<E>::current_offset(i64, u64) const; \
  template void Layout<E>::plan_symbol_renames();         \
  template void Layout<E>::write_symbol_renames();
LIBPKG_LAYOUT_SYMBOL_MEMBERS(Elf32LE)
LIBPKG_LAYOUT_SYMBOL_MEMBERS(Elf32BE)
LIBPKG_LAYOUT_SYMBOL_MEMBERS(Elf64LE)
LIBPKG_LAYOUT_SYMBOL_MEMBERS(Elf64BE)
#undef LIBPKG_LAYOUT_SYMBOL_MEMBERS

}  // namespace libpkg::elf::layout
