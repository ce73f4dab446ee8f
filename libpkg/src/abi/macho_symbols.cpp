// SPDX-License-Identifier: BSD-3-Clause
// macho_symbols_json: see libpkg/abi/macho_symbols.hpp.
#include "libpkg/abi/macho_symbols.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "libpkg/base/error.hpp"
#include "libpkg/elf/view.hpp"
#include "libpkg/macho/symbols.hpp"

namespace libpkg::abi {
namespace {

namespace lm = libpkg::macho;
using nlohmann::json;

json symbol_json(const lm::Slice& slice, const lm::MachOSymbol& s) {
  json j = {{"name", s.name},
            {"demangled", demangle_macho(s.name)},
            {"value", s.value},
            {"type", std::string(1, s.letter)},
            {"defined", s.letter != 'U'},
            {"weak", s.weak_def},
            {"reexport", s.reexport},
            {"exports_trie_only", s.from_trie}};
  if (s.letter == 'U') {
    lm::UndefinedLookup lookup = lm::undefined_lookup(slice, s);
    j["weak_import"] = s.weak_ref;
    j["lookup"] = lm::lookup_name(lookup.kind);
    j["library_ordinal"] = s.library_ordinal;
    j["library"] = lookup.library ? json(*lookup.library) : json(nullptr);
  }
  return j;
}

}  // namespace

std::vector<lm::MachOSymbol> listed_symbols(const lm::Slice& slice,
                                            const MachoSymbolsQuery& q) {
  if (q.defined && q.undefined) return lm::external_symbols(slice);
  if (q.defined) return lm::defined_external_symbols(slice);
  if (q.undefined) return lm::undefined_symbols(slice);
  return {};
}

std::string demangle_macho(std::string_view name) {
  if (name.starts_with("__Z")) return elf::demangle(name.substr(1));
  return std::string(name);
}

std::string macho_symbols_json(const macho::MachOFile& file,
                               const MachoSymbolsQuery& q, int indent) {
  const auto& slices = file.slices();
  if (!q.arch.empty() &&
      std::none_of(slices.begin(), slices.end(),
                   [&](const lm::Slice& s) { return s.arch() == q.arch; }))
    throw Error(Errc::usage, file.name(), "no " + q.arch + " slice");
  json out = json::array();
  for (const auto& slice : slices) {
    if (!slice.parsed() || (!q.arch.empty() && slice.arch() != q.arch))
      continue;
    json list = json::array();
    for (const auto& s : listed_symbols(slice, q))
      list.push_back(symbol_json(slice, s));
    out.push_back({{"arch", slice.arch()}, {"symbols", std::move(list)}});
  }
  return json({{"file", file.name()}, {"slices", std::move(out)}}).dump(indent);
}

}  // namespace libpkg::abi
