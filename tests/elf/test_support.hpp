// SPDX-License-Identifier: BSD-3-Clause
// Helpers shared by the ELF unit tests: typed-test lists, running every
// accessor, and checking the errors malformed inputs produce.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "elf_builder.hpp"
#include "libpkg/base/error.hpp"
#include "libpkg/elf/view.hpp"

namespace libpkg::elf::testing {

using AllElfTypes = ::testing::Types<Elf32LE, Elf32BE, Elf64LE, Elf64BE>;

struct ElfTypeNames {
  template <typename E>
  static std::string GetName(int) {
    return std::string(E::is_64 ? "Elf64" : "Elf32") + (E::is_le ? "LE" : "BE");
  }
};

inline ByteView view_of(const std::vector<u8>& bytes,
                        std::string name = "test.so") {
  return ByteView(bytes, std::move(name));
}

// Calls every accessor of ElfFile, the way a dumper would.
inline void visit_everything(const ElfFile& elf) {
  elf.is_64();
  elf.is_little_endian();
  elf.osabi();
  elf.type();
  elf.machine();
  elf.entry();
  elf.machine_name();
  elf.program_headers();
  elf.sections();
  elf.section(".dynstr");
  elf.interpreter();
  elf.has_dynamic();
  elf.dynamic();
  elf.needed();
  elf.soname();
  elf.rpath();
  elf.runpath();
  elf.dt_flags();
  elf.dt_flags_1();
  elf.dynamic_symbol_count();
  u64 n = 0;
  elf.for_each_dynamic_symbol([&](const Symbol&) { ++n; });
  elf.dynamic_symbols();
  elf.version_needs();
  elf.version_defs();
  elf.build_id();
  if (auto isa = elf.x86_isa_needed()) x86_isa_level_name(*isa);
  elf.vaddr_to_offset(Layout::kBase);
}

// Expects `f` to throw a libpkg::Error of code format that names `file` and
// an offset in [lo, hi]; returns it.
inline std::optional<Error> expect_format_error(const std::function<void()>& f,
                                                const std::string& file, u64 lo,
                                                u64 hi) {
  try {
    f();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::format) << e.what();
    EXPECT_EQ(e.file(), file) << e.what();
    EXPECT_TRUE(e.offset().has_value()) << e.what();
    if (e.offset()) {
      EXPECT_GE(*e.offset(), lo) << e.what();
      EXPECT_LE(*e.offset(), hi) << e.what();
    }
    return e;
  }
  ADD_FAILURE() << "no libpkg::Error thrown";
  return std::nullopt;
}

inline std::optional<Error> expect_format_error_at(
    const std::function<void()>& f, const std::string& file, u64 offset) {
  return expect_format_error(f, file, offset, offset);
}

}  // namespace libpkg::elf::testing
