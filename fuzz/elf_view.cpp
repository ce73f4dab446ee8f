// SPDX-License-Identifier: BSD-3-Clause
// libFuzzer target for the ELF reader: any byte string must either parse or
// fail with libpkg::Error. Anything else (a crash, a sanitizer report, a
// std::exception other than libpkg::Error, an out-of-bounds string_view, a
// hang, an allocation blow-up) is a bug. Every crasher found here becomes a
// byte-array test in tests/elf/regression_test.cpp.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "libpkg/base/bytes.hpp"
#include "libpkg/base/error.hpp"
#include "libpkg/elf/view.hpp"

namespace {

using libpkg::u8;

// Views the reader returns must point into the input (or be empty).
struct Bounds {
  const u8* begin;
  const u8* end;
  void check(std::string_view s) const {
    if (s.empty()) return;
    auto* p = reinterpret_cast<const u8*>(s.data());
    if (p < begin || p + s.size() > end) std::abort();
  }
};

void visit(const libpkg::elf::ElfFile& elf, const Bounds& b) {
  using namespace libpkg::elf;
  elf.entry();
  elf.machine_name();
  for (const ProgramHeader& ph : elf.program_headers())
    elf.vaddr_to_offset(ph.vaddr);
  try {
    for (const SectionHeader& sh : elf.sections()) b.check(sh.name);
    elf.section(".dynstr");
  } catch (const libpkg::Error&) {
    // Section headers are independent of the dynamic-linking view below.
  }
  if (auto interp = elf.interpreter()) b.check(*interp);
  elf.has_dynamic();
  elf.dynamic();
  for (std::string_view s : elf.needed()) b.check(s);
  for (const auto& s : {elf.soname(), elf.rpath(), elf.runpath()})
    if (s) b.check(*s);
  elf.dt_flags();
  elf.dt_flags_1();
  elf.dynamic_symbol_count();
  elf.for_each_dynamic_symbol([&](const Symbol& s) {
    b.check(s.name);
    b.check(s.version);
    b.check(s.version_file);
  });
  for (const VersionNeed& n : elf.version_needs()) {
    b.check(n.file);
    for (const VersionAux& a : n.versions) b.check(a.name);
  }
  for (const VersionDef& d : elf.version_defs())
    for (std::string_view s : d.names) b.check(s);
  elf.build_id();
  if (auto isa = elf.x86_isa_needed()) x86_isa_level_name(*isa);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data,
                                      std::size_t size) {
  // No copy: libFuzzer's buffer is exactly `size` bytes, so ASan reports a
  // read one past the end.
  Bounds bounds{data, data + size};
  try {
    libpkg::elf::ElfFile elf(libpkg::ByteView({data, size}, "fuzz-input"));
    visit(elf, bounds);
  } catch (const libpkg::Error& e) {
    if (e.file() != "fuzz-input") std::abort();  // every error names the file
  }
  return 0;
}
