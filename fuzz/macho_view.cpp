// SPDX-License-Identifier: BSD-3-Clause
// libFuzzer target for the Mach-O reader, its symbol reader (LC_SYMTAB,
// exports trie) and the load-command editor: any
// byte string must either parse (and plan a fixed install_name_tool edit)
// or fail with libpkg::Error naming the input. A crash, a sanitizer report,
// another exception type, a string_view outside the input or a hang is a
// bug; each crasher becomes a byte-array test in tests/macho/.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "libpkg/base/bytes.hpp"
#include "libpkg/base/error.hpp"
#include "libpkg/macho/editor.hpp"
#include "libpkg/macho/symbols.hpp"
#include "libpkg/macho/view.hpp"

namespace {

using libpkg::u8;

struct Bounds {
  const u8* begin;
  const u8* end;
  void check(std::string_view s) const {
    if (s.empty()) return;
    auto* p = reinterpret_cast<const u8*>(s.data());
    if (p < begin || p + s.size() > end) std::abort();
  }
};

void visit(const libpkg::macho::Slice& s, const Bounds& b) {
  using namespace libpkg::macho;
  if (!s.parsed()) return;
  for (const Segment& seg : s.segments()) {
    b.check(seg.name);
    for (const Section& sec : seg.sections) b.check(sec.sectname);
  }
  if (auto id = s.id()) b.check(*id);
  for (const Dylib& d : s.dylibs()) b.check(d.name);
  for (const Rpath& r : s.rpaths()) b.check(r.path);
  s.platform_version();
  s.uuid();
  s.code_signature();
  s.fixup_format();
  s.free_padding();
  // The symbol table and the exports trie (nm -gU): every index and edge is
  // bounds-checked, a trie cycle is an error. Separate try: a bad table must
  // not hide the editor below from the fuzzer.
  try {
    libpkg::macho::defined_external_symbols(s);
  } catch (const libpkg::Error& e) {
    if (!e.file().starts_with("fuzz-input")) std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data,
                                      std::size_t size) {
  Bounds bounds{data, data + size};
  try {
    auto file = libpkg::macho::MachOFile::parse(
        libpkg::ByteView({data, size}, "fuzz-input"));
    for (const auto& s : file.slices()) visit(s, bounds);
    libpkg::macho::EditOptions o;
    o.id = "@rpath/libfuzz.dylib";
    o.changes = {{"/usr/lib/libSystem.B.dylib", "@rpath/libSystem.dylib"}};
    o.add_rpaths = {"@loader_path/../lib"};
    o.delete_all_rpaths = true;
    auto plan = libpkg::macho::plan_edit(file, o);
    // The planned output must parse again.
    std::vector<u8> out;
    plan.overlay.for_each_chunk({data, size}, [&](std::span<const u8> c) {
      out.insert(out.end(), c.begin(), c.end());
    });
    auto again =
        libpkg::macho::MachOFile::parse(libpkg::ByteView(out, "fuzz-input"));
    for (const auto& s : again.slices())
      if (s.parsed()) s.rpaths();
  } catch (const libpkg::Error& e) {
    // Every error names the input (possibly with the slice's arch).
    if (!e.file().starts_with("fuzz-input")) std::abort();
  }
  return 0;
}
