// SPDX-License-Identifier: BSD-3-Clause
// libFuzzer target for the ELF editor: plan an edit of arbitrary bytes, apply
// the overlay and read the result back. Planning may refuse the input with a
// libpkg::Error; anything else (a crash, a sanitizer report, another
// exception, unbounded growth) is a bug. The edit is chosen from the input
// size, so the ELF seeds stay valid inputs.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "libpkg/base/bytes.hpp"
#include "libpkg/base/error.hpp"
#include "libpkg/elf/editor.hpp"
#include "libpkg/elf/view.hpp"

namespace {

using namespace libpkg::elf;

EditOptions options_for(std::size_t selector) {
  EditOptions o;
  switch (selector % 7) {
    case 0:
      o.rpath_op = RpathOp::set;
      o.rpath = "$ORIGIN";
      break;
    case 1:
      o.rpath_op = RpathOp::set;
      o.rpath = std::string(300, 'r');
      o.rpath_tag = RpathTag::rpath;
      break;
    case 2:
      o.rpath_op = RpathOp::remove;
      break;
    case 3:
      o.add_needed = {"libfuzz.so.1"};
      break;
    case 4:
      o.replace_needed = {{"libc.so.6", "libc-fuzz.so.6"}};
      o.remove_needed = {"libm.so.6"};
      break;
    case 5:
      o.set_interpreter = "/opt/fuzz/lib/ld-linux-x86-64.so.2";
      break;
    default:
      o.set_soname = "libfuzzed-0123abcd.so.1";
      o.rpath_op = RpathOp::add;
      o.rpath = "/opt/a:$ORIGIN";
      break;
  }
  return o;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data,
                                      std::size_t size) {
  std::vector<libpkg::u8> out;
  try {
    ElfFile elf(libpkg::ByteView({data, size}, "fuzz-input"));
    EditPlan plan = plan_edit(elf, options_for(size));
    // Growth is a few tables plus alignment. Executables whose program
    // header table moves may also get a gap up to their highest segment end
    // (for old kernels' AT_PHDR, see editor.cpp place_segment); a corrupt
    // p_vaddr/p_memsz must not turn that into terabytes.
    if (plan.overlay.size() > size + (libpkg::u64{256} << 20)) std::abort();
    out.reserve(plan.overlay.size());
    plan.overlay.for_each_chunk({data, size},
                                [&](std::span<const libpkg::u8> c) {
                                  out.insert(out.end(), c.begin(), c.end());
                                });
    if (out.size() != plan.overlay.size()) std::abort();
  } catch (const libpkg::Error& e) {
    if (e.file() != "fuzz-input") std::abort();
    return 0;
  }
  try {
    ElfFile edited(libpkg::ByteView(out, "fuzz-output"));
    edited.needed();
    edited.runpath();
    edited.rpath();
    edited.soname();
    edited.interpreter();
    edited.dynamic_symbols();
    edited.version_needs();
  } catch (const libpkg::Error&) {
    // Garbage in, garbage out: an input the reader half-accepts may yield an
    // output it rejects. Only crashes matter here.
  }
  return 0;
}
