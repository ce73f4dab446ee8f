// SPDX-License-Identifier: BSD-3-Clause
#include "libpkg/abi/inspect.hpp"

#include "libpkg/elf/format.hpp"

namespace libpkg::abi {

namespace {
template <size_t N>
std::vector<std::string> bit_names(
    unsigned long long flags,
    const std::pair<unsigned long long, const char*> (&table)[N]) {
  std::vector<std::string> out;
  for (const auto& [bit, name] : table) {
    if (flags & bit) {
      out.emplace_back(name);
      flags &= ~bit;
    }
  }
  if (flags)
    out.push_back("0x" + [&] {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%llx", flags);
      return std::string(buf);
    }());
  return out;
}
}  // namespace

std::vector<std::string> dt_flags_names(unsigned long long flags) {
  using namespace elf;
  static const std::pair<unsigned long long, const char*> kTable[] = {
      {DF_ORIGIN, "ORIGIN"},
      {DF_SYMBOLIC, "SYMBOLIC"},
      {DF_TEXTREL, "TEXTREL"},
      {DF_BIND_NOW, "BIND_NOW"},
      {DF_STATIC_TLS, "STATIC_TLS"}};
  return bit_names(flags, kTable);
}

std::vector<std::string> dt_flags_1_names(unsigned long long flags) {
  using namespace elf;
  static const std::pair<unsigned long long, const char*> kTable[] = {
      {DF_1_NOW, "NOW"},
      {DF_1_GLOBAL, "GLOBAL"},
      {DF_1_GROUP, "GROUP"},
      {DF_1_NODELETE, "NODELETE"},
      {DF_1_LOADFLTR, "LOADFLTR"},
      {DF_1_INITFIRST, "INITFIRST"},
      {DF_1_NOOPEN, "NOOPEN"},
      {DF_1_ORIGIN, "ORIGIN"},
      {DF_1_DIRECT, "DIRECT"},
      {DF_1_INTERPOSE, "INTERPOSE"},
      {DF_1_NODEFLIB, "NODEFLIB"},
      {DF_1_NODUMP, "NODUMP"},
      {DF_1_CONFALT, "CONFALT"},
      {DF_1_ENDFILTEE, "ENDFILTEE"},
      {DF_1_DISPRELDNE, "DISPRELDNE"},
      {DF_1_DISPRELPND, "DISPRELPND"},
      {DF_1_NODIRECT, "NODIRECT"},
      {DF_1_NOHDR, "NOHDR"},
      {DF_1_EDITED, "EDITED"},
      {DF_1_NORELOC, "NORELOC"},
      {DF_1_SYMINTPOSE, "SYMINTPOSE"},
      {DF_1_GLOBAUDIT, "GLOBAUDIT"},
      {DF_1_SINGLETON, "SINGLETON"},
      {DF_1_PIE, "PIE"}};
  return bit_names(flags, kTable);
}

ElfSummary summarize(const elf::ElfFile& elf) {
  ElfSummary s;
  s.file = elf.name();
  s.elf_class = elf.is_64() ? "ELF64" : "ELF32";
  s.endian = elf.is_little_endian() ? "little" : "big";
  s.machine = elf.machine_name();
  s.osabi = elf::osabi_name(elf.osabi());
  s.type = elf::type_name(elf.type());
  if (auto v = elf.interpreter()) s.interpreter = std::string(*v);
  if (auto v = elf.soname()) s.soname = std::string(*v);
  for (auto n : elf.needed()) s.needed.emplace_back(n);
  if (auto v = elf.rpath()) s.rpath = std::string(*v);
  if (auto v = elf.runpath()) s.runpath = std::string(*v);
  s.flags = dt_flags_names(elf.dt_flags());
  s.flags_1 = dt_flags_1_names(elf.dt_flags_1());
  s.build_id = elf.build_id();
  if (elf.machine() == elf::EM_X86_64 || elf.machine() == elf::EM_386) {
    if (auto isa = elf.x86_isa_needed())
      s.isa_level = elf::x86_isa_level_name(*isa);
  }
  s.max_versions = max_required_versions(elf);
  s.version_needs = elf.version_needs();
  for (const auto& d : elf.version_defs())
    if (!(d.flags & elf::VER_FLG_BASE) && !d.names.empty())
      s.version_defs.emplace_back(d.names[0]);
  elf.for_each_dynamic_symbol([&](const elf::Symbol& sym) {
    if (sym.is_defined())
      ++s.defined_symbols;
    else if (!sym.name.empty())
      ++s.undefined_symbols;
  });
  return s;
}

}  // namespace libpkg::abi
