// SPDX-License-Identifier: BSD-3-Clause
// ElfFile accessors on well-formed images of every class and byte order,
// with and without section headers.
#include "libpkg/elf/view.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "test_support.hpp"

namespace libpkg::elf::testing {
namespace {

template <typename E>
class ViewTest : public ::testing::Test {
 protected:
  void build(const ElfSpec& spec) {
    image_ = build_elf<E>(spec, &layout_);
    elf_.emplace(view_of(image_));
  }
  const ElfFile& elf() const { return *elf_; }

  std::vector<u8> image_;
  Layout layout_;
  std::optional<ElfFile> elf_;
};
TYPED_TEST_SUITE(ViewTest, AllElfTypes, ElfTypeNames);

const Symbol* find(const std::vector<Symbol>& syms, std::string_view name) {
  for (const auto& s : syms)
    if (s.name == name) return &s;
  return nullptr;
}

TYPED_TEST(ViewTest, Header) {
  ElfSpec spec = full_spec();
  spec.entry = 0x401020;
  spec.osabi = ELFOSABI_GNU;
  spec.machine = EM_AARCH64;
  spec.type = ET_EXEC;
  this->build(spec);
  const ElfFile& elf = this->elf();
  EXPECT_EQ(elf.is_64(), TypeParam::is_64);
  EXPECT_EQ(elf.is_little_endian(), TypeParam::is_le);
  EXPECT_EQ(elf.osabi(), ELFOSABI_GNU);
  EXPECT_EQ(elf.type(), ET_EXEC);
  EXPECT_EQ(elf.machine(), EM_AARCH64);
  EXPECT_EQ(elf.machine_name(), "aarch64");
  EXPECT_EQ(elf.entry(), 0x401020u);
  EXPECT_EQ(elf.name(), "test.so");
  EXPECT_EQ(elf.bytes().size(), this->image_.size());
  EXPECT_EQ(elf.mapped_file(), nullptr);
  EXPECT_TRUE(ElfFile::has_elf_magic(this->image_));
}

TYPED_TEST(ViewTest, ProgramHeaders) {
  this->build(full_spec());
  const Layout& l = this->layout_;
  auto ph = this->elf().program_headers();
  ASSERT_EQ(ph.size(), l.phnum);
  std::vector<u32> types;
  for (const auto& p : ph) types.push_back(p.type);
  EXPECT_EQ(types,
            (std::vector<u32>{PT_PHDR, PT_INTERP, PT_LOAD, PT_LOAD, PT_DYNAMIC,
                              PT_NOTE, PT_NOTE, PT_GNU_STACK}));
  for (u32 i = 0; i < ph.size(); ++i) EXPECT_EQ(ph[i].index, i);
  const ProgramHeader& rw = ph[3];
  EXPECT_EQ(rw.offset, l.rw_offset);
  EXPECT_EQ(rw.vaddr, Layout::kBase + Layout::kRwBias + l.rw_offset);
  EXPECT_EQ(rw.paddr, rw.vaddr);
  EXPECT_EQ(rw.memsz, rw.filesz + 0x100);
  EXPECT_EQ(rw.flags, PF_R | PF_W);
  EXPECT_EQ(rw.align, 0x1000u);
  EXPECT_EQ(ph[4].offset, l.dynamic);
  EXPECT_EQ(ph[6].align, TypeParam::is_64 ? 8u : 4u);
}

TYPED_TEST(ViewTest, Sections) {
  this->build(full_spec());
  auto secs = this->elf().sections();
  std::vector<std::string_view> names;
  for (const auto& s : secs) names.push_back(s.name);
  EXPECT_EQ(names,
            (std::vector<std::string_view>{
                "", ".interp", ".note.gnu.build-id", ".note.gnu.property",
                ".hash", ".gnu.hash", ".dynsym", ".dynstr", ".gnu.version",
                ".gnu.version_r", ".gnu.version_d", ".dynamic", ".shstrtab"}));
  auto dynstr = this->elf().section(".dynstr");
  ASSERT_TRUE(dynstr.has_value());
  EXPECT_EQ(dynstr->index, 7u);
  EXPECT_EQ(dynstr->type, SHT_STRTAB);
  EXPECT_EQ(dynstr->offset, this->layout_.dynstr);
  EXPECT_EQ(dynstr->size, this->layout_.dynstr_size);
  EXPECT_EQ(dynstr->addr, Layout::kBase + this->layout_.dynstr);
  EXPECT_EQ(dynstr->flags, SHF_ALLOC);
  auto dynsym = this->elf().section(".dynsym");
  ASSERT_TRUE(dynsym.has_value());
  EXPECT_EQ(dynsym->link, 7u);
  EXPECT_EQ(dynsym->info, 1u);
  EXPECT_EQ(dynsym->entsize, sizeof(Sym<TypeParam>));
  EXPECT_EQ(dynsym->addralign, TypeParam::is_64 ? 8u : 4u);
  EXPECT_FALSE(this->elf().section(".text").has_value());
}

TYPED_TEST(ViewTest, DynamicEntries) {
  this->build(full_spec());
  const ElfFile& elf = this->elf();
  EXPECT_TRUE(elf.has_dynamic());
  auto dyn = elf.dynamic();
  ASSERT_EQ(dyn.size(), this->layout_.dynamic_count - 1);  // up to DT_NULL
  EXPECT_EQ(dyn[0].tag, DT_NEEDED);
  EXPECT_EQ(dyn[0].value, this->layout_.strings.at("libm.so.6"));
  EXPECT_EQ(dyn.back().tag, DT_FLAGS_1);
  for (u32 i = 0; i < dyn.size(); ++i) EXPECT_EQ(dyn[i].index, i);
  auto strtab = std::find_if(dyn.begin(), dyn.end(), [](const DynamicEntry& e) {
    return e.tag == DT_STRTAB;
  });
  ASSERT_NE(strtab, dyn.end());
  EXPECT_EQ(strtab->value, Layout::kBase + this->layout_.dynstr);

  EXPECT_EQ(elf.needed(),
            (std::vector<std::string_view>{"libm.so.6", "libc.so.6"}));
  EXPECT_EQ(elf.soname(), "libdemo.so.1");
  EXPECT_EQ(elf.runpath(), "$ORIGIN/../lib");
  EXPECT_FALSE(elf.rpath().has_value());
  EXPECT_EQ(elf.dt_flags(), u64{DF_BIND_NOW});
  EXPECT_EQ(elf.dt_flags_1(), u64{DF_1_NOW | DF_1_NODELETE});
  EXPECT_EQ(elf.interpreter(), "/lib64/ld-linux-x86-64.so.2");
}

TYPED_TEST(ViewTest, RpathAndRunpathTogether) {
  ElfSpec spec;
  spec.rpath = "/opt/a:/opt/b";
  spec.runpath = "$ORIGIN";
  spec.needed = {"libx.so"};
  this->build(spec);
  EXPECT_EQ(this->elf().rpath(), "/opt/a:/opt/b");
  EXPECT_EQ(this->elf().runpath(), "$ORIGIN");
  EXPECT_FALSE(this->elf().soname().has_value());
  EXPECT_FALSE(this->elf().interpreter().has_value());
  EXPECT_EQ(this->elf().dt_flags(), 0u);
  EXPECT_FALSE(this->elf().build_id().has_value());
  EXPECT_FALSE(this->elf().x86_isa_needed().has_value());
}

TYPED_TEST(ViewTest, EmptyStringsAndSharedSuffixes) {
  ElfSpec spec;
  spec.runpath = "";
  spec.needed = {"libfoo.so.1"};
  spec.extra_strings = {"xlibfoo.so.1"};
  this->build(spec);
  // Point DT_NEEDED into the middle of the longer string: "libfoo.so.1" is a
  // suffix of "xlibfoo.so.1", which linkers use to share storage.
  auto& d = at<Dyn<TypeParam>>(this->image_, this->layout_.dyn.at(DT_NEEDED));
  d.d_val = this->layout_.strings.at("xlibfoo.so.1") + 1;
  EXPECT_EQ(this->elf().needed(), std::vector<std::string_view>{"libfoo.so.1"});
  EXPECT_EQ(this->elf().runpath(), "");
}

TYPED_TEST(ViewTest, DynamicSymbols) {
  this->build(full_spec());
  const ElfFile& elf = this->elf();
  EXPECT_EQ(elf.dynamic_symbol_count(), 10u);
  auto syms = elf.dynamic_symbols();
  ASSERT_EQ(syms.size(), 9u);
  for (u32 i = 0; i < syms.size(); ++i) EXPECT_EQ(syms[i].index, i + 1);

  const Symbol* printf = find(syms, "printf");
  ASSERT_NE(printf, nullptr);
  EXPECT_FALSE(printf->is_defined());
  EXPECT_EQ(printf->version, "GLIBC_2.2.5");
  EXPECT_EQ(printf->version_file, "libc.so.6");
  EXPECT_EQ(printf->bind, STB_GLOBAL);
  EXPECT_EQ(printf->type, STT_FUNC);

  const Symbol* exp = find(syms, "exp");
  ASSERT_NE(exp, nullptr);
  EXPECT_EQ(exp->version, "GLIBC_2.29");
  EXPECT_EQ(exp->version_file, "libm.so.6");

  const Symbol* gmon = find(syms, "__gmon_start__");
  ASSERT_NE(gmon, nullptr);
  EXPECT_EQ(gmon->bind, STB_WEAK);
  EXPECT_EQ(gmon->type, STT_NOTYPE);
  EXPECT_EQ(gmon->version, "");  // VER_NDX_LOCAL

  const Symbol* run = find(syms, "demo_run");
  ASSERT_NE(run, nullptr);
  EXPECT_TRUE(run->is_defined());
  EXPECT_EQ(run->shndx, 11);
  EXPECT_EQ(run->value, 0x1200u);
  EXPECT_EQ(run->size, 17u);
  EXPECT_EQ(run->version, "DEMO_2.0");
  EXPECT_EQ(run->version_file, "");
  EXPECT_FALSE(run->version_hidden);

  const Symbol* old = find(syms, "demo_old");
  ASSERT_NE(old, nullptr);
  EXPECT_EQ(old->version, "DEMO_1.0");
  EXPECT_TRUE(old->version_hidden);

  const Symbol* table = find(syms, "demo_table");
  ASSERT_NE(table, nullptr);
  EXPECT_EQ(table->type, STT_OBJECT);
  EXPECT_EQ(table->visibility, STV_DEFAULT);

  const Symbol* cxx = find(syms, "_ZN4demo3runEv");
  ASSERT_NE(cxx, nullptr);
  EXPECT_EQ(cxx->version, "");  // VER_NDX_GLOBAL
  EXPECT_EQ(demangle(cxx->name), "demo::run()");

  // for_each visits the same symbols in the same order.
  std::vector<std::string_view> names;
  elf.for_each_dynamic_symbol(
      [&](const Symbol& s) { names.push_back(s.name); });
  ASSERT_EQ(names.size(), syms.size());
  for (size_t i = 0; i < names.size(); ++i) EXPECT_EQ(names[i], syms[i].name);
}

TYPED_TEST(ViewTest, VersionNeeds) {
  this->build(full_spec());
  auto needs = this->elf().version_needs();
  ASSERT_EQ(needs.size(), 2u);
  EXPECT_EQ(needs[0].file, "libc.so.6");
  ASSERT_EQ(needs[0].versions.size(), 2u);
  EXPECT_EQ(needs[0].versions[0].name, "GLIBC_2.2.5");
  EXPECT_EQ(needs[0].versions[0].hash, sysv_hash("GLIBC_2.2.5"));
  EXPECT_EQ(needs[0].versions[0].other, 3);
  EXPECT_EQ(needs[0].versions[1].name, "GLIBC_2.34");
  EXPECT_EQ(needs[0].versions[1].other, 4);
  EXPECT_EQ(needs[1].file, "libm.so.6");
  ASSERT_EQ(needs[1].versions.size(), 1u);
  EXPECT_EQ(needs[1].versions[0].name, "GLIBC_2.29");
  EXPECT_EQ(needs[1].versions[0].flags, VER_FLG_WEAK);
}

TYPED_TEST(ViewTest, VersionDefs) {
  this->build(full_spec());
  auto defs = this->elf().version_defs();
  ASSERT_EQ(defs.size(), 3u);
  EXPECT_EQ(defs[0].index, 1);
  EXPECT_EQ(defs[0].flags, VER_FLG_BASE);
  EXPECT_EQ(defs[0].names, std::vector<std::string_view>{"libdemo.so.1"});
  EXPECT_EQ(defs[1].index, 2);
  EXPECT_EQ(defs[1].names, std::vector<std::string_view>{"DEMO_1.0"});
  EXPECT_EQ(defs[2].index, 6);
  EXPECT_EQ(defs[2].names,
            (std::vector<std::string_view>{"DEMO_2.0", "DEMO_1.0"}));
}

TYPED_TEST(ViewTest, Notes) {
  this->build(full_spec());
  EXPECT_EQ(this->elf().build_id(), "deadbeef0123456789abcdef0011223344556677");
  auto isa = this->elf().x86_isa_needed();
  ASSERT_TRUE(isa.has_value());
  EXPECT_EQ(*isa,
            u32{GNU_PROPERTY_X86_ISA_1_BASELINE | GNU_PROPERTY_X86_ISA_1_V2});
  EXPECT_EQ(x86_isa_level_name(*isa), "x86-64-v2");
}

TYPED_TEST(ViewTest, NotesFromSectionsWhenThereIsNoPtNote) {
  this->build(full_spec());
  // Turn the PT_NOTE entries into PT_NULL; SHT_NOTE sections remain.
  for (int i = 0; i < 2; ++i)
    at<Phdr<TypeParam>>(this->image_, this->layout_.phdr_of(PT_NOTE, i))
        .p_type = PT_NULL;
  EXPECT_EQ(this->elf().build_id(), "deadbeef0123456789abcdef0011223344556677");
  EXPECT_EQ(this->elf().x86_isa_needed(), 3u);
}

TYPED_TEST(ViewTest, VaddrToOffset) {
  this->build(full_spec());
  const Layout& l = this->layout_;
  EXPECT_EQ(this->elf().vaddr_to_offset(l.vaddr(l.dynstr)), l.dynstr);
  EXPECT_EQ(this->elf().vaddr_to_offset(l.vaddr(l.dynamic) + 8), l.dynamic + 8);
  EXPECT_EQ(this->elf().vaddr_to_offset(Layout::kBase), 0u);
  EXPECT_FALSE(this->elf().vaddr_to_offset(0x10).has_value());
  // Inside the RW segment's memsz but past its filesz (.bss): not in the file.
  u64 rw_end = l.dynamic + l.dynamic_count * sizeof(Dyn<TypeParam>);
  EXPECT_FALSE(this->elf().vaddr_to_offset(l.vaddr(rw_end) + 0x10).has_value());
}

// ---- without section headers ----------------------------------------------

TYPED_TEST(ViewTest, NoSectionHeadersUsesPtDynamic) {
  ElfSpec spec = full_spec();
  spec.section_headers = false;
  this->build(spec);
  const ElfFile& elf = this->elf();
  EXPECT_TRUE(elf.sections().empty());
  EXPECT_FALSE(elf.section(".dynstr").has_value());
  EXPECT_EQ(elf.needed(),
            (std::vector<std::string_view>{"libm.so.6", "libc.so.6"}));
  EXPECT_EQ(elf.soname(), "libdemo.so.1");
  EXPECT_EQ(elf.runpath(), "$ORIGIN/../lib");
  EXPECT_EQ(elf.interpreter(), "/lib64/ld-linux-x86-64.so.2");
  EXPECT_EQ(elf.build_id(), "deadbeef0123456789abcdef0011223344556677");
  EXPECT_EQ(elf.version_needs().size(), 2u);
  EXPECT_EQ(elf.version_defs().size(), 3u);
  const Symbol* printf = nullptr;
  auto syms = elf.dynamic_symbols();
  printf = find(syms, "printf");
  ASSERT_NE(printf, nullptr);
  EXPECT_EQ(printf->version, "GLIBC_2.2.5");
}

TYPED_TEST(ViewTest, SymbolCountFromSysvHash) {
  ElfSpec spec = full_spec();
  spec.section_headers = false;
  spec.hash = HashStyle::sysv;
  this->build(spec);
  EXPECT_EQ(this->elf().dynamic_symbol_count(), 10u);
  EXPECT_EQ(this->elf().dynamic_symbols().size(), 9u);
}

TYPED_TEST(ViewTest, SymbolCountFromGnuHash) {
  ElfSpec spec = full_spec();
  spec.section_headers = false;
  spec.hash = HashStyle::gnu;
  this->build(spec);
  EXPECT_EQ(this->elf().dynamic_symbol_count(), 10u);
  auto syms = this->elf().dynamic_symbols();
  ASSERT_EQ(syms.size(), 9u);
  EXPECT_NE(find(syms, "demo_table"), nullptr);
}

TYPED_TEST(ViewTest, SymbolCountFromGnuHashWithManyBuckets) {
  ElfSpec spec;
  spec.section_headers = false;
  spec.hash = HashStyle::gnu;
  spec.symbols.push_back({"undef", 0, 0, STB_GLOBAL, STT_FUNC, 0, 1});
  for (int i = 0; i < 40; ++i)
    spec.symbols.push_back({"sym" + std::to_string(i), 0x1000u + i, 1,
                            STB_GLOBAL, STT_FUNC, 5, 1});
  this->build(spec);
  EXPECT_EQ(this->elf().dynamic_symbol_count(), 42u);
  EXPECT_EQ(this->elf().dynamic_symbols().size(), 41u);
}

TYPED_TEST(ViewTest, SymbolCountFromGnuHashWithOnlyUndefinedSymbols) {
  ElfSpec spec;
  spec.section_headers = false;
  spec.hash = HashStyle::gnu;
  spec.symbols = {{"a"}, {"b"}, {"c"}};
  this->build(spec);
  EXPECT_EQ(this->elf().dynamic_symbol_count(), 4u);
}

TYPED_TEST(ViewTest, NoHashNoSectionsMeansNoSymbols) {
  ElfSpec spec = full_spec();
  spec.section_headers = false;
  spec.hash = HashStyle::none;
  this->build(spec);
  EXPECT_EQ(this->elf().dynamic_symbol_count(), 0u);
  EXPECT_TRUE(this->elf().dynamic_symbols().empty());
}

TYPED_TEST(ViewTest, NoDynamicSection) {
  ElfSpec spec;
  spec.dynamic = false;
  spec.type = ET_EXEC;
  this->build(spec);
  const ElfFile& elf = this->elf();
  EXPECT_FALSE(elf.has_dynamic());
  EXPECT_TRUE(elf.dynamic().empty());
  EXPECT_TRUE(elf.needed().empty());
  EXPECT_FALSE(elf.soname().has_value());
  EXPECT_EQ(elf.dt_flags_1(), 0u);
  EXPECT_TRUE(elf.version_needs().empty());
}

TYPED_TEST(ViewTest, DynamicFoundThroughSectionWithoutPtDynamic) {
  this->build(full_spec());
  at<Phdr<TypeParam>>(this->image_, this->layout_.phdr_of(PT_DYNAMIC)).p_type =
      PT_NULL;
  EXPECT_TRUE(this->elf().has_dynamic());
  EXPECT_EQ(this->elf().needed().size(), 2u);
}

// Without DT_VERNEED the records are found through .gnu.version_r, whose
// sh_info is the record count (as DT_VERNEEDNUM is); readelf -V honours it.
// The editor relies on this: removing every versioned library drops
// DT_VERNEED/DT_VERNEEDNUM and sets sh_info to 0, leaving the bytes.
TYPED_TEST(ViewTest, VersionNeedsFromSectionUseShInfo) {
  this->build(full_spec());
  at<Dyn<TypeParam>>(this->image_, this->layout_.dyn.at(DT_VERNEED)).d_tag =
      DT_DEBUG;
  at<Dyn<TypeParam>>(this->image_, this->layout_.dyn.at(DT_VERNEEDNUM)).d_tag =
      DT_DEBUG;
  EXPECT_EQ(this->elf().version_needs().size(), 2u);
  auto& sh = at<Shdr<TypeParam>>(this->image_,
                                 this->layout_.shdr.at(".gnu.version_r"));
  sh.sh_info = 1;
  EXPECT_EQ(this->elf().version_needs().size(), 1u);
  sh.sh_info = 0;
  EXPECT_TRUE(this->elf().version_needs().empty());
}

TYPED_TEST(ViewTest, VersionDefsFromSectionUseShInfo) {
  this->build(full_spec());
  at<Dyn<TypeParam>>(this->image_, this->layout_.dyn.at(DT_VERDEF)).d_tag =
      DT_DEBUG;
  at<Dyn<TypeParam>>(this->image_, this->layout_.dyn.at(DT_VERDEFNUM)).d_tag =
      DT_DEBUG;
  EXPECT_EQ(this->elf().version_defs().size(), 3u);
  at<Shdr<TypeParam>>(this->image_, this->layout_.shdr.at(".gnu.version_d"))
      .sh_info = 2;
  EXPECT_EQ(this->elf().version_defs().size(), 2u);
}

TYPED_TEST(ViewTest, MissingStrszFallsBackToDynstrSection) {
  ElfSpec spec = full_spec();
  spec.dt_strsz = false;
  this->build(spec);
  EXPECT_EQ(this->elf().soname(), "libdemo.so.1");
}

TYPED_TEST(ViewTest, DynamicEntriesStopAtFirstNull) {
  ElfSpec spec;
  spec.needed = {"liba.so"};
  spec.spare_dynamic = 3;
  this->build(spec);
  // Put a DT_NEEDED after the terminator: it must not be seen.
  u64 after = this->layout_.dynamic +
              (this->layout_.dynamic_count - 2) * sizeof(Dyn<TypeParam>);
  auto& d = at<Dyn<TypeParam>>(this->image_, after);
  d.d_tag = DT_NEEDED;
  d.d_val = this->layout_.strings.at("liba.so");
  EXPECT_EQ(this->elf().needed().size(), 1u);
  EXPECT_EQ(this->elf().dynamic().size(), this->layout_.dynamic_count - 4);
}

TEST(View, OpenMapsTheFile) {
  auto image = build_elf<Elf64LE>(full_spec());
  auto path = std::filesystem::temp_directory_path() /
              ("libpkg-view-" + std::to_string(::getpid()) + ".so");
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<const char*>(image.data()),
             static_cast<std::streamsize>(image.size()));
  {
    ElfFile elf = ElfFile::open(path);
    EXPECT_EQ(elf.name(), path.string());
    ASSERT_NE(elf.mapped_file(), nullptr);
    EXPECT_EQ(elf.mapped_file()->size(), image.size());
    EXPECT_EQ(elf.soname(), "libdemo.so.1");
    // Copies share the map; string_views stay valid while any copy lives.
    ElfFile copy = elf;
    std::string_view soname = *copy.soname();
    elf = ElfFile(view_of(image));
    EXPECT_EQ(soname, "libdemo.so.1");
  }
  std::filesystem::remove(path);
}

TEST(View, IsaLevelNames) {
  EXPECT_EQ(x86_isa_level_name(0), "");
  EXPECT_EQ(x86_isa_level_name(GNU_PROPERTY_X86_ISA_1_BASELINE),
            "x86-64-baseline");
  EXPECT_EQ(x86_isa_level_name(3), "x86-64-v2");
  EXPECT_EQ(x86_isa_level_name(7), "x86-64-v3");
  EXPECT_EQ(x86_isa_level_name(15), "x86-64-v4");
}

TEST(View, Demangle) {
  EXPECT_EQ(demangle("_ZNSt6vectorIiSaIiEE9push_backERKi"),
            "std::vector<int, std::allocator<int> >::push_back(int const&)");
  EXPECT_EQ(demangle("printf"), "printf");
  EXPECT_EQ(demangle("_Z"), "_Z");  // not valid: returned unchanged
}

}  // namespace
}  // namespace libpkg::elf::testing
