// SPDX-License-Identifier: BSD-3-Clause
// The defined external symbols of a Mach-O slice, as `nm -gU` lists them:
// the LC_SYMTAB nlist_64 entries that are external, defined and not
// debugging entries, plus the names only the exports trie has
// (LC_DYLD_INFO(_ONLY)'s export_off, or LC_DYLD_EXPORTS_TRIE in files with
// chained fixups), as llvm-nm adds them. Every offset, count, string index
// and trie edge is bounds-checked; errors are libpkg::Error naming the
// slice ("FILE (arm64): ...") and the structure.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "libpkg/macho/view.hpp"

namespace libpkg::macho {

/// One symbol of a slice, with nm's letter and where it came from.
struct MachOSymbol {
  std::string name;  // as stored: C names have a leading '_'
  u64 value = 0;     // address (trie: image offset + text vmaddr)
  // nm's letter: T (__TEXT,__text), D (__DATA,__data), B (bss), S (other
  // section), A (absolute), I (indirect), U (undefined).
  char letter = '?';
  bool external = false;
  bool defined = false;
  bool weak_def = false;   // N_WEAK_DEF / EXPORT_SYMBOL_FLAGS_WEAK_DEFINITION
  bool from_trie = false;  // only the exports trie lists it
  bool reexport = false;   // a trie re-export (no address of its own)
};

/// Every nlist_64 entry that is not a debugging (stab) entry, in table order;
/// throws Error(Errc::format) naming the symbol on a bad string index or
/// section.
std::vector<MachOSymbol> symtab_symbols(const Slice& slice);

/// The exports trie's symbols (empty when the slice has none); throws
/// Error(Errc::format) when a trie edge or ULEB128 runs past the trie.
std::vector<MachOSymbol> trie_exports(const Slice& slice);

/// `nm -gU`: the defined external symbols of the symbol table plus those only
/// the exports trie has, sorted by name (then value); throws as both above.
std::vector<MachOSymbol> defined_external_symbols(const Slice& slice);

}  // namespace libpkg::macho
