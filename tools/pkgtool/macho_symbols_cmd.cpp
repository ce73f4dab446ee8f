// SPDX-License-Identifier: BSD-3-Clause
// `pkgtool symbols` on Mach-O files: the defined external symbols of every
// 64-bit slice in `nm -gU` format (llvm-nm's "FILE (for architecture A):"
// header per slice of a fat file), demangled like the ELF path, or --json.
// 32-bit/PPC slices are not parsed and say so.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "libpkg/elf/view.hpp"
#include "libpkg/macho/symbols.hpp"
#include "libpkg/macho/view.hpp"

namespace pkgtool {

namespace {

// C and C++ names carry a leading '_' on Mach-O; the demangler wants the
// Itanium name without it (as `llvm-nm -C` does).
std::string demangled(const std::string& name) {
  std::string_view n = name;
  if (n.starts_with("__Z")) return libpkg::elf::demangle(n.substr(1));
  return name;
}

bool has_arch(const libpkg::macho::MachOFile& file, const std::string& arch) {
  for (const auto& s : file.slices())
    if (s.arch() == arch) return true;
  return false;
}

}  // namespace

int run_macho_symbols(const std::vector<std::string>& files,
                      const MachoSymbolsOptions& options) {
  nlohmann::json all = nlohmann::json::array();
  for (const auto& f : files) {
    auto file = libpkg::macho::MachOFile::open(f);
    if (!options.arch.empty() && !has_arch(file, options.arch))
      throw libpkg::Error(libpkg::Errc::usage, f,
                          "no " + options.arch + " slice");
    nlohmann::json slices = nlohmann::json::array();
    for (const auto& slice : file.slices()) {
      if (!options.arch.empty() && slice.arch() != options.arch) continue;
      if (!slice.parsed()) {
        fmt::print(stderr,
                   "warning: {}: not a 64-bit little-endian slice; "
                   "its symbols are not read\n",
                   slice.where());
        continue;
      }
      auto syms = libpkg::macho::defined_external_symbols(slice);
      if (options.json) {
        nlohmann::json list = nlohmann::json::array();
        for (const auto& s : syms)
          list.push_back({{"name", s.name},
                          {"demangled", demangled(s.name)},
                          {"value", s.value},
                          {"type", std::string(1, s.letter)},
                          {"weak", s.weak_def},
                          {"reexport", s.reexport},
                          {"exports_trie_only", s.from_trie}});
        slices.push_back({{"arch", slice.arch()}, {"symbols", list}});
        continue;
      }
      // As llvm-nm: a header per slice when a fat file's slices are all
      // listed (with --arch, only the one slice, without a header).
      if (file.is_fat() && options.arch.empty())
        fmt::print("\n{} (for architecture {}):\n", f, slice.arch());
      else if (files.size() > 1)
        fmt::print("\n{}:\n", f);
      for (const auto& s : syms) {
        std::string name = options.demangle ? demangled(s.name) : s.name;
        if (s.reexport)
          fmt::print("{:16} I {}\n", "", name);
        else
          fmt::print("{:016x} {} {}\n", s.value, s.letter, name);
      }
    }
    if (options.json) all.push_back({{"file", f}, {"slices", slices}});
  }
  if (options.json) fmt::print("{}\n", all.dump(2));
  return 0;
}

}  // namespace pkgtool
