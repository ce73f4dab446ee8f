// SPDX-License-Identifier: BSD-3-Clause
// Inputs found by the fuzzer (fuzz/elf_view.cpp), pinned as byte arrays: each
// must parse or fail with a libpkg::Error naming the file, nothing worse.
// The arrays are the minimised crashers, stored sparsely as runs of bytes
// over zeros.
#include <gtest/gtest.h>

#include <cstdlib>
#include <initializer_list>

#include "libpkg/elf/editor.hpp"
#include "test_support.hpp"

namespace libpkg::elf::testing {
namespace {

struct Run {
  u64 offset;
  std::vector<u8> bytes;
};

std::vector<u8> sparse(u64 size, std::initializer_list<Run> runs) {
  std::vector<u8> out(size, 0);
  for (const Run& r : runs)
    std::copy(r.bytes.begin(), r.bytes.end(), out.begin() + r.offset);
  return out;
}

void expect_clean(const std::vector<u8>& bytes) {
  try {
    ElfFile elf(view_of(bytes, "crash.bin"));
    visit_everything(elf);
  } catch (const Error& e) {
    EXPECT_EQ(e.file(), "crash.bin") << e.what();
  }
}

// crash-9c736987: ELF32 big-endian whose only section header is an
// SHT_DYNSYM with sh_offset 0, so "symbols" are read from the ELF header and
// one has st_name 0x500; there is no string table at all. The error
// ("symbol name starts past the end of the data") carried no file name:
// for_each_dynamic_symbol looks names up in a default-constructed ByteView.
TEST(FuzzRegression, SymbolNameWithoutStringTable) {
  expect_clean(sparse(1800, {{0x0, {0x7f, 0x45, 0x4c, 0x46, 0x01, 0x02}},
                             {0x17, {0x01}},
                             {0x22, {0x05}},
                             {0x2f, {0x28, 0x00, 0x0d}},
                             {0x647, {0x0b}},
                             {0x657, {0xa0}}}));
}

// ---- fuzz/elf_edit.cpp
// -------------------------------------------------------

// Plans `options` on `bytes`: a libpkg::Error is fine, a crash is not, and the
// output may not be absurdly larger than the input.
void expect_sane_edit(const std::vector<u8>& bytes,
                      const EditOptions& options) {
  try {
    ElfFile elf(view_of(bytes, "crash.bin"));
    EditPlan plan = plan_edit(elf, options);
    if (plan.overlay.size() >= bytes.size() + 0x1000000) {
      ADD_FAILURE() << "output of 0x" << std::hex << plan.overlay.size()
                    << " bytes";
      return;  // don't try to stream it
    }
    std::vector<u8> out;
    plan.overlay.for_each_chunk(bytes, [&](std::span<const u8> c) {
      out.insert(out.end(), c.begin(), c.end());
    });
  } catch (const Error& e) {
    EXPECT_EQ(e.file(), "crash.bin") << e.what();
  }
}

// crash-1d039f64 (ELF64 big-endian): a PT_INTERP whose string is longer than
// its p_filesz, moved to make room for a program header. The editor copies
// the cstring (unbounded by p_filesz) into a p_filesz-sized buffer:
// heap-buffer-overflow in Layout::run() (editor.cpp, "The interpreter").
// Detected under -DLIBPKG_SANITIZE=ON; a plain build may corrupt the heap.
TEST(FuzzRegression, EditorInterpreterOverflow) {
  EditOptions o;  // selector 4 of fuzz/elf_edit.cpp
  o.replace_needed = {{"libc.so.6", "libc-fuzz.so.6"}};
  o.remove_needed = {"libm.so.6"};
  // In a child process, so heap corruption cannot spread to other tests.
  EXPECT_EXIT(
      {
        expect_sane_edit(
            sparse(1558,
                   {{0x0, {0x7f, 0x45, 0x4c, 0x46, 0x02, 0x02}},
                    {0x17, {0x01}},
                    {0x27, {0x40}},
                    {0x37, {0x38, 0x00, 0x08}},
                    {0x43, {0x06}},
                    {0x7b, {0x03}},
                    {0x86, {0x02}},
                    {0x9f, {0x1c}},
                    {0xb3, {0x01}},
                    {0xc5, {0x40}},
                    {0xd6, {0x05}},
                    {0xeb, {0x01}},
                    {0x123, {0x02}},
                    {0x12e, {0x05, 0x10}},
                    {0x146, {0x01}},
                    {0x15b, {0x04}},
                    {0x193, {0x04}},
                    {0x1cb, {0x51}},
                    {0x200, {0x2f, 0x6c, 0x69, 0x62, 0x36, 0x34, 0x2f, 0x6c,
                             0x64, 0x2d, 0x6c, 0x69, 0x6e, 0x75, 0x78, 0x2d,
                             0x78, 0x38, 0x36, 0x2d, 0x36, 0x34, 0x2e, 0x73,
                             0x6f, 0x0b, 0x3a, 0x2f, 0x6f}},
                    {0x3ab,
                     {0x6c, 0x69, 0x62, 0x63, 0x2e, 0x73, 0x6f, 0x2e, 0x36}},
                    {0x513, {0x14}},
                    {0x523, {0xb5}},
                    {0x537, {0x01}},
                    {0x547, {0x01}},
                    {0x54f, {0x0b}},
                    {0x557, {0x0e}},
                    {0x567, {0x1d}},
                    {0x577, {0x04}},
                    {0x587, {0x05}},
                    {0x58d, {0x40, 0x03, 0xa0}},
                    {0x597, {0x06}},
                    {0x5a7, {0x0a}},
                    {0x5af, {0xc7}}}),
            o);
        std::exit(::testing::Test::HasFailure() ? 1 : 0);
      },
      ::testing::ExitedWithCode(0), "");
}

// crash-fd31f3aa (ELF64 little-endian): a PT_LOAD with p_memsz 0x24 << 40.
// Moving the program header table places the new segment at file offset
// max(p_vaddr + p_memsz) - bias (for pre-5.18 kernels' AT_PHDR), so the
// planned output is ~2^45 bytes.
TEST(FuzzRegression, EditorHugeSegmentOffset) {
  EditOptions o;  // selector 5 of fuzz/elf_edit.cpp
  o.set_interpreter = "/opt/fuzz/lib/ld-linux-x86-64.so.2";
  expect_sane_edit(sparse(516, {{0x0, {0x7f, 0x45, 0x4c, 0x46, 0x02, 0x01}},
                                {0x14, {0x01}},
                                {0x20, {0x40}},
                                {0x36, {0x38, 0x00, 0x08}},
                                {0x40, {0x06}},
                                {0x78, {0x03}},
                                {0xb0, {0x01}},
                                {0xdd, {0x24}},
                                {0xe9, {0x01}},
                                {0x121, {0x02}},
                                {0x159, {0x04}},
                                {0x193, {0x4e}},
                                {0x1cb, {0x4e}}}),
                   o);
}

}  // namespace
}  // namespace libpkg::elf::testing
