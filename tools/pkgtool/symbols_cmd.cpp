// SPDX-License-Identifier: BSD-3-Clause
// `pkgtool symbols FILE... [--demangle] [--defined-only|--undefined-only]
// [--json]`: the dynamic symbol table in `nm -D` format (sorted by name,
// nm's type letters, `@VERSION` / `@@VERSION` suffixes), so pipelines that
// parse `nm -D | c++filt` can use it; --json adds binding, type, visibility
// and the library each version is needed from.
#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "cli_parse.hpp"
#include "commands.hpp"
#include "libpkg/base/error.hpp"
#include "libpkg/elf/format.hpp"
#include "libpkg/elf/view.hpp"
#include "macho_inspect.hpp"

namespace pkgtool {

namespace {

using namespace libpkg::elf;
using libpkg::u8;

// nm's one-letter symbol class.
char nm_letter(const Symbol& s, const std::vector<SectionHeader>& sections) {
  char c;
  if (s.shndx == SHN_UNDEF) {
    if (s.bind == STB_WEAK) return s.type == STT_OBJECT ? 'v' : 'w';
    return 'U';
  }
  if (s.bind == STB_GNU_UNIQUE) return 'u';
  if (s.type == STT_GNU_IFUNC) return 'i';
  if (s.bind == STB_WEAK) return s.type == STT_OBJECT ? 'V' : 'W';
  if (s.shndx == SHN_ABS) {
    c = 'A';
  } else if (s.shndx == SHN_COMMON) {
    c = 'C';
  } else if (s.shndx < sections.size()) {
    const SectionHeader& sh = sections[s.shndx];
    if (sh.flags & SHF_EXECINSTR)
      c = 'T';
    else if (sh.type == SHT_NOBITS)
      c = 'B';
    else if (!(sh.flags & SHF_WRITE))
      c = 'R';
    else
      c = 'D';
  } else {
    c = s.type == STT_FUNC ? 'T' : 'D';
  }
  if (s.bind == STB_LOCAL) c = static_cast<char>(c - 'A' + 'a');
  return c;
}

std::string versioned_name(const Symbol& s, const std::string& name) {
  if (s.version.empty()) return name;
  if (s.shndx == SHN_UNDEF) return fmt::format("{}@{}", name, s.version);
  if (s.version == s.name) return name;  // the version definition symbol itself
  return fmt::format("{}{}{}", name, s.version_hidden ? "@" : "@@", s.version);
}

const char* bind_name(u8 b) {
  switch (b) {
    case STB_LOCAL:
      return "LOCAL";
    case STB_GLOBAL:
      return "GLOBAL";
    case STB_WEAK:
      return "WEAK";
    case STB_GNU_UNIQUE:
      return "UNIQUE";
    default:
      return "OTHER";
  }
}

const char* symbol_type_name(u8 t) {
  switch (t) {
    case STT_NOTYPE:
      return "NOTYPE";
    case STT_OBJECT:
      return "OBJECT";
    case STT_FUNC:
      return "FUNC";
    case STT_SECTION:
      return "SECTION";
    case STT_FILE:
      return "FILE";
    case STT_COMMON:
      return "COMMON";
    case STT_TLS:
      return "TLS";
    case STT_GNU_IFUNC:
      return "IFUNC";
    default:
      return "OTHER";
  }
}

const char* visibility_name(u8 v) {
  switch (v) {
    case STV_DEFAULT:
      return "DEFAULT";
    case STV_INTERNAL:
      return "INTERNAL";
    case STV_HIDDEN:
      return "HIDDEN";
    default:
      return "PROTECTED";
  }
}

}  // namespace

int run_symbols(const std::vector<std::string>& args) {
  bool json = false, demangle_names = false, defined_only = false,
       undefined_only = false;
  std::string arch;
  std::vector<std::string> files;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--arch") {
      if (++i == args.size())
        usage_error("pkgtool symbols", "--arch expects an architecture");
      arch = args[i];
    } else if (a == "--json") {
      json = true;
    } else if (a == "--demangle" || a == "-C") {
      demangle_names = true;
    } else if (a == "--defined-only") {
      defined_only = true;
    } else if (a == "--undefined-only" || a == "-u") {
      undefined_only = true;
    } else if (a == "-h" || a == "--help") {
      fmt::print(
          "usage: pkgtool symbols FILE... [--demangle] "
          "[--defined-only|--undefined-only] "
          "[--json]\n"
          "Mach-O: the external symbols of each slice as nm -g lists "
          "them (-gU with --defined-only, -u with --undefined-only) "
          "[--arch ARCH]\n");
      return 0;
    } else if (a.starts_with("-")) {
      usage_error("pkgtool symbols", unexpected_argument(a));
    } else {
      files.push_back(a);
    }
  }
  if (files.empty()) usage_error("pkgtool symbols", "no input files");
  if (looks_like_macho(files.front()))
    return run_macho_symbols(
        files, {json, demangle_names, arch, !undefined_only, !defined_only});
  if (!arch.empty())
    throw libpkg::Error(libpkg::Errc::usage, files.front(),
                        "symbols: --arch applies to Mach-O files");
  nlohmann::json all = nlohmann::json::array();
  for (const auto& f : files) {
    // Oddities the reader works around are reported, not fatal.
    libpkg::elf::ElfReadOptions options;
    options.warning = [&](std::string_view m) {
      fmt::print(stderr, "warning: {}: {}\n", f, m);
    };
    auto elf = ElfFile::open(f, options);
    auto sections = elf.sections();
    std::vector<Symbol> syms;
    elf.for_each_dynamic_symbol([&](const Symbol& s) {
      if (s.name.empty()) return;
      if (defined_only && !s.is_defined()) return;
      if (undefined_only && s.is_defined()) return;
      syms.push_back(s);
    });
    std::stable_sort(
        syms.begin(), syms.end(),
        [](const Symbol& a, const Symbol& b) { return a.name < b.name; });
    if (json) {
      nlohmann::json list = nlohmann::json::array();
      for (const auto& s : syms) {
        list.push_back(
            {{"name", std::string(s.name)},
             {"demangled", demangle(s.name)},
             {"value", s.value},
             {"size", s.size},
             {"defined", s.is_defined()},
             {"bind", bind_name(s.bind)},
             {"type", symbol_type_name(s.type)},
             {"visibility", visibility_name(s.visibility)},
             {"version", std::string(s.version)},
             {"version_file", std::string(s.version_file)},
             {"default_version", !s.version.empty() && !s.version_hidden}});
      }
      all.push_back({{"file", f}, {"symbols", list}});
      continue;
    }
    if (files.size() > 1) fmt::print("\n{}:\n", f);
    int width = elf.is_64() ? 16 : 8;
    for (const auto& s : syms) {
      std::string name =
          demangle_names ? demangle(s.name) : std::string(s.name);
      std::string shown = versioned_name(s, name);
      char letter = nm_letter(s, sections);
      if (s.is_defined())
        fmt::print("{:0{}x} {} {}\n", s.value, width, letter, shown);
      else
        fmt::print("{:{}} {} {}\n", "", width, letter, shown);
    }
  }
  if (json) fmt::print("{}\n", all.dump(2));
  return 0;
}

}  // namespace pkgtool
