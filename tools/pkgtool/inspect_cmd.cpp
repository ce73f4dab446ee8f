// SPDX-License-Identifier: BSD-3-Clause
// `pkgtool inspect FILE... [--json]`: the JSON comes from the library
// (libpkg/abi/inspect.hpp); the text form of ELF files is drawn here, of
// Mach-O files in macho_inspect_cmd.cpp.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "cli_parse.hpp"
#include "commands.hpp"
#include "libpkg/abi/inspect.hpp"
#include "libpkg/base/error.hpp"
#include "libpkg/elf/view.hpp"
#include "macho_inspect.hpp"

namespace pkgtool {

namespace {

std::string join(const std::vector<std::string>& v, const char* sep) {
  std::string out;
  for (size_t i = 0; i < v.size(); ++i) out += (i ? sep : "") + v[i];
  return out;
}

void print_text(const libpkg::abi::ElfSummary& s) {
  fmt::print("{}:\n", s.file);
  fmt::print("  format:      {} {}-endian {} {} (OS/ABI {})\n", s.elf_class,
             s.endian, s.machine, s.type, s.osabi);
  if (s.interpreter) fmt::print("  interpreter: {}\n", *s.interpreter);
  if (s.soname) fmt::print("  soname:      {}\n", *s.soname);
  for (const auto& n : s.needed) fmt::print("  needed:      {}\n", n);
  if (s.rpath) fmt::print("  rpath:       {}\n", *s.rpath);
  if (s.runpath) fmt::print("  runpath:     {}\n", *s.runpath);
  if (!s.flags.empty()) fmt::print("  flags:       {}\n", join(s.flags, " "));
  if (!s.flags_1.empty())
    fmt::print("  flags_1:     {}\n", join(s.flags_1, " "));
  if (s.build_id) fmt::print("  build-id:    {}\n", *s.build_id);
  if (s.isa_level) fmt::print("  isa level:   {}\n", *s.isa_level);
  for (const auto& [prefix, req] : s.max_versions)
    fmt::print("  requires:    {} (from {})\n", req.tag.str(), req.file);
  fmt::print("  symbols:     {} defined, {} undefined\n", s.defined_symbols,
             s.undefined_symbols);
}

}  // namespace

int run_inspect(const std::vector<std::string>& args) {
  bool json = false;
  std::vector<std::string> files;
  for (const auto& a : args) {
    if (a == "--json") {
      json = true;
    } else if (a == "-h" || a == "--help") {
      fmt::print("usage: pkgtool inspect FILE... [--json]\n");
      return 0;
    } else if (a.starts_with("-")) {
      usage_error("pkgtool inspect", unexpected_argument(a));
    } else {
      files.push_back(a);
    }
  }
  if (files.empty()) usage_error("pkgtool inspect", "no input files");
  nlohmann::json all = nlohmann::json::array();
  for (const auto& f : files) {
    // Oddities the reader works around are reported, not fatal.
    auto warning = [&](std::string_view m) {
      fmt::print(stderr, "warning: {}: {}\n", f, m);
    };
    // The JSON schema is the library's (libpkg/abi/inspect.hpp), shared
    // with Python's libpkg.inspect.
    if (json) {
      all.push_back(
          nlohmann::json::parse(libpkg::abi::inspect_json(f, warning, -1)));
    } else if (libpkg::abi::is_macho_file(f)) {
      print_macho_summary(
          nlohmann::json::parse(libpkg::abi::inspect_json(f, {}, -1)));
    } else {
      libpkg::elf::ElfReadOptions options;
      options.warning = warning;
      print_text(
          libpkg::abi::summarize(libpkg::elf::ElfFile::open(f, options)));
    }
  }
  if (json) fmt::print("{}\n", all.dump(2));
  return 0;
}

}  // namespace pkgtool
