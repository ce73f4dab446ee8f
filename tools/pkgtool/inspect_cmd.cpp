// SPDX-License-Identifier: BSD-3-Clause
// `pkgtool inspect FILE... [--json]`: ELF files here, Mach-O files through
// macho_inspect_cmd.cpp.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "libpkg/abi/inspect.hpp"
#include "libpkg/base/error.hpp"
#include "macho_inspect.hpp"

namespace pkgtool {

namespace {

nlohmann::json opt(const std::optional<std::string>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

nlohmann::json to_json(const libpkg::abi::ElfSummary& s) {
  nlohmann::json j;
  j["file"] = s.file;
  j["class"] = s.elf_class;
  j["endian"] = s.endian;
  j["machine"] = s.machine;
  j["osabi"] = s.osabi;
  j["type"] = s.type;
  j["interpreter"] = opt(s.interpreter);
  j["soname"] = opt(s.soname);
  j["needed"] = s.needed;
  j["rpath"] = opt(s.rpath);
  j["runpath"] = opt(s.runpath);
  j["flags"] = s.flags;
  j["flags_1"] = s.flags_1;
  j["build_id"] = opt(s.build_id);
  j["isa_level"] = opt(s.isa_level);
  nlohmann::json maxv = nlohmann::json::object();
  for (const auto& [prefix, req] : s.max_versions)
    maxv[prefix] = {{"version", req.tag.version()},
                    {"tag", req.tag.str()},
                    {"from", req.file}};
  j["max_versions"] = maxv;
  nlohmann::json needs = nlohmann::json::array();
  for (const auto& n : s.version_needs) {
    nlohmann::json versions = nlohmann::json::array();
    for (const auto& v : n.versions) versions.push_back(std::string(v.name));
    needs.push_back({{"file", std::string(n.file)}, {"versions", versions}});
  }
  j["version_needs"] = needs;
  j["version_defs"] = s.version_defs;
  j["symbols"] = {{"defined", s.defined_symbols},
                  {"undefined", s.undefined_symbols}};
  return j;
}

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
      throw libpkg::Error(libpkg::Errc::usage, "",
                          fmt::format("inspect: unknown option '{}'", a));
    } else {
      files.push_back(a);
    }
  }
  if (files.empty())
    throw libpkg::Error(libpkg::Errc::usage, "", "inspect: no input files");
  nlohmann::json all = nlohmann::json::array();
  for (const auto& f : files) {
    if (looks_like_macho(f)) {
      auto summary = macho_summary(f);
      if (json)
        all.push_back(summary);
      else
        print_macho_summary(summary);
      continue;
    }
    auto elf = libpkg::elf::ElfFile::open(f);
    auto summary = libpkg::abi::summarize(elf);
    if (json)
      all.push_back(to_json(summary));
    else
      print_text(summary);
  }
  if (json) fmt::print("{}\n", all.dump(2));
  return 0;
}

}  // namespace pkgtool
