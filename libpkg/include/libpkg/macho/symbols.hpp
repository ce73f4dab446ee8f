// SPDX-License-Identifier: BSD-3-Clause
// The external symbols of a Mach-O slice, as `nm -g` lists them: the
// LC_SYMTAB nlist_64 entries that are external and not debugging entries,
// plus the names only the exports trie has (LC_DYLD_INFO(_ONLY)'s
// export_off, or LC_DYLD_EXPORTS_TRIE in files with chained fixups), as
// llvm-nm adds them. Undefined ones (`nm -u`) carry where dyld looks them
// up: the dependent dylib their two-level-namespace ordinal names, the
// loading executable, dynamic lookup (`-undefined dynamic_lookup`) or, in a
// flat-namespace image, every loaded image. Every offset, count, string
// index and trie edge is bounds-checked; errors are libpkg::Error naming the
// slice ("FILE (arm64): ...") and the structure.
#pragma once

#include <optional>
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
  // section), A (absolute), I (indirect), U (undefined), C (common: an
  // undefined entry with a size, object files only).
  char letter = '?';
  bool external = false;
  bool defined = false;
  bool weak_def = false;   // N_WEAK_DEF / EXPORT_SYMBOL_FLAGS_WEAK_DEFINITION
  bool from_trie = false;  // only the exports trie lists it
  bool reexport = false;   // a trie re-export (no address of its own)
  // Undefined symbols: N_WEAK_REF (a weak import: dyld binds it to 0 when
  // no image defines it) and GET_LIBRARY_ORDINAL(n_desc).
  bool weak_ref = false;
  u8 library_ordinal = 0;
};

/// Where dyld looks an undefined symbol up.
enum class SymbolLookup {
  two_level,    // in the dependent dylib its ordinal names
  self,         // ordinal 0: the image itself
  dynamic,      // ordinal 0xfe: every loaded image (-undefined dynamic_lookup)
  executable,   // ordinal 0xff: the main executable (-bundle_loader)
  flat,         // a flat-namespace image (no MH_TWOLEVEL): every image
  bad_ordinal,  // an ordinal past the slice's dependent dylibs
};
/// "two_level", "self", "dynamic", "executable", "flat", "bad_ordinal".
const char* lookup_name(SymbolLookup lookup);

/// An undefined symbol's lookup and, for two_level, the dependent dylib.
struct UndefinedLookup {
  SymbolLookup kind = SymbolLookup::flat;
  std::optional<std::string> library;  // its install name (two_level)
};

/// Where dyld finds `sym` (an undefined symbol of `slice`): the slice's
/// dependent dylib of its ordinal (Slice::dylibs order) in a two-level
/// namespace image. Throws the slice's load-command errors.
UndefinedLookup undefined_lookup(const Slice& slice, const MachOSymbol& sym);

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

/// `nm -u`: the symbol table's undefined external symbols, sorted by name;
/// throws as symtab_symbols.
std::vector<MachOSymbol> undefined_symbols(const Slice& slice);

/// `nm -g`: defined_external_symbols and undefined_symbols in one list,
/// sorted by name (then value); throws as both.
std::vector<MachOSymbol> external_symbols(const Slice& slice);

}  // namespace libpkg::macho
