// SPDX-License-Identifier: BSD-3-Clause
// `pkgtool symbols` on Mach-O files: the external symbols of every 64-bit
// slice in `nm -g` format (`nm -gU` with --defined-only; `nm -u`, names
// only, with --undefined-only; llvm-nm's "FILE (for architecture A):"
// header per slice of a fat file), demangled like the ELF path, or --json
// (libpkg/abi/macho_symbols.hpp), where each undefined symbol says where
// dyld looks it up. 32-bit/PPC slices are not parsed and say so.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "libpkg/abi/macho_symbols.hpp"
#include "libpkg/macho/symbols.hpp"
#include "libpkg/macho/view.hpp"

namespace pkgtool {

namespace {

namespace lm = libpkg::macho;

// nm's lines for one slice: `ADDRESS LETTER NAME`, blanks for the address
// of undefined and re-exported symbols, names only for `nm -u`.
void print_slice(const lm::Slice& slice, const MachoSymbolsOptions& options) {
  const libpkg::abi::MachoSymbolsQuery query{options.arch, options.defined,
                                             options.undefined};
  for (const auto& s : libpkg::abi::listed_symbols(slice, query)) {
    std::string name =
        options.demangle ? libpkg::abi::demangle_macho(s.name) : s.name;
    if (!options.defined)
      fmt::print("{}\n", name);
    else if (s.reexport || s.letter == 'U')
      fmt::print("{:16} {} {}\n", "", s.letter, name);
    else
      fmt::print("{:016x} {} {}\n", s.value, s.letter, name);
  }
}

}  // namespace

int run_macho_symbols(const std::vector<std::string>& files,
                      const MachoSymbolsOptions& options) {
  const libpkg::abi::MachoSymbolsQuery query{options.arch, options.defined,
                                             options.undefined};
  nlohmann::json all = nlohmann::json::array();
  for (const auto& f : files) {
    auto file = lm::MachOFile::open(f);
    // Checks --arch and reads every table before anything is printed.
    std::string json = libpkg::abi::macho_symbols_json(file, query, -1);
    for (const auto& slice : file.slices())
      if (!slice.parsed() &&
          (options.arch.empty() || slice.arch() == options.arch))
        fmt::print(stderr,
                   "warning: {}: not a 64-bit little-endian slice; "
                   "its symbols are not read\n",
                   slice.where());
    if (options.json) {
      all.push_back(nlohmann::json::parse(json));
      continue;
    }
    for (const auto& slice : file.slices()) {
      if (!slice.parsed() ||
          (!options.arch.empty() && slice.arch() != options.arch))
        continue;
      // As llvm-nm: a header per slice when a fat file's slices are all
      // listed (with --arch, only the one slice, without a header).
      if (file.is_fat() && options.arch.empty())
        fmt::print("\n{} (for architecture {}):\n", f, slice.arch());
      else if (files.size() > 1)
        fmt::print("\n{}:\n", f);
      print_slice(slice, options);
    }
  }
  if (options.json) fmt::print("{}\n", all.dump(2));
  return 0;
}

}  // namespace pkgtool
