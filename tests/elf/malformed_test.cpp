// SPDX-License-Identifier: BSD-3-Clause
// Malformed inputs: each must raise libpkg::Error (Errc::format) naming the
// file and an offset near the broken structure. Never a crash, never a hang.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstddef>
#include <random>

#include "test_support.hpp"

namespace libpkg::elf::testing {
namespace {

template <typename E>
class MalformedTest : public ::testing::Test {
 protected:
  void build(const ElfSpec& spec = full_spec()) {
    image_ = build_elf<E>(spec, &l_);
  }
  ElfFile open() const { return ElfFile(view_of(image_)); }
  Ehdr<E>& ehdr() { return at<Ehdr<E>>(image_, 0); }
  Phdr<E>& phdr(u32 type, int nth = 0) {
    return at<Phdr<E>>(image_, l_.phdr_of(type, nth));
  }
  Dyn<E>& dyn(i64 tag) { return at<Dyn<E>>(image_, l_.dyn.at(tag)); }
  Shdr<E>& shdr(const std::string& name) {
    return at<Shdr<E>>(image_, l_.shdr.at(name));
  }

  // Expects `f(open())` to fail with an offset in [lo, hi].
  template <typename F>
  std::optional<Error> fails(F f, u64 lo, u64 hi) {
    return expect_format_error([&] { f(open()); }, "test.so", lo, hi);
  }
  template <typename F>
  std::optional<Error> fails_at(F f, u64 offset) {
    return fails(f, offset, offset);
  }

  // Index of the first program header of `type` / of the section `name`.
  u64 phdr_index(u32 type) const {
    return (l_.phdr_of(type) - l_.phoff) / sizeof(Phdr<E>);
  }
  u64 shdr_index(const std::string& name) const {
    return (l_.shdr.at(name) - l_.shoff) / sizeof(Shdr<E>);
  }
  // The exact refusal for a range past the end of the file (LLVM's form):
  // "WHAT: OFFSET_FIELD 0x.. + SIZE_FIELD 0x.. past end of file (size 0x..)".
  std::string past_end(const std::string& what, const std::string& off_field,
                       u64 off, const std::string& size_field, u64 size) const {
    return fmt::format(
        "{}: {} 0x{:x} + {} 0x{:x} past end of file (size 0x{:x})", what,
        off_field, off, size_field, size, image_.size());
  }

  std::vector<u8> image_;
  Layout l_;
};
TYPED_TEST_SUITE(MalformedTest, AllElfTypes, ElfTypeNames);

#define OFFSET_OF(field) offsetof(Ehdr<TypeParam>, field)

auto construct = [](const ElfFile&) {};

// ---- identification and header --------------------------------------------

TYPED_TEST(MalformedTest, BadMagic) {
  this->build();
  this->image_[3] = 'G';
  auto e = this->fails_at(construct, 0);
  EXPECT_NE(e->message().find("magic"), std::string::npos);
  EXPECT_FALSE(ElfFile::has_elf_magic(this->image_));
}

TYPED_TEST(MalformedTest, TooSmallForMagic) {
  std::vector<u8> tiny = {0x7f, 'E', 'L'};
  expect_format_error_at([&] { ElfFile elf(view_of(tiny)); }, "test.so", 0);
  std::vector<u8> empty;
  expect_format_error_at([&] { ElfFile elf(view_of(empty)); }, "test.so", 0);
}

// A file that starts like ELF but ends inside e_ident is truncated, not "bad
// magic": the message must not send the user looking at the wrong thing.
TYPED_TEST(MalformedTest, TruncatedInsideIdent) {
  std::vector<u8> ident = {
      0x7f, 'E', 'L', 'F', TypeParam::is_64 ? 2 : 1, TypeParam::is_le ? 1 : 2,
      1,    0,   0,   0};
  auto e = expect_format_error_at([&] { ElfFile elf(view_of(ident)); },
                                  "test.so", 0);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->message().find("bad magic"), std::string::npos) << e->what();
}

TYPED_TEST(MalformedTest, TruncatedInsideHeader) {
  this->build();
  for (size_t n = EI_NIDENT; n < sizeof(Ehdr<TypeParam>); ++n) {
    std::vector<u8> head(this->image_.begin(), this->image_.begin() + n);
    expect_format_error_at([&] { ElfFile elf(view_of(head)); }, "test.so", 0);
  }
}

TYPED_TEST(MalformedTest, BadClass) {
  for (u8 c : {0, 3, 0xff}) {
    this->build();
    this->image_[EI_CLASS] = c;
    auto e = this->fails_at(construct, EI_CLASS);
    EXPECT_NE(e->message().find("class"), std::string::npos);
  }
}

TYPED_TEST(MalformedTest, BadDataEncoding) {
  for (u8 d : {0, 3}) {
    this->build();
    this->image_[EI_DATA] = d;
    this->fails_at(construct, EI_DATA);
  }
}

TYPED_TEST(MalformedTest, WrongByteOrderShowsAsBadTableSizes) {
  this->build();
  this->image_[EI_DATA] = TypeParam::is_le ? ELFDATA2MSB : ELFDATA2LSB;
  // e_version reads as 0x01000000 first.
  this->fails_at(construct, OFFSET_OF(e_version));
}

TYPED_TEST(MalformedTest, BadVersion) {
  for (u32 v : {0u, 2u, 0xffffffffu}) {
    this->build();
    this->ehdr().e_version = v;
    auto e = this->fails_at(construct, OFFSET_OF(e_version));
    EXPECT_NE(e->message().find("e_version"), std::string::npos);
  }
}

// ---- program headers -------------------------------------------------------

TYPED_TEST(MalformedTest, PhoffPastEof) {
  this->build();
  u64 off = this->image_.size() + 100;
  this->ehdr().e_phoff = off;
  auto e = this->fails_at(construct, off);
  const u64 n = this->l_.phnum, entsize = sizeof(Phdr<TypeParam>);
  EXPECT_EQ(
      e->message(),
      this->past_end("program header table", "e_phoff", off,
                     fmt::format("e_phnum {} * e_phentsize {} =", n, entsize),
                     n * entsize));
}

TYPED_TEST(MalformedTest, PhdrTableStraddlesEof) {
  this->build();
  u64 off = this->image_.size() - sizeof(Phdr<TypeParam>) - 1;
  this->ehdr().e_phoff = off;
  this->fails_at(construct, off);
}

TYPED_TEST(MalformedTest, PhoffHuge) {
  this->build();
  u64 off = TypeParam::is_64 ? ~u64{0} - 8 : 0xfffffff8;
  this->ehdr().e_phoff = off;
  this->fails_at(construct, off);
}

TYPED_TEST(MalformedTest, WrongPhentsize) {
  for (u16 size : {0, 1, 32, 56, 64, 0xffff}) {
    if (size == sizeof(Phdr<TypeParam>)) continue;
    this->build();
    this->ehdr().e_phentsize = size;
    auto e = this->fails_at(construct, OFFSET_OF(e_phentsize));
    EXPECT_NE(e->message().find("e_phentsize"), std::string::npos);
  }
}

TYPED_TEST(MalformedTest, HugePhnum) {
  this->build();
  this->ehdr().e_phnum = 0xfffe;
  this->fails_at(construct, this->l_.phoff);
}

TYPED_TEST(MalformedTest, PnXnumWithoutSectionHeaders) {
  ElfSpec spec = full_spec();
  spec.section_headers = false;
  this->build(spec);
  this->ehdr().e_phnum = 0xffff;
  this->fails_at(construct, OFFSET_OF(e_phnum));
}

TYPED_TEST(MalformedTest, PnXnumResolvedThroughSectionZero) {
  this->build();
  this->ehdr().e_phnum = 0xffff;
  this->shdr("").sh_info = static_cast<u32>(this->l_.phnum);
  EXPECT_EQ(this->open().program_headers().size(), this->l_.phnum);
  EXPECT_EQ(this->open().needed().size(), 2u);
}

// ---- section headers (read lazily: other accessors keep working) -----------

TYPED_TEST(MalformedTest, ShoffPastEof) {
  this->build();
  u64 off = this->image_.size() + 8;
  this->ehdr().e_shoff = off;
  auto e = this->fails_at([](const ElfFile& f) { f.sections(); }, off);
  const u64 n = this->l_.shnum, entsize = sizeof(Shdr<TypeParam>);
  EXPECT_EQ(
      e->message(),
      this->past_end("section header table", "e_shoff", off,
                     fmt::format("e_shnum {} * e_shentsize {} =", n, entsize),
                     n * entsize));
  EXPECT_EQ(this->open().needed().size(), 2u);
}

TYPED_TEST(MalformedTest, WrongShentsize) {
  this->build();
  this->ehdr().e_shentsize = 7;
  this->fails_at([](const ElfFile& f) { f.sections(); },
                 OFFSET_OF(e_shentsize));
}

TYPED_TEST(MalformedTest, HugeShnumInSectionZero) {
  this->build();
  this->ehdr().e_shnum = 0;  // extended numbering: count in section 0
  this->shdr("").sh_size = TypeParam::is_64 ? ~u64{0} : 0xffffffff;
  this->fails([](const ElfFile& f) { f.sections(); }, 0, this->image_.size());
}

TYPED_TEST(MalformedTest, SectionNamePastShstrtab) {
  this->build();
  this->shdr(".dynsym").sh_name = 0x7fffffff;
  auto sh = this->shdr(".shstrtab");
  u64 lo = sh.sh_offset;
  this->fails([](const ElfFile& f) { f.sections(); }, lo, lo + 0x7fffffff);
}

TYPED_TEST(MalformedTest, ShstrtabPastEof) {
  this->build();
  u64 off = this->image_.size() * 2;
  this->shdr(".shstrtab").sh_offset = off;
  auto e = this->fails_at([](const ElfFile& f) { f.sections(); }, off);
  EXPECT_EQ(e->message(),
            this->past_end(fmt::format("section header {} (the section name "
                                       "string table, e_shstrndx)",
                                       this->shdr_index(".shstrtab")),
                           "sh_offset", off, "sh_size",
                           this->shdr(".shstrtab").sh_size));
}

// ---- dynamic section -------------------------------------------------------

TYPED_TEST(MalformedTest, PtDynamicPastEof) {
  this->build();
  u64 off = this->image_.size() + 0x1000;
  this->phdr(PT_DYNAMIC).p_offset = off;
  this->fails_at([](const ElfFile& f) { f.dynamic(); }, off);
  auto e = this->fails_at([](const ElfFile& f) { f.needed(); }, off);
  EXPECT_EQ(e->message(),
            this->past_end(fmt::format("program header {} (PT_DYNAMIC)",
                                       this->phdr_index(PT_DYNAMIC)),
                           "p_offset", off, "p_filesz",
                           this->phdr(PT_DYNAMIC).p_filesz));
  this->fails_at([](const ElfFile& f) { f.soname(); }, off);
  this->fails_at([](const ElfFile& f) { f.dt_flags(); }, off);
}

TYPED_TEST(MalformedTest, PtDynamicSizeHuge) {
  this->build();
  this->phdr(PT_DYNAMIC).p_filesz = TypeParam::is_64 ? ~u64{0} : 0xffffffff;
  this->fails_at([](const ElfFile& f) { f.needed(); }, this->l_.dynamic);
}

// The error should point at the DT_STRTAB entry that holds the bad address
// (the reader reports offset 0, the start of the file).
TYPED_TEST(MalformedTest, StrtabNotInAnyLoad) {
  this->build();
  this->dyn(DT_STRTAB).d_val = 0x7fff0000;
  auto e = this->fails_at([](const ElfFile& f) { f.needed(); },
                          this->l_.dyn.at(DT_STRTAB));
  ASSERT_TRUE(e.has_value());
  EXPECT_NE(e->message().find("DT_STRTAB"), std::string::npos);
}

TYPED_TEST(MalformedTest, StrszPastEof) {
  this->build();
  this->dyn(DT_STRSZ).d_val = this->image_.size();
  this->fails_at([](const ElfFile& f) { f.needed(); }, this->l_.dynstr);
}

TYPED_TEST(MalformedTest, StringOffsetPastStrsz) {
  this->build();
  u64 bad = this->l_.dynstr_size + 5;
  this->dyn(DT_SONAME).d_val = bad;
  const Layout& l = this->l_;
  auto e = this->fails([](const ElfFile& f) { f.soname(); }, l.dynstr,
                       l.dynstr + l.dynstr_size);
  EXPECT_NE(e->message().find("string"), std::string::npos);
  // The other strings are still readable.
  EXPECT_EQ(this->open().needed().size(), 2u);
}

TYPED_TEST(MalformedTest, StringOffsetWayPastStrsz) {
  this->build();
  this->dyn(DT_NEEDED).d_val = TypeParam::is_64 ? ~u64{0} : 0xffffffff;
  const Layout& l = this->l_;
  this->fails([](const ElfFile& f) { f.needed(); }, l.dynstr,
              l.dynstr + l.dynstr_size);
}

TYPED_TEST(MalformedTest, UnterminatedString) {
  ElfSpec spec = full_spec();
  spec.extra_strings = {"libunterminated.so"};  // the last string in .dynstr
  this->build(spec);
  u64 s = this->l_.strings.at("libunterminated.so");
  ASSERT_EQ(s + 19, this->l_.dynstr_size);
  this->dyn(DT_STRSZ).d_val = this->l_.dynstr_size - 1;  // cut off its NUL
  this->dyn(DT_NEEDED).d_val = s;
  // The table itself is refused (its last byte, where the NUL belongs), not
  // only the string that runs off it: an editor appending after such a
  // table would extend that string instead of adding one.
  auto e = this->fails_at([](const ElfFile& f) { f.needed(); },
                          this->l_.dynstr + this->l_.dynstr_size - 2);
  EXPECT_NE(e->message().find("does not end with a NUL byte"),
            std::string::npos);
}

TYPED_TEST(MalformedTest, NoStringTableAtAll) {
  ElfSpec spec = full_spec();
  spec.section_headers = false;
  this->build(spec);
  this->dyn(DT_STRTAB).d_tag = DT_DEBUG;
  try {
    this->open().needed();
    FAIL() << "no exception";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::format);
    EXPECT_EQ(e.file(), "test.so");
  }
}

TYPED_TEST(MalformedTest, InterpPastEof) {
  this->build();
  u64 off = this->image_.size() + 1;
  this->phdr(PT_INTERP).p_offset = off;
  auto e = this->fails_at([](const ElfFile& f) { f.interpreter(); }, off);
  EXPECT_EQ(e->message(),
            this->past_end(fmt::format("program header {} (PT_INTERP)",
                                       this->phdr_index(PT_INTERP)),
                           "p_offset", off, "p_filesz",
                           this->phdr(PT_INTERP).p_filesz));
}

// ---- symbols
// -----------------------------------------------------------------

TYPED_TEST(MalformedTest, SysvHashCountHuge) {
  ElfSpec spec = full_spec();
  spec.section_headers = false;
  spec.hash = HashStyle::sysv;
  this->build(spec);
  at<U32<TypeParam>>(this->image_, this->l_.hash + 4) = 0xffffffff;
  this->fails_at([](const ElfFile& f) { f.dynamic_symbols(); },
                 this->l_.dynsym);
}

// A GNU hash chain that never sets its end bit: the walk must stop at the
// end of the file. The table is appended at the end so that nothing but
// chain words follows it.
TYPED_TEST(MalformedTest, GnuHashChainWithoutEnd) {
  ElfSpec spec = full_spec();
  spec.section_headers = false;
  spec.hash = HashStyle::gnu;
  this->build(spec);
  u64 word = TypeParam::is_64 ? 8 : 4;
  u64 table = align_up(this->image_.size(), word);
  this->image_.resize(table + 16 + word + 4 + 4 * 1000, 0);
  at<U32<TypeParam>>(this->image_, table) = 1;              // nbuckets
  at<U32<TypeParam>>(this->image_, table + 4) = 1;          // symoffset
  at<U32<TypeParam>>(this->image_, table + 8) = 1;          // bloom words
  at<U32<TypeParam>>(this->image_, table + 16 + word) = 1;  // bucket 0
  for (u64 p = table + 16 + word + 4; p < this->image_.size(); p += 4)
    at<U32<TypeParam>>(this->image_, p) = 2;  // hash values, end bit clear
  auto& load = this->phdr(PT_LOAD, 1);
  load.p_filesz = this->image_.size() - this->l_.rw_offset;
  load.p_memsz = load.p_filesz;
  this->dyn(DT_GNU_HASH).d_val = this->l_.vaddr(table);
  this->fails([](const ElfFile& f) { f.dynamic_symbol_count(); }, table,
              this->image_.size());
}

TYPED_TEST(MalformedTest, GnuHashBucketsPastEof) {
  ElfSpec spec = full_spec();
  spec.section_headers = false;
  spec.hash = HashStyle::gnu;
  this->build(spec);
  at<U32<TypeParam>>(this->image_, this->l_.gnu_hash) = 0xffffffff;  // nbuckets
  this->fails([](const ElfFile& f) { f.dynamic_symbol_count(); },
              this->l_.gnu_hash, this->image_.size());
  this->build(spec);
  at<U32<TypeParam>>(this->image_, this->l_.gnu_hash + 8) =
      0xffffffff;  // bloom
  this->fails([](const ElfFile& f) { f.dynamic_symbol_count(); },
              this->l_.gnu_hash, ~u64{0});
}

TYPED_TEST(MalformedTest, GnuHashBucketIndexPastEof) {
  ElfSpec spec = full_spec();
  spec.section_headers = false;
  spec.hash = HashStyle::gnu;
  this->build(spec);
  u64 kWord = TypeParam::is_64 ? 8 : 4;
  at<U32<TypeParam>>(this->image_, this->l_.gnu_hash + 16 + kWord) = 0x7fffffff;
  this->fails([](const ElfFile& f) { f.dynamic_symbol_count(); },
              this->l_.gnu_hash, ~u64{0});
}

TYPED_TEST(MalformedTest, DynsymSectionSizeHuge) {
  this->build();
  this->shdr(".dynsym").sh_size = TypeParam::is_64 ? u64{1} << 40 : 0xfffffff0;
  this->fails_at([](const ElfFile& f) { f.dynamic_symbols(); },
                 this->l_.dynsym);
}

// Recoverable oddities go to ElfReadOptions::warning (each message once per
// ElfFile) while the reader works around them; without a sink it is quiet.
TYPED_TEST(MalformedTest, UnmappableHashTablesWarn) {
  ElfSpec spec = full_spec();
  spec.section_headers = false;  // the symbol count comes from a hash table
  this->build(spec);
  const u64 expected = this->open().dynamic_symbol_count();
  ASSERT_GT(expected, 1u);
  this->dyn(DT_HASH).d_val = 0x7fff0000;
  std::vector<std::string> warnings;
  ElfReadOptions options;
  options.warning = [&](std::string_view m) { warnings.emplace_back(m); };
  ElfFile f(view_of(this->image_), options);
  // DT_GNU_HASH gives the count instead: every symbol is still read.
  EXPECT_EQ(f.dynamic_symbol_count(), expected);
  EXPECT_EQ(f.dynamic_symbols().size(), expected - 1);
  EXPECT_EQ(warnings, std::vector<std::string>{
                          "DT_HASH 0x7fff0000 is not inside any loadable "
                          "segment: the symbol count comes from DT_GNU_HASH "
                          "instead"});
  // Neither maps: no symbols, and the reason.
  this->dyn(DT_GNU_HASH).d_val = 0x7fff1000;
  warnings.clear();
  ElfFile g(view_of(this->image_), options);
  EXPECT_EQ(g.dynamic_symbol_count(), 0u);
  ASSERT_EQ(warnings.size(), 2u);
  EXPECT_EQ(warnings[1],
            "DT_GNU_HASH 0x7fff1000 is not inside any loadable segment: the "
            "symbol count is unknown and no dynamic symbols are read");
  EXPECT_EQ(ElfFile(view_of(this->image_)).dynamic_symbol_count(), 0u);
}

TYPED_TEST(MalformedTest, InconsistentVersionTablesWarn) {
  this->build();
  std::vector<std::string> warnings;
  ElfReadOptions options;
  options.warning = [&](std::string_view m) { warnings.emplace_back(m); };
  EXPECT_EQ((ElfFile(view_of(this->image_), options).dynamic_symbols().size()),
            this->l_.dynsym_count - 1);
  EXPECT_TRUE(warnings.empty()) << warnings[0];
  // Symbol 1 names version index 0x7ff, which nothing defines.
  at<U16<TypeParam>>(this->image_, this->l_.versym + 2) = 0x7ff;
  ASSERT_TRUE(this->l_.dyn.count(DT_VERNEEDNUM));
  this->dyn(DT_VERNEEDNUM).d_val = this->dyn(DT_VERNEEDNUM).d_val + 5;
  ElfFile f(view_of(this->image_), options);
  auto syms = f.dynamic_symbols();
  ASSERT_EQ(syms.size(), this->l_.dynsym_count - 1);
  EXPECT_EQ(syms[0].version, "");
  const u64 records = f.version_needs().size();
  ASSERT_EQ(warnings.size(), 2u);
  EXPECT_EQ(warnings[0],
            fmt::format("version need records: the count says {} but the "
                        "chain ends after {}",
                        records + 5, records));
  EXPECT_EQ(warnings[1],
            "1 dynamic symbol(s) have a version index that no version need or "
            "definition defines (the first: symbol 1, index 2047); read "
            "without a version");
}

TYPED_TEST(MalformedTest, SymbolNamePastStrtab) {
  this->build();
  at<Sym<TypeParam>>(this->image_, this->l_.dynsym + sizeof(Sym<TypeParam>))
      .st_name = 0x10000;
  this->fails([](const ElfFile& f) { f.dynamic_symbols(); }, this->l_.dynstr,
              ~u64{0});
}

TYPED_TEST(MalformedTest, VersymPastEof) {
  ElfSpec spec = full_spec();
  spec.section_headers = false;  // the file ends with .dynamic
  this->build(spec);
  u64 off = this->image_.size() - 4;
  this->dyn(DT_VERSYM).d_val = this->l_.vaddr(off);
  auto e = this->fails_at([](const ElfFile& f) { f.dynamic_symbols(); }, off);
  const u64 count = this->l_.dynsym_count;
  EXPECT_EQ(
      e->message(),
      this->past_end(fmt::format("symbol version table (DT_VERSYM 0x{:x})",
                                 this->l_.vaddr(off)),
                     "offset", off,
                     fmt::format("{} symbols * 2 bytes =", count), count * 2));
}

// Symbols whose names cannot be looked up because there is no string table
// at all: the error must still name the file.
TYPED_TEST(MalformedTest, SymbolNamesWithoutStringTable) {
  ElfSpec spec;
  spec.symbols = {{"alpha", 0x10, 1, STB_GLOBAL, STT_FUNC, 5, 1}};
  this->build(spec);
  this->dyn(DT_STRTAB).d_tag = DT_DEBUG;
  this->shdr(".dynstr").sh_name = 0;  // no section named .dynstr either
  this->fails([](const ElfFile& f) { f.dynamic_symbols(); }, 0,
              this->image_.size());
}

// ---- symbol versions -------------------------------------------------------

TYPED_TEST(MalformedTest, VnAuxOutside) {
  this->build();
  auto& vn = at<Verneed<TypeParam>>(this->image_, this->l_.verneed);
  vn.vn_aux = 0x100000;
  u64 off = this->l_.verneed + 0x100000;
  this->fails_at([](const ElfFile& f) { f.version_needs(); }, off);
  this->fails_at([](const ElfFile& f) { f.dynamic_symbols(); }, off);
}

TYPED_TEST(MalformedTest, VerneedPastEof) {
  ElfSpec spec = full_spec();
  spec.section_headers = false;  // the file ends with .dynamic
  this->build(spec);
  u64 off = this->image_.size() - 8;
  this->dyn(DT_VERNEED).d_val = this->l_.vaddr(off);
  this->fails_at([](const ElfFile& f) { f.version_needs(); }, off);
}

TYPED_TEST(MalformedTest, VnNextOutside) {
  this->build();
  auto& vn = at<Verneed<TypeParam>>(this->image_, this->l_.verneed);
  vn.vn_next = 0xfffffff0;
  this->fails_at([](const ElfFile& f) { f.version_needs(); },
                 this->l_.verneed + 0xfffffff0);
}

// vn_next can only point forward, so there is no true loop; a chain that keeps
// going (no vn_next == 0, DT_VERNEEDNUM huge) must still end: at the 64 Ki
// record bound or at a range error.
TYPED_TEST(MalformedTest, VnNextRunsThroughGarbage) {
  this->build();
  this->dyn(DT_VERNEEDNUM).d_val = 0xffffffff;
  auto& second = at<Verneed<TypeParam>>(
      this->image_,
      this->l_.verneed +
          at<Verneed<TypeParam>>(this->image_, this->l_.verneed).vn_next);
  second.vn_next = 4;
  auto start = std::chrono::steady_clock::now();
  try {
    this->open().version_needs();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::format);
    EXPECT_EQ(e.file(), "test.so");
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
}

TYPED_TEST(MalformedTest, VernauxNameOutsideStrtab) {
  this->build();
  auto& vn = at<Verneed<TypeParam>>(this->image_, this->l_.verneed);
  auto& va = at<Vernaux<TypeParam>>(this->image_, this->l_.verneed + vn.vn_aux);
  va.vna_name = 0xffff;
  const Layout& l = this->l_;
  this->fails([](const ElfFile& f) { f.version_needs(); }, l.dynstr,
              l.dynstr + l.dynstr_size);
}

TYPED_TEST(MalformedTest, VerneedFileOutsideStrtab) {
  this->build();
  at<Verneed<TypeParam>>(this->image_, this->l_.verneed).vn_file = 0xfffff;
  const Layout& l = this->l_;
  this->fails([](const ElfFile& f) { f.version_needs(); }, l.dynstr,
              l.dynstr + l.dynstr_size);
}

// vna_next smaller than a Vernaux record makes the records overlap. With
// vn_cnt = 0xffff in each of up to 64 Ki Verneed records that share one such
// aux chain, a 1.3 MB file expands into 2^32 aux records (~34 GB of
// offsets). Scaled down here: 16 records x 65535 aux from a ~260 KB file.
// A reader must not report more version records than the file can hold.
TYPED_TEST(MalformedTest, OverlappingVernauxAmplification) {
  ElfSpec spec;
  spec.needed = {"libc.so.6"};
  spec.verneed = {{"libc.so.6", {{"GLIBC_2.2.5", 2}}}};
  this->build(spec);
  constexpr u64 kRecords = 16, kAux = 0xffff;
  u64 vn_start = this->image_.size();
  u64 aux_start = vn_start + kRecords * sizeof(Verneed<TypeParam>);
  this->image_.resize(aux_start + 4 * kAux + 16, 0);
  for (u64 i = 0; i < kRecords; ++i) {
    u64 off = vn_start + i * sizeof(Verneed<TypeParam>);
    auto& vn = at<Verneed<TypeParam>>(this->image_, off);
    vn.vn_version = 1;
    vn.vn_cnt = kAux;
    vn.vn_file = static_cast<u32>(this->l_.strings.at("libc.so.6"));
    vn.vn_aux = static_cast<u32>(aux_start - off);
    vn.vn_next = i + 1 < kRecords ? sizeof(Verneed<TypeParam>) : 0;
  }
  // Every 4 bytes read as a Vernaux: vna_name = 4, vna_next = 4.
  for (u64 p = aux_start; p + 4 <= this->image_.size(); p += 4)
    at<U32<TypeParam>>(this->image_, p) = 4;
  // Point DT_VERNEED at the new records; extend the RW PT_LOAD over them so
  // the address maps (the appended bytes sit after .dynamic).
  auto& load = this->phdr(PT_LOAD, 1);
  load.p_filesz = this->image_.size() - this->l_.rw_offset;
  load.p_memsz = load.p_filesz;
  this->dyn(DT_VERNEED).d_val = this->l_.vaddr(vn_start);
  this->dyn(DT_VERNEEDNUM).d_val = kRecords;

  u64 capacity = this->image_.size() / sizeof(Vernaux<TypeParam>);
  try {
    auto needs = this->open().version_needs();
    u64 total = 0;
    for (const auto& n : needs) total += n.versions.size();
    EXPECT_LE(total, capacity)
        << "version records reported from overlapping bytes";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::format) << e.what();
  }
}

TYPED_TEST(MalformedTest, VdAuxOutside) {
  this->build();
  at<Verdef<TypeParam>>(this->image_, this->l_.verdef).vd_aux = 0x200000;
  this->fails_at([](const ElfFile& f) { f.version_defs(); },
                 this->l_.verdef + 0x200000);
}

TYPED_TEST(MalformedTest, VdNextOutside) {
  this->build();
  at<Verdef<TypeParam>>(this->image_, this->l_.verdef).vd_next = 0x300000;
  this->fails_at([](const ElfFile& f) { f.version_defs(); },
                 this->l_.verdef + 0x300000);
}

// ---- notes
// -------------------------------------------------------------------

TYPED_TEST(MalformedTest, NoteNameSizeOverflows) {
  this->build();
  at<Nhdr<TypeParam>>(this->image_, this->l_.build_id_note).n_namesz =
      0xffffffff;
  auto e = this->fails_at([](const ElfFile& f) { f.build_id(); },
                          this->l_.build_id_note);
  EXPECT_NE(e->message().find("note"), std::string::npos);
}

TYPED_TEST(MalformedTest, NoteDescSizeOverflows) {
  this->build();
  for (u32 size : {0xffffffffu, 0xfffffffcu, 0x21u}) {
    at<Nhdr<TypeParam>>(this->image_, this->l_.build_id_note).n_descsz = size;
    this->fails_at([](const ElfFile& f) { f.build_id(); },
                   this->l_.build_id_note);
  }
}

TYPED_TEST(MalformedTest, NoteSegmentPastEof) {
  this->build();
  u64 off = this->image_.size() - 4;
  this->phdr(PT_NOTE).p_offset = off;
  auto e = this->fails_at([](const ElfFile& f) { f.build_id(); }, off);
  EXPECT_EQ(
      e->message(),
      this->past_end(
          fmt::format("program header {} (PT_NOTE)", this->phdr_index(PT_NOTE)),
          "p_offset", off, "p_filesz", this->phdr(PT_NOTE).p_filesz));
}

TYPED_TEST(MalformedTest, PropertySizeHugeIsSkipped) {
  this->build();
  // The first property claims a huge size: the walk steps past the end of
  // the descriptor without reading out of bounds.
  u64 desc = this->l_.property_note + sizeof(Nhdr<TypeParam>) + 4;
  desc = align_up(desc, TypeParam::is_64 ? 8 : 4);
  at<U32<TypeParam>>(this->image_, desc + 4) = 0xfffffff0;
  EXPECT_FALSE(this->open().x86_isa_needed().has_value());
}

// A property whose value is cut off by n_descsz. The error offset must be the
// value's place in the file (the reader reports it relative to the note
// descriptor).
TYPED_TEST(MalformedTest, PropertyValueCutOff) {
  this->build();
  u64 word = TypeParam::is_64 ? 8 : 4;
  u64 prop = align_up(12, word);
  u64 desc =
      align_up(this->l_.property_note + sizeof(Nhdr<TypeParam>) + 4, word);
  at<Nhdr<TypeParam>>(this->image_, this->l_.property_note).n_descsz =
      static_cast<u32>(prop + 8);
  this->fails_at([](const ElfFile& f) { f.x86_isa_needed(); }, desc + prop + 8);
}

// ---- address translation ---------------------------------------------------

// A PT_LOAD whose p_offset lies beyond the end of the file maps nothing. With
// ELF64 fields p_offset + (vaddr - p_vaddr) wraps around 2^64 and would land
// on unrelated bytes; with ELF32 fields the same layout points past the end
// of the file. Either way the reader must not trust the translation.
TYPED_TEST(MalformedTest, LoadOffsetWrapsAround) {
  using Field = std::conditional_t<TypeParam::is_64, u64, u32>;
  ElfSpec spec = full_spec();
  spec.section_headers = false;
  this->build(spec);
  auto& load = this->phdr(PT_LOAD, 0);
  load.p_offset = static_cast<Field>(~Field{0} - 0xf);  // -0x10
  load.p_vaddr = static_cast<Field>(Layout::kBase - 0x10);
  load.p_filesz = static_cast<Field>(~Field{0} / 2);
  // Nothing, a format error, or an offset past the end of the file (ELF32:
  // no wrap, so the reader's bounds checks refuse it when it is read) — never
  // an offset inside the file.
  try {
    auto off = this->open().vaddr_to_offset(this->l_.vaddr(this->l_.dynstr));
    EXPECT_TRUE(!off || *off >= this->image_.size())
        << "offset 0x" << std::hex << *off << " lands inside the file";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::format);
  }
  // And the tables behind that address are not read from unrelated bytes.
  EXPECT_THROW(this->open().needed(), Error);
}

// ---- systematic: truncation and random corruption ------------------------

TYPED_TEST(MalformedTest, TruncatedAtEveryLength) {
  this->build();
  const u64 full = this->image_.size();
  int failures = 0;
  for (u64 n = 0; n < full; ++n) {
    // A fresh allocation of exactly n bytes, so ASan sees any over-read.
    std::vector<u8> prefix(this->image_.begin(), this->image_.begin() + n);
    try {
      ElfFile elf(view_of(prefix));
      visit_everything(elf);
      // The section headers are last: everything else may succeed only once
      // the loadable part is complete.
      EXPECT_GE(n, this->l_.rw_offset)
          << "accessors succeeded on " << n << " bytes";
    } catch (const Error& e) {
      ++failures;
      ASSERT_EQ(e.code(), Errc::format) << n << ": " << e.what();
      ASSERT_EQ(e.file(), "test.so") << n << ": " << e.what();
      if (e.offset()) {
        ASSERT_LE(*e.offset(), full) << n << ": " << e.what();
      }
    }
  }
  EXPECT_GE(failures, static_cast<int>(this->l_.rw_offset));
}

TYPED_TEST(MalformedTest, RandomByteCorruption) {
  this->build();
  const std::vector<u8> good = this->image_;
  std::mt19937 rng(TypeParam::is_64 * 2 + TypeParam::is_le);
  auto start = std::chrono::steady_clock::now();
  for (int round = 0; round < 3000; ++round) {
    std::vector<u8> bad = good;
    int flips = 1 + static_cast<int>(rng() % 4);
    for (int i = 0; i < flips; ++i) {
      u64 pos = rng() % bad.size();
      switch (rng() % 3) {
        case 0:
          bad[pos] ^= static_cast<u8>(1u << (rng() % 8));
          break;
        case 1:
          bad[pos] = 0xff;
          break;
        default:
          bad[pos] = static_cast<u8>(rng());
          break;
      }
    }
    try {
      ElfFile elf(view_of(bad));
      visit_everything(elf);
    } catch (const Error& e) {
      ASSERT_EQ(e.file(), "test.so") << "round " << round << ": " << e.what();
      ASSERT_TRUE(e.code() == Errc::format || e.code() == Errc::unsupported)
          << "round " << round << ": " << e.what();
    }
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(60));
}

}  // namespace
}  // namespace libpkg::elf::testing
