// SPDX-License-Identifier: BSD-3-Clause
// The C++ ABI census (PyTorch's check_binary_symbols.py rule).
//
// A demangled symbol counts for a family when it starts with one of the
// namespaces and one of the family's patterns occurs after that prefix — the
// Python `re.match(f"{ns}.*{pattern}", name)` with literal ns/pattern. Each
// symbol is counted at most once per family, however many (namespace,
// pattern) pairs match it. The Bash version of this check ran one
// `nm | c++filt | grep` per pair and added the line counts, so a symbol
// such as `c10::f(std::__cxx11::basic_string<...>, std::__cxx11::list<...>)`
// counted twice; PyTorch's Python script and this code count it once.
//
// Names are compared in c++filt's (verbose) spelling, which the rule was
// written against: __cxa_demangle (elf::demangle) prints the standard
// abbreviations Ss/Si/So/Sd as "std::string", "std::istream", ..., where
// c++filt prints "std::basic_string<char, std::char_traits<char>,
// std::allocator<char> >" — and "std::basic_string<" is the old-ABI
// pattern. (The new-ABI string has no abbreviation, so without the
// expansion old-ABI libraries would be undercounted.)
#include "libpkg/abi/census.hpp"

#include <array>
#include <cctype>

namespace libpkg::abi {

const char* cxx_abi_name(CxxAbi abi) {
  switch (abi) {
    case CxxAbi::cxx11:
      return "cxx11";
    case CxxAbi::pre_cxx11:
      return "pre_cxx11";
    case CxxAbi::mixed:
      return "mixed";
    case CxxAbi::none:
      return "none";
  }
  return "unknown";
}

namespace {

bool matches_family(std::string_view demangled,
                    const std::vector<std::string>& namespaces,
                    const std::vector<std::string>& patterns) {
  for (const auto& ns : namespaces) {
    if (!demangled.starts_with(ns)) continue;
    for (const auto& pattern : patterns) {
      if (demangled.find(pattern, ns.size()) != std::string_view::npos)
        return true;
    }
  }
  return false;
}

bool is_identifier_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}

// elf::demangle, with the standard abbreviations expanded as c++filt (and
// libiberty with DMGL_VERBOSE) prints them.
std::string demangle_verbose(std::string_view mangled) {
  struct Expansion {
    std::string_view brief, full;
  };
  static constexpr std::array<Expansion, 4> kExpansions = {{
      {"std::string",
       "std::basic_string<char, std::char_traits<char>, std::allocator<char> "
       ">"},
      {"std::istream", "std::basic_istream<char, std::char_traits<char> >"},
      {"std::ostream", "std::basic_ostream<char, std::char_traits<char> >"},
      {"std::iostream", "std::basic_iostream<char, std::char_traits<char> >"},
  }};
  std::string name = elf::demangle(mangled);
  if (name.find("std::") == std::string::npos) return name;
  std::string out;
  out.reserve(name.size());
  std::size_t i = 0;
  while (i < name.size()) {
    bool replaced = false;
    // A whole name: not preceded by an identifier character or ':' (which
    // would make it a nested "x::std::string"), not followed by one.
    bool boundary_before =
        i == 0 || (!is_identifier_char(name[i - 1]) && name[i - 1] != ':');
    if (boundary_before && name[i] == 's') {
      for (const auto& e : kExpansions) {
        std::size_t end = i + e.brief.size();
        if (name.compare(i, e.brief.size(), e.brief) == 0 &&
            (end == name.size() || !is_identifier_char(name[end]))) {
          out += e.full;
          // The expansion ends in '>': c++filt separates it from a closing
          // '>' ("std::allocator<std::basic_string<...> >").
          if (end < name.size() && name[end] == '>') out += ' ';
          i = end;
          replaced = true;
          break;
        }
      }
    }
    if (!replaced) out += name[i++];
  }
  return out;
}

void add_example(std::vector<std::string>& examples, std::size_t max,
                 const std::string& name) {
  if (examples.size() < max) examples.push_back(name);
}

}  // namespace

bool counts_as_cxx11(std::string_view demangled, const CensusOptions& options) {
  return matches_family(demangled, options.namespaces, options.cxx11_patterns);
}

bool counts_as_pre_cxx11(std::string_view demangled,
                         const CensusOptions& options) {
  return matches_family(demangled, options.namespaces,
                        options.pre_cxx11_patterns);
}

Census cxx_abi_census(const elf::ElfFile& elf, const CensusOptions& options) {
  Census census;
  census.file = elf.name();
  std::vector<std::vector<std::string>> forbidden_hits(
      options.forbidden.size());
  elf.for_each_dynamic_symbol([&](const elf::Symbol& sym) {
    if (sym.name.empty()) return;
    if (options.defined_only && !sym.is_defined()) return;
    // Like c++filt, only mangled names are demangled; others stay as they are.
    std::string name = sym.name.starts_with("_Z") ? demangle_verbose(sym.name)
                                                  : std::string(sym.name);
    if (counts_as_cxx11(name, options)) {
      ++census.cxx11;
      add_example(census.cxx11_examples, options.max_examples, name);
    }
    if (counts_as_pre_cxx11(name, options)) {
      ++census.pre_cxx11;
      add_example(census.pre_cxx11_examples, options.max_examples, name);
    }
    if (!sym.is_defined()) return;
    for (std::size_t i = 0; i < options.forbidden.size(); ++i) {
      if (name.find(options.forbidden[i]) != std::string::npos)
        add_example(forbidden_hits[i], options.max_examples, name);
    }
  });
  for (std::size_t i = 0; i < options.forbidden.size(); ++i) {
    if (!forbidden_hits[i].empty())
      census.forbidden.emplace_back(options.forbidden[i],
                                    std::move(forbidden_hits[i]));
  }
  if (census.cxx11 && census.pre_cxx11)
    census.verdict = CxxAbi::mixed;
  else if (census.cxx11 >= options.min_count && census.cxx11)
    census.verdict = CxxAbi::cxx11;
  else if (census.pre_cxx11 >= options.min_count && census.pre_cxx11)
    census.verdict = CxxAbi::pre_cxx11;
  else
    census.verdict = CxxAbi::none;
  return census;
}

}  // namespace libpkg::abi
