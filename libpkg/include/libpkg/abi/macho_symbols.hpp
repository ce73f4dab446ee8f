// SPDX-License-Identifier: BSD-3-Clause
// The one JSON form of a Mach-O file's external symbols, shared by
// `pkgtool symbols --json` and Python's `libpkg.macho.symbols`:
//   {"file", "slices": [{"arch", "symbols": [{"name", "demangled", "value",
//    "type", "defined", "weak", "reexport", "exports_trie_only", and for
//    undefined symbols "weak_import", "lookup" (two_level, self, dynamic,
//    executable, flat, bad_ordinal), "library_ordinal", "library" (the
//    dependent dylib's install name, or null)}]}]}
// Symbols are listed as `nm -g` does (macho/symbols.hpp), or only the
// defined (`nm -gU`) or undefined (`nm -u`) ones.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "libpkg/macho/symbols.hpp"
#include "libpkg/macho/view.hpp"

namespace libpkg::abi {

/// Which slices and which symbols macho_symbols_json lists.
struct MachoSymbolsQuery {
  std::string arch;  // only this slice; empty: every 64-bit slice
  bool defined = true;
  bool undefined = true;
};

/// The symbols of `slice` the query asks for (macho::external_symbols,
/// defined_external_symbols or undefined_symbols; none when it asks for
/// neither), sorted by name; throws the symbol readers' Error(Errc::format).
std::vector<macho::MachOSymbol> listed_symbols(const macho::Slice& slice,
                                               const MachoSymbolsQuery& query);

/// A Mach-O name demangled as `llvm-nm -C` shows it: the leading '_' of an
/// Itanium name ("__Z...") dropped first; other names as they are. Never
/// throws (a name that does not demangle is returned unchanged).
std::string demangle_macho(std::string_view name);

/// The JSON object above for `file`, indented by `indent` spaces (-1: one
/// line); 32-bit and PowerPC slices are left out. Throws Error(Errc::usage)
/// when `query.arch` names a slice the file lacks, and the symbol readers'
/// Error(Errc::format) on a malformed table.
std::string macho_symbols_json(const macho::MachOFile& file,
                               const MachoSymbolsQuery& query, int indent = 2);

}  // namespace libpkg::abi
