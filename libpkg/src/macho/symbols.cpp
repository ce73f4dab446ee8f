// SPDX-License-Identifier: BSD-3-Clause
// LC_SYMTAB and exports-trie reading for `nm -gU`-like listings (see
// symbols.hpp). Nothing is trusted: the tables must lie inside the slice,
// string indexes inside the string table, strings NUL-terminated before its
// end, and the trie is walked with every node visited at most once (a cycle
// or a shared node is an error, not a hang).
#include "libpkg/macho/symbols.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <unordered_set>

#include "libpkg/base/error.hpp"
#include "libpkg/macho/format.hpp"

namespace libpkg::macho {

namespace {

[[noreturn]] void fail(const Slice& s, const std::string& msg) {
  throw Error(Errc::format, s.where(), msg);
}

template <typename T>
const T& command_at(const Slice& s, const Command& c) {
  if (c.cmdsize < sizeof(T))
    fail(s, fmt::format("load command {} ({}): cmdsize 0x{:x} below its "
                        "size 0x{:x}",
                        c.index, command_name(c.cmd), c.cmdsize, sizeof(T)));
  return s.bytes().at<T>(c.offset, command_name(c.cmd));
}

// The bytes [off, off + size) of the slice, or an error naming `what`.
std::span<const u8> slice_range(const Slice& s, u64 off, u64 size,
                                const std::string& what) {
  if (!s.bytes().contains(off, size))
    fail(s, fmt::format("{} 0x{:x}+0x{:x} past the end of the slice (0x{:x})",
                        what, off, size, s.size()));
  return s.bytes().span().subspan(off, size);
}

struct SectionName {
  std::string_view seg, sect;
};

std::vector<SectionName> all_sections(const Slice& s) {
  std::vector<SectionName> out;
  for (const auto& seg : s.segments())
    for (const auto& sec : seg.sections)
      out.push_back({sec.segname, sec.sectname});
  return out;
}

char section_letter(const SectionName& sec) {
  if (sec.seg == "__TEXT" && sec.sect == "__text") return 'T';
  if (sec.seg == "__DATA" && sec.sect == "__data") return 'D';
  if (sec.seg == "__DATA" && sec.sect == "__bss") return 'B';
  return 'S';
}

std::string_view nlist_name(const Slice& s, std::span<const u8> strtab,
                            u32 strx, u32 index) {
  if (strx >= strtab.size())
    fail(s, fmt::format("symbol {}: string index 0x{:x} past the string "
                        "table (0x{:x})",
                        index, strx, strtab.size()));
  auto rest = strtab.subspan(strx);
  auto nul = std::find(rest.begin(), rest.end(), u8{0});
  if (nul == rest.end())
    fail(s, fmt::format("symbol {}: name at 0x{:x} not NUL-terminated "
                        "before the end of the string table",
                        index, strx));
  return {reinterpret_cast<const char*>(rest.data()),
          static_cast<size_t>(nul - rest.begin())};
}

// ULEB128 at `pos` inside `data`; throws naming `what`.
u64 read_uleb(const Slice& s, std::span<const u8> data, u64& pos,
              std::string_view what) {
  u64 v = 0;
  for (unsigned shift = 0;; shift += 7) {
    if (pos >= data.size())
      fail(s, fmt::format("exports trie: {} at 0x{:x} runs past the trie "
                          "(0x{:x} bytes)",
                          what, pos, data.size()));
    u8 b = data[pos++];
    if (shift >= 64 || (shift == 63 && (b & 0x7e)))
      fail(s, fmt::format("exports trie: {} at 0x{:x} overflows 64 bits", what,
                          pos - 1));
    v |= u64{b & 0x7fu} << shift;
    if (!(b & 0x80)) return v;
  }
}

std::span<const u8> export_trie(const Slice& s) {
  for (const Command& c : s.commands()) {
    if (c.cmd == kLcDyldInfo || c.cmd == kLcDyldInfoOnly) {
      const auto& d = command_at<DyldInfoCommand>(s, c);
      if (d.export_size == 0) return {};
      return slice_range(s, d.export_off, d.export_size,
                         fmt::format("{} export_off", command_name(c.cmd)));
    }
    if (c.cmd == kLcDyldExportsTrie) {
      const auto& d = command_at<LinkeditDataCommand>(s, c);
      if (d.datasize == 0) return {};
      return slice_range(s, d.dataoff, d.datasize,
                         "LC_DYLD_EXPORTS_TRIE dataoff");
    }
  }
  return {};
}

// The letter of the section holding `addr` (S when none does).
char letter_at(const std::vector<Segment>& segments, u64 addr) {
  for (const auto& seg : segments)
    for (const auto& sec : seg.sections)
      if (addr >= sec.addr && addr - sec.addr < sec.size)
        return section_letter({sec.segname, sec.sectname});
  return 'S';
}

u64 text_vmaddr(const Slice& s) {
  for (const auto& seg : s.segments())
    if (seg.name == "__TEXT") return seg.vmaddr;
  return 0;
}

}  // namespace

std::vector<MachOSymbol> symtab_symbols(const Slice& s) {
  std::vector<MachOSymbol> out;
  for (const Command& c : s.commands()) {
    if (c.cmd != kLcSymtab) continue;
    const auto& st = command_at<SymtabCommand>(s, c);
    auto strtab = slice_range(s, st.stroff, st.strsize, "LC_SYMTAB stroff");
    auto table = slice_range(s, st.symoff, u64{st.nsyms} * sizeof(Nlist64),
                             "LC_SYMTAB symoff");
    const auto sections = all_sections(s);
    out.reserve(st.nsyms);
    for (u32 i = 0; i < st.nsyms; ++i) {
      Nlist64 n;
      std::memcpy(&n, table.data() + u64{i} * sizeof(Nlist64), sizeof n);
      if (n.n_type & kNStab) continue;
      MachOSymbol sym;
      sym.name = nlist_name(s, strtab, n.n_strx, i);
      sym.value = n.n_value;
      sym.external = n.n_type & kNExt;
      sym.weak_def = n.n_desc & kNWeakDef;
      switch (n.n_type & kNTypeMask) {
        case kNSect:
          if (n.n_sect == 0 || n.n_sect > sections.size())
            fail(s, fmt::format("symbol {} ({}): section {} out of range "
                                "(the slice has {})",
                                i, sym.name, n.n_sect, sections.size()));
          sym.letter = section_letter(sections[n.n_sect - 1]);
          sym.defined = true;
          break;
        case kNAbs:
          sym.letter = 'A';
          sym.defined = true;
          break;
        case kNIndr:
          sym.letter = 'I';
          sym.defined = true;
          break;
        default:  // N_UNDF, N_PBUD
          // An external N_UNDF with a value is a common symbol (its size),
          // as llvm-nm reads it: not undefined, not defined either.
          sym.letter = (n.n_type & kNTypeMask) == kNUndf && sym.external &&
                               n.n_value != 0
                           ? 'C'
                           : 'U';
          sym.weak_ref = n.n_desc & kNWeakRef;
          sym.library_ordinal = static_cast<u8>(n.n_desc >> 8);
          break;
      }
      out.push_back(sym);
    }
    break;  // one LC_SYMTAB
  }
  return out;
}

std::vector<MachOSymbol> trie_exports(const Slice& s) {
  auto trie = export_trie(s);
  if (trie.empty()) return {};
  const u64 base = text_vmaddr(s);
  // Names are the edges along the path from the root.
  std::vector<std::string> names;
  std::vector<MachOSymbol> found;
  std::unordered_set<u64> visited;
  struct Frame {
    u64 node;
    std::string prefix;
  };
  std::vector<Frame> stack{{0, ""}};
  while (!stack.empty()) {
    Frame f = std::move(stack.back());
    stack.pop_back();
    if (!visited.insert(f.node).second)
      fail(s, fmt::format("exports trie: node 0x{:x} reached twice (a cycle "
                          "or a shared node)",
                          f.node));
    u64 pos = f.node;
    const u64 info_size = read_uleb(s, trie, pos, "terminal size");
    const u64 children_at = pos + info_size;
    if (info_size > trie.size() || children_at > trie.size())
      fail(s, fmt::format("exports trie: node 0x{:x}: terminal size 0x{:x} "
                          "past the trie (0x{:x} bytes)",
                          f.node, info_size, trie.size()));
    if (info_size > 0) {
      auto info = trie.subspan(0, children_at);
      MachOSymbol sym;
      const u64 flags = read_uleb(s, info, pos, "flags");
      sym.external = sym.defined = sym.from_trie = true;
      sym.weak_def = flags & kExportWeakDefinition;
      if (flags & kExportReexport) {
        read_uleb(s, info, pos, "re-export ordinal");
        sym.reexport = true;
        sym.letter = 'I';
      } else {
        const u64 addr = read_uleb(s, info, pos, "address");
        if (flags & kExportStubAndResolver) read_uleb(s, info, pos, "resolver");
        const bool absolute = (flags & kExportKindMask) == kExportKindAbsolute;
        sym.value = absolute ? addr : base + addr;
        sym.letter = absolute ? 'A' : '?';  // section decided below
      }
      names.push_back(f.prefix);
      found.push_back(sym);
    }
    pos = children_at;
    if (pos >= trie.size())
      fail(s, fmt::format("exports trie: node 0x{:x}: child count past the "
                          "trie (0x{:x} bytes)",
                          f.node, trie.size()));
    const u8 children = trie[pos++];
    for (u8 i = 0; i < children; ++i) {
      auto rest = trie.subspan(pos);
      auto nul = std::find(rest.begin(), rest.end(), u8{0});
      if (nul == rest.end())
        fail(s, fmt::format("exports trie: node 0x{:x}: edge {} not "
                            "NUL-terminated",
                            f.node, i));
      std::string edge(reinterpret_cast<const char*>(rest.data()),
                       static_cast<size_t>(nul - rest.begin()));
      pos += edge.size() + 1;
      const u64 child = read_uleb(s, trie, pos, "child offset");
      if (child >= trie.size())
        fail(s, fmt::format("exports trie: node 0x{:x}: child offset 0x{:x} "
                            "past the trie (0x{:x} bytes)",
                            f.node, child, trie.size()));
      stack.push_back({child, f.prefix + edge});
    }
  }
  const auto segments = s.segments();
  for (size_t i = 0; i < found.size(); ++i) {
    found[i].name = std::move(names[i]);
    if (found[i].letter == '?')
      found[i].letter = letter_at(segments, found[i].value);
  }
  return found;
}

namespace {

void sort_by_name(std::vector<MachOSymbol>& syms) {
  std::stable_sort(
      syms.begin(), syms.end(), [](const MachOSymbol& a, const MachOSymbol& b) {
        return a.name != b.name ? a.name < b.name : a.value < b.value;
      });
}

// The symbol table's external symbols, defined (commons included, as
// llvm-nm's --defined-only lists them) or undefined, plus the trie's names
// the table lacks when `defined`.
std::vector<MachOSymbol> externals(const Slice& s, bool defined,
                                   bool undefined) {
  std::vector<MachOSymbol> out;
  std::unordered_set<std::string> listed;
  for (auto& sym : symtab_symbols(s)) {
    if (!sym.external) continue;
    const bool is_undefined = sym.letter == 'U';
    if (is_undefined ? !undefined : !defined) continue;
    if (!is_undefined) listed.insert(sym.name);
    out.push_back(std::move(sym));
  }
  // llvm-nm adds what only the trie has (a stripped symbol table).
  if (defined)
    for (auto& sym : trie_exports(s))
      if (!listed.count(sym.name)) out.push_back(std::move(sym));
  sort_by_name(out);
  return out;
}

}  // namespace

std::vector<MachOSymbol> defined_external_symbols(const Slice& s) {
  return externals(s, true, false);
}

std::vector<MachOSymbol> undefined_symbols(const Slice& s) {
  return externals(s, false, true);
}

std::vector<MachOSymbol> external_symbols(const Slice& s) {
  return externals(s, true, true);
}

const char* lookup_name(SymbolLookup lookup) {
  switch (lookup) {
    case SymbolLookup::two_level:
      return "two_level";
    case SymbolLookup::self:
      return "self";
    case SymbolLookup::dynamic:
      return "dynamic";
    case SymbolLookup::executable:
      return "executable";
    case SymbolLookup::flat:
      return "flat";
    case SymbolLookup::bad_ordinal:
      return "bad_ordinal";
  }
  return "?";
}

UndefinedLookup undefined_lookup(const Slice& s, const MachOSymbol& sym) {
  // Without MH_TWOLEVEL, dyld searches every loaded image and the ordinal
  // means nothing (ld writes 0 there).
  if (!(s.flags() & kMhTwoLevel)) return {SymbolLookup::flat, std::nullopt};
  switch (sym.library_ordinal) {
    case kSelfLibraryOrdinal:
      return {SymbolLookup::self, std::nullopt};
    case kDynamicLookupOrdinal:
      return {SymbolLookup::dynamic, std::nullopt};
    case kExecutableOrdinal:
      return {SymbolLookup::executable, std::nullopt};
    default:
      break;
  }
  for (const auto& d : s.dylibs())
    if (d.ordinal == sym.library_ordinal)
      return {SymbolLookup::two_level, std::string(d.name)};
  return {SymbolLookup::bad_ordinal, std::nullopt};
}

}  // namespace libpkg::macho
