// SPDX-License-Identifier: BSD-3-Clause
// The ELF editor on images built in memory: plan an edit, apply the overlay
// to a buffer, reparse, and check both the requested change and the
// invariants a loader, strip and readelf rely on.
#include "libpkg/elf/editor.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>

#include "test_support.hpp"

namespace libpkg::elf::testing {
namespace {

std::vector<u8> apply_overlay(const std::vector<u8>& input,
                              const Overlay& overlay) {
  std::vector<u8> out;
  out.reserve(overlay.size());
  overlay.for_each_chunk(input, [&](std::span<const u8> chunk) {
    out.insert(out.end(), chunk.begin(), chunk.end());
  });
  return out;
}

// Everything about a file that an edit of its dynamic entries must preserve.
struct Snapshot {
  std::vector<std::string> symbols;  // name@version:file
  std::vector<std::string> needs;    // file:version
  std::vector<std::string> defs;
  std::optional<std::string> build_id;
  std::optional<u32> isa;
};

// `removed`: libraries whose DT_NEEDED is removed. The editor drops their
// version-needs records too (ld.so aborts on a record without its library)
// and makes the symbols that used those versions unversioned (global).
Snapshot snapshot(const ElfFile& elf,
                  const std::set<std::string>& removed = {}) {
  Snapshot s;
  for (const Symbol& sym : elf.dynamic_symbols()) {
    bool dropped = removed.contains(std::string(sym.version_file));
    s.symbols.push_back(std::string(sym.name) + "@" +
                        (dropped ? "" : std::string(sym.version)) +
                        (sym.version_hidden ? "(hidden)" : "") + ":" +
                        std::to_string(sym.value));
  }
  for (const VersionNeed& n : elf.version_needs()) {
    if (removed.contains(std::string(n.file))) continue;
    for (const VersionAux& a : n.versions)
      s.needs.push_back(std::string(a.name) + "#" + std::to_string(a.other));
  }
  for (const VersionDef& d : elf.version_defs())
    for (std::string_view n : d.names) s.defs.push_back(std::string(n));
  s.build_id = elf.build_id();
  s.isa = elf.x86_isa_needed();
  return s;
}

bool operator==(const Snapshot& a, const Snapshot& b) {
  return a.symbols == b.symbols && a.needs == b.needs && a.defs == b.defs &&
         a.build_id == b.build_id && a.isa == b.isa;
}

template <typename E>
class EditorTest : public ::testing::Test {
 protected:
  void build(const ElfSpec& spec = full_spec()) {
    input_ = build_elf<E>(spec, &l_);
  }
  // Plans `o` on the current input and returns the edited bytes.
  std::vector<u8> edit(const EditOptions& o,
                       std::optional<EditPlan>* plan_out = nullptr) {
    ElfFile in(view_of(input_, "in.so"));
    EditPlan plan = plan_edit(in, o);
    std::vector<u8> out = apply_overlay(input_, plan.overlay);
    EXPECT_EQ(out.size(), plan.overlay.size());
    EXPECT_EQ(plan.grows, out.size() > input_.size());
    if (plan_out) plan_out->emplace(std::move(plan));
    check_invariants(out, {o.remove_needed.begin(), o.remove_needed.end()});
    return out;
  }

  // Structural invariants of an edited file.
  void check_invariants(const std::vector<u8>& out,
                        const std::set<std::string>& removed = {}) {
    SCOPED_TRACE("invariants");
    ElfFile elf(view_of(out, "out.so"));
    ASSERT_NO_THROW(visit_everything(elf));
    const auto& eh = at<Ehdr<E>>(const_cast<std::vector<u8>&>(out), 0);
    auto phdrs = elf.program_headers();
    u64 prev_vaddr = 0;
    bool first = true;
    for (const ProgramHeader& p : phdrs) {
      if (p.type != PT_LOAD) continue;
      EXPECT_LE(p.offset + p.filesz, out.size()) << "PT_LOAD " << p.index;
      EXPECT_LE(p.filesz, p.memsz) << "PT_LOAD " << p.index;
      if (p.align > 1) {
        EXPECT_EQ(p.offset % p.align, p.vaddr % p.align)
            << "PT_LOAD " << p.index;
      }
      if (!first) {
        EXPECT_GT(p.vaddr, prev_vaddr) << "PT_LOAD not sorted";
      }
      prev_vaddr = p.vaddr;
      first = false;
    }
    // PT_LOAD memory ranges do not overlap.
    for (const ProgramHeader& a : phdrs)
      for (const ProgramHeader& b : phdrs)
        if (a.type == PT_LOAD && b.type == PT_LOAD && a.index < b.index) {
          EXPECT_TRUE(a.vaddr + a.memsz <= b.vaddr ||
                      b.vaddr + b.memsz <= a.vaddr)
              << "PT_LOAD " << a.index << " overlaps " << b.index;
        }
    // Segments that the loader reads through addresses are mapped at the
    // addresses they claim.
    for (const ProgramHeader& p : phdrs) {
      if (p.type == PT_DYNAMIC || p.type == PT_INTERP || p.type == PT_PHDR ||
          p.type == PT_NOTE) {
        EXPECT_EQ(elf.vaddr_to_offset(p.vaddr), p.offset)
            << segment_type_name(p.type) << " at index " << p.index;
      }
      if (p.type == PT_PHDR) {
        EXPECT_EQ(p.offset, static_cast<u64>(eh.e_phoff));
        EXPECT_EQ(p.filesz, phdrs.size() * sizeof(Phdr<E>));
      }
    }
    // The dynamic section and its tables agree with the section headers.
    auto dyn = elf.dynamic();
    auto value = [&](i64 tag) -> std::optional<u64> {
      for (const auto& d : dyn)
        if (d.tag == tag) return d.value;
      return std::nullopt;
    };
    for (const SectionHeader& sh : elf.sections()) {
      if ((sh.flags & SHF_ALLOC) && sh.type != SHT_NOBITS && sh.size > 0) {
        EXPECT_EQ(elf.vaddr_to_offset(sh.addr), sh.offset) << sh.name;
      }
      if (sh.name == ".dynstr") {
        EXPECT_EQ(value(DT_STRTAB), sh.addr);
        EXPECT_EQ(value(DT_STRSZ), sh.size);
      }
      if (sh.name == ".dynamic") {
        ProgramHeader pd{};
        for (const auto& p : phdrs)
          if (p.type == PT_DYNAMIC) pd = p;
        EXPECT_EQ(sh.offset, pd.offset);
        EXPECT_EQ(sh.addr, pd.vaddr);
        EXPECT_EQ(sh.size, pd.filesz);
      }
      if (sh.name == ".interp") {
        EXPECT_EQ(elf.interpreter().value_or("?"),
                  std::string_view(
                      reinterpret_cast<const char*>(out.data() + sh.offset)));
      }
    }
    // Whatever the edit, symbols, versions and notes read the same.
    ElfFile before(view_of(input_, "in.so"));
    EXPECT_TRUE(snapshot(elf) == snapshot(before, removed))
        << "symbols/versions/notes changed";
  }

  std::vector<u8> input_;
  Layout l_;
};
TYPED_TEST_SUITE(EditorTest, AllElfTypes, ElfTypeNames);

TYPED_TEST(EditorTest, EmptyOptionsChangeNothing) {
  this->build();
  std::optional<EditPlan> plan;
  auto out = this->edit(EditOptions{}, &plan);
  EXPECT_EQ(out, this->input_);
  EXPECT_TRUE(plan->overlay.is_identity(this->input_));
}

TYPED_TEST(EditorTest, SettingTheSameRunpathIsIdentity) {
  this->build();
  EditOptions o;
  o.rpath_op = RpathOp::set;
  o.rpath = "$ORIGIN/../lib";
  std::optional<EditPlan> plan;
  auto out = this->edit(o, &plan);
  EXPECT_TRUE(plan->overlay.is_identity(this->input_));
}

TYPED_TEST(EditorTest, ShorterRunpathInPlace) {
  this->build();
  EditOptions o;
  o.rpath_op = RpathOp::set;
  o.rpath = "$ORIGIN";
  std::optional<EditPlan> plan;
  auto out = this->edit(o, &plan);
  EXPECT_FALSE(plan->grows);
  ASSERT_EQ(out.size(), this->input_.size());
  ElfFile elf(view_of(out));
  EXPECT_EQ(elf.runpath(), "$ORIGIN");
  EXPECT_FALSE(elf.rpath().has_value());
  EXPECT_EQ(elf.needed(),
            (std::vector<std::string_view>{"libm.so.6", "libc.so.6"}));
  EXPECT_EQ(elf.soname(), "libdemo.so.1");
  // Only bytes inside .dynstr and .dynamic changed.
  for (const Patch& p : plan->overlay.patches()) {
    bool in_dynstr =
        p.offset >= this->l_.dynstr &&
        p.offset + p.bytes.size() <= this->l_.dynstr + this->l_.dynstr_size;
    bool in_dynamic =
        p.offset >= this->l_.dynamic &&
        p.offset + p.bytes.size() <=
            this->l_.dynamic + this->l_.dynamic_count * sizeof(Dyn<TypeParam>);
    EXPECT_TRUE(in_dynstr || in_dynamic)
        << "patch at 0x" << std::hex << p.offset;
  }
}

TYPED_TEST(EditorTest, LongerRunpathGrows) {
  this->build();
  EditOptions o;
  o.rpath_op = RpathOp::set;
  o.rpath = std::string(300, 'r') + ":$ORIGIN/deps";
  std::optional<EditPlan> plan;
  auto out = this->edit(o, &plan);
  EXPECT_TRUE(plan->grows);
  ElfFile elf(view_of(out));
  EXPECT_EQ(elf.runpath(), o.rpath);
  EXPECT_EQ(elf.needed(),
            (std::vector<std::string_view>{"libm.so.6", "libc.so.6"}));
  EXPECT_EQ(elf.soname(), "libdemo.so.1");
  EXPECT_EQ(elf.interpreter(), "/lib64/ld-linux-x86-64.so.2");
  // Appended, never shifted: the input is a prefix of the output except for
  // patched headers and tables.
  int loads = 0;
  for (const auto& p : elf.program_headers()) loads += p.type == PT_LOAD;
  EXPECT_EQ(loads, 3);
  EXPECT_FALSE(plan->notes.empty());
}

TYPED_TEST(EditorTest, ForceRpathTag) {
  this->build();
  EditOptions o;
  o.rpath_op = RpathOp::set;
  o.rpath = "/opt/x";
  o.rpath_tag = RpathTag::rpath;
  auto out = this->edit(o);
  ElfFile elf(view_of(out));
  EXPECT_EQ(elf.rpath(), "/opt/x");
  EXPECT_FALSE(elf.runpath().has_value());
}

TYPED_TEST(EditorTest, KeepTagKeepsRpath) {
  ElfSpec spec = full_spec();
  spec.runpath.reset();
  spec.rpath = "/old/rpath/dir";
  this->build(spec);
  EditOptions o;
  o.rpath_op = RpathOp::set;
  o.rpath = "/new";
  o.rpath_tag = RpathTag::keep;
  auto out = this->edit(o);
  ElfFile elf(view_of(out));
  EXPECT_EQ(elf.rpath(), "/new");
  EXPECT_FALSE(elf.runpath().has_value());
  // The default converts DT_RPATH to DT_RUNPATH, as patchelf does.
  o.rpath_tag = RpathTag::runpath;
  auto converted = this->edit(o);
  ElfFile elf2(view_of(converted));
  EXPECT_EQ(elf2.runpath(), "/new");
  EXPECT_FALSE(elf2.rpath().has_value());
}

TYPED_TEST(EditorTest, RemoveRpath) {
  ElfSpec spec = full_spec();
  spec.rpath = "/also/rpath";
  this->build(spec);
  EditOptions o;
  o.rpath_op = RpathOp::remove;
  std::optional<EditPlan> plan;
  auto out = this->edit(o, &plan);
  EXPECT_FALSE(plan->grows);
  ElfFile elf(view_of(out));
  EXPECT_FALSE(elf.rpath().has_value());
  EXPECT_FALSE(elf.runpath().has_value());
  EXPECT_EQ(elf.dynamic().size(), this->l_.dynamic_count - 1 - 2);
}

TYPED_TEST(EditorTest, AddRpathIsIdempotent) {
  this->build();
  EditOptions o;
  o.rpath_op = RpathOp::add;
  o.rpath = "/opt/extra:$ORIGIN/../lib";
  auto out = this->edit(o);
  ElfFile elf(view_of(out));
  EXPECT_EQ(elf.runpath(), "$ORIGIN/../lib:/opt/extra");
  // Adding again to the result changes nothing.
  this->input_ = out;
  std::optional<EditPlan> plan;
  auto again = this->edit(o, &plan);
  EXPECT_TRUE(plan->overlay.is_identity(out));
}

TYPED_TEST(EditorTest, AddRpathToFileWithout) {
  ElfSpec spec = full_spec();
  spec.runpath.reset();
  this->build(spec);
  EditOptions o;
  o.rpath_op = RpathOp::add;
  o.rpath = "$ORIGIN";
  auto out = this->edit(o);
  ElfFile elf(view_of(out));
  EXPECT_EQ(elf.runpath(), "$ORIGIN");
  EXPECT_EQ(elf.needed().size(), 2u);
}

TYPED_TEST(EditorTest, SetSoname) {
  this->build();
  EditOptions o;
  o.set_soname = "libdemo-abcdef12.so.1";
  auto out = this->edit(o);
  ElfFile elf(view_of(out));
  EXPECT_EQ(elf.soname(), "libdemo-abcdef12.so.1");
  EXPECT_EQ(elf.runpath(), "$ORIGIN/../lib");
}

TYPED_TEST(EditorTest, SetSonameAddsEntry) {
  ElfSpec spec = full_spec();
  spec.soname.reset();
  this->build(spec);
  EditOptions o;
  o.set_soname = "libnew.so";
  auto out = this->edit(o);
  ElfFile elf(view_of(out));
  EXPECT_EQ(elf.soname(), "libnew.so");
}

TYPED_TEST(EditorTest, SetSonameOnExecutableIsUsageError) {
  ElfSpec spec = full_spec();
  spec.type = ET_EXEC;
  this->build(spec);
  EditOptions o;
  o.set_soname = "x";
  ElfFile in(view_of(this->input_, "in.so"));
  try {
    plan_edit(in, o);
    FAIL() << "no exception";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::usage);
    EXPECT_EQ(e.file(), "in.so");
  }
}

TYPED_TEST(EditorTest, ReplaceNeededFollowsIntoVersionNeeds) {
  this->build();
  EditOptions o;
  o.replace_needed = {{"libm.so.6", "libm-0123abcd.so.6"}};
  auto out = this->edit(o);
  ElfFile elf(view_of(out));
  EXPECT_EQ(elf.needed(),
            (std::vector<std::string_view>{"libm-0123abcd.so.6", "libc.so.6"}));
  auto needs = elf.version_needs();
  ASSERT_EQ(needs.size(), 2u);
  EXPECT_EQ(needs[0].file, "libc.so.6");
  EXPECT_EQ(needs[1].file, "libm-0123abcd.so.6");
  for (const Symbol& s : elf.dynamic_symbols()) {
    if (s.name == "exp") {
      EXPECT_EQ(s.version_file, "libm-0123abcd.so.6");
    }
  }
}

TYPED_TEST(EditorTest, ReplaceUnknownNeededIsIgnored) {
  this->build();
  EditOptions o;
  o.replace_needed = {{"libnothere.so", "libother.so"}};
  std::optional<EditPlan> plan;
  this->edit(o, &plan);
  EXPECT_TRUE(plan->overlay.is_identity(this->input_));
}

// Linkers share string storage: a symbol name may be the tail of a library
// name. Renaming the library must not overwrite bytes the symbol still uses.
TYPED_TEST(EditorTest, ReplaceNeededKeepsSharedSuffix) {
  ElfSpec spec = full_spec();
  spec.symbols.push_back({"m.so.6", 0x1500, 4, STB_GLOBAL, STT_OBJECT, 12, 1});
  this->build(spec);
  // Point the new symbol's name into "libm.so.6".
  u64 index = 0;
  for (u64 i = 0; i < this->l_.symbol_order.size(); ++i)
    if (this->l_.symbol_order[i] == spec.symbols.size() - 1) index = i + 1;
  ASSERT_NE(index, 0u);
  at<Sym<TypeParam>>(this->input_,
                     this->l_.dynsym + index * sizeof(Sym<TypeParam>))
      .st_name = static_cast<u32>(this->l_.strings.at("libm.so.6") + 3);
  EditOptions o;
  o.replace_needed = {{"libm.so.6", "libq.so.6"}};  // same length: would fit
  auto out = this->edit(o);  // the invariants compare symbol names
  ElfFile elf(view_of(out));
  EXPECT_EQ(elf.needed(),
            (std::vector<std::string_view>{"libq.so.6", "libc.so.6"}));
  bool found = false;
  for (const Symbol& sym : elf.dynamic_symbols()) found |= sym.name == "m.so.6";
  EXPECT_TRUE(found);
}

// The reverse: the released string is the tail of a string still in use.
TYPED_TEST(EditorTest, ReplaceNeededThatIsASuffix) {
  ElfSpec spec = full_spec();
  spec.soname = "xlibm.so.6";
  this->build(spec);
  auto& needed = at<Dyn<TypeParam>>(this->input_, this->l_.dyn.at(DT_NEEDED));
  ASSERT_EQ(needed.d_val, this->l_.strings.at("libm.so.6"));
  needed.d_val = this->l_.strings.at("xlibm.so.6") + 1;
  EditOptions o;
  o.replace_needed = {{"libm.so.6", "libq.so.6"}};
  auto out = this->edit(o);
  ElfFile elf(view_of(out));
  EXPECT_EQ(elf.needed().front(), "libq.so.6");
  EXPECT_EQ(elf.soname(), "xlibm.so.6");
}

TYPED_TEST(EditorTest, RemoveNeeded) {
  this->build();
  EditOptions o;
  o.remove_needed = {"libm.so.6"};
  std::optional<EditPlan> plan;
  auto out = this->edit(o, &plan);
  EXPECT_FALSE(plan->grows);
  ElfFile elf(view_of(out));
  EXPECT_EQ(elf.needed(), std::vector<std::string_view>{"libc.so.6"});
  EXPECT_EQ(elf.soname(), "libdemo.so.1");
  EXPECT_EQ(elf.dt_flags_1(), u64{DF_1_NOW | DF_1_NODELETE});
}

// Removing a library also removes its version-needs record (first, middle
// or last in the chain) and unversions the symbols that used it.
TYPED_TEST(EditorTest, RemoveNeededDropsItsVersionNeeds) {
  ElfSpec spec = full_spec();
  spec.needed = {"libm.so.6", "libc.so.6", "libpthread.so.0"};
  spec.verneed.push_back({"libpthread.so.0", {{"GLIBC_2.3.2", 7}}});
  spec.symbols.push_back(
      {"pthread_cond_wait", 0, 0, STB_GLOBAL, STT_FUNC, 0, 7});
  for (const char* lib : {"libc.so.6", "libm.so.6", "libpthread.so.0"}) {
    SCOPED_TRACE(lib);
    this->build(spec);
    EditOptions o;
    o.remove_needed = {lib};
    auto out = this->edit(o);
    ElfFile elf(view_of(out));
    std::vector<std::string_view> files;
    for (const VersionNeed& n : elf.version_needs()) files.push_back(n.file);
    EXPECT_EQ(files.size(), 2u);
    EXPECT_EQ(std::count(files.begin(), files.end(), lib), 0);
    u64 verneednum = 0;
    for (const auto& d : elf.dynamic())
      if (d.tag == DT_VERNEEDNUM) verneednum = d.value;
    EXPECT_EQ(verneednum, 2u);
    auto sec = elf.section(".gnu.version_r");
    ASSERT_TRUE(sec.has_value());
    EXPECT_EQ(sec->info, 2u);
    for (const Symbol& sym : elf.dynamic_symbols())
      EXPECT_NE(sym.version_file, lib);
  }
}

TYPED_TEST(EditorTest, RemoveEveryVersionedLibrary) {
  this->build();
  EditOptions o;
  o.remove_needed = {"libc.so.6", "libm.so.6"};
  auto out = this->edit(o);
  ElfFile elf(view_of(out));
  EXPECT_TRUE(elf.needed().empty());
  EXPECT_TRUE(elf.version_needs().empty());
  for (const auto& d : elf.dynamic()) {
    EXPECT_NE(d.tag, DT_VERNEED);
    EXPECT_NE(d.tag, DT_VERNEEDNUM);
  }
  EXPECT_EQ(elf.version_defs().size(), 3u);
}

TYPED_TEST(EditorTest, AddNeededInPlaceWithSpareSlotAndExistingString) {
  ElfSpec spec = full_spec();
  spec.spare_dynamic = 2;
  spec.extra_strings = {"libz.so.1"};
  this->build(spec);
  EditOptions o;
  o.add_needed = {"libz.so.1"};
  std::optional<EditPlan> plan;
  auto out = this->edit(o, &plan);
  EXPECT_FALSE(plan->grows);
  ElfFile elf(view_of(out));
  EXPECT_EQ(elf.needed(), (std::vector<std::string_view>{
                              "libz.so.1", "libm.so.6", "libc.so.6"}));
}

TYPED_TEST(EditorTest, AddNeededGrows) {
  this->build();
  EditOptions o;
  o.add_needed = {"libextra1.so", "libextra2.so", "libm.so.6"};
  auto out = this->edit(o);
  ElfFile elf(view_of(out));
  EXPECT_EQ(elf.needed(),
            (std::vector<std::string_view>{"libextra1.so", "libextra2.so",
                                           "libm.so.6", "libc.so.6"}));
}

TYPED_TEST(EditorTest, SetInterpreter) {
  this->build();
  EditOptions shorter;
  shorter.set_interpreter = "/lib/ld.so";
  std::optional<EditPlan> plan;
  auto out = this->edit(shorter, &plan);
  EXPECT_FALSE(plan->grows);
  EXPECT_EQ(ElfFile(view_of(out)).interpreter(), "/lib/ld.so");

  EditOptions longer;
  longer.set_interpreter =
      "/opt/very/long/path/to/a/custom/glibc/lib/ld-linux-x86-64.so.2";
  auto out2 = this->edit(longer, &plan);
  EXPECT_TRUE(plan->grows);
  EXPECT_EQ(ElfFile(view_of(out2)).interpreter(), *longer.set_interpreter);
}

TYPED_TEST(EditorTest, SetInterpreterWithoutPtInterp) {
  ElfSpec spec = full_spec();
  spec.interp.reset();
  this->build(spec);
  EditOptions o;
  o.set_interpreter = "/lib/ld.so";
  ElfFile in(view_of(this->input_, "in.so"));
  try {
    plan_edit(in, o);
    FAIL() << "no exception";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::not_found);
  }
}

TYPED_TEST(EditorTest, StaticFileHasNothingToEdit) {
  ElfSpec spec;
  spec.dynamic = false;
  spec.type = ET_EXEC;
  this->build(spec);
  EditOptions o;
  o.add_needed = {"libc.so.6"};
  ElfFile in(view_of(this->input_, "in.so"));
  try {
    plan_edit(in, o);
    FAIL() << "no exception";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::not_found);
    EXPECT_EQ(e.file(), "in.so");
  }
}

TYPED_TEST(EditorTest, EverythingAtOnce) {
  this->build();
  EditOptions o;
  o.set_soname = "libdemo-0011aabb.so.1";
  o.set_interpreter = "/opt/glibc-2.99/lib/ld-linux-x86-64.so.2";
  o.rpath_op = RpathOp::set;
  o.rpath = "$ORIGIN/../demo.libs";
  o.rpath_tag = RpathTag::rpath;
  o.remove_needed = {"libc.so.6"};
  o.replace_needed = {{"libm.so.6", "libm-99.so.6"}};
  o.add_needed = {"libc-77.so.6"};
  auto out = this->edit(o);
  ElfFile elf(view_of(out));
  EXPECT_EQ(elf.soname(), "libdemo-0011aabb.so.1");
  EXPECT_EQ(elf.interpreter(), *o.set_interpreter);
  EXPECT_EQ(elf.rpath(), "$ORIGIN/../demo.libs");
  EXPECT_FALSE(elf.runpath().has_value());
  EXPECT_EQ(elf.needed(),
            (std::vector<std::string_view>{"libc-77.so.6", "libm-99.so.6"}));
}

TYPED_TEST(EditorTest, GrowWithoutSectionHeaders) {
  ElfSpec spec = full_spec();
  spec.section_headers = false;
  this->build(spec);
  EditOptions o;
  o.rpath_op = RpathOp::set;
  o.rpath = std::string(200, 'x');
  o.add_needed = {"libgrown.so"};
  auto out = this->edit(o);
  ElfFile elf(view_of(out));
  EXPECT_EQ(elf.runpath(), o.rpath);
  EXPECT_EQ(elf.needed().front(), "libgrown.so");
  EXPECT_TRUE(elf.sections().empty());
}

TYPED_TEST(EditorTest, RepeatedGrowthReusesTheSegment) {
  this->build();
  EditOptions o;
  o.rpath_op = RpathOp::set;
  o.rpath = std::string(500, 'a');
  auto once = this->edit(o);
  ASSERT_GT(once.size(), this->input_.size());
  std::vector<u8> current = once;
  for (char c : {'b', 'c', 'd'}) {
    this->input_ = current;
    o.rpath = std::string(500, c);
    current = this->edit(o);
    EXPECT_EQ(ElfFile(view_of(current)).runpath(), o.rpath);
  }
  EXPECT_LE(current.size(), once.size() + 64) << "each edit appended again";
  int loads = 0;
  for (const auto& p : ElfFile(view_of(current)).program_headers())
    loads += p.type == PT_LOAD;
  EXPECT_EQ(loads, 3);
}

TYPED_TEST(EditorTest, NewSegmentUsesTheMachinesLargestPage) {
  ElfSpec spec = full_spec();
  spec.machine = EM_AARCH64;
  this->build(spec);
  EditOptions o;
  o.rpath_op = RpathOp::set;
  o.rpath = std::string(100, 'p');
  auto out = this->edit(o);
  auto phdrs = ElfFile(view_of(out)).program_headers();
  const ProgramHeader* last = nullptr;
  for (const auto& p : phdrs)
    if (p.type == PT_LOAD && (!last || p.vaddr > last->vaddr)) last = &p;
  ASSERT_NE(last, nullptr);
  EXPECT_GE(last->align, 0x10000u);
  EXPECT_EQ(last->offset % 0x10000, last->vaddr % 0x10000);
}

TYPED_TEST(EditorTest, ExplicitPageSize) {
  this->build();
  EditOptions o;
  o.rpath_op = RpathOp::set;
  o.rpath = std::string(100, 'q');
  o.page_size = 0x200000;
  auto out = this->edit(o);
  const ProgramHeader* last = nullptr;
  auto phdrs = ElfFile(view_of(out)).program_headers();
  for (const auto& p : phdrs)
    if (p.type == PT_LOAD && (!last || p.vaddr > last->vaddr)) last = &p;
  ASSERT_NE(last, nullptr);
  EXPECT_EQ(last->align, 0x200000u);
}

// A PT_NOTE with a corrupt p_align (found by fuzz/elf_edit.cpp): moving the
// note into the new segment aligned it to p_align itself, so a 1 KB input
// became a 1.7 GB output. Notes are 4- or 8-aligned whatever p_align says.
TYPED_TEST(EditorTest, HugeNoteAlignmentDoesNotBlowUpTheFile) {
  this->build();
  at<Phdr<TypeParam>>(this->input_, this->l_.phdr_of(PT_NOTE)).p_align =
      0x40000000;
  EditOptions o;
  o.rpath_op = RpathOp::set;
  o.rpath = std::string(300, 'n');
  ElfFile in(view_of(this->input_, "in.so"));
  try {
    EditPlan plan = plan_edit(in, o);
    EXPECT_LT(plan.overlay.size(), this->input_.size() + 0x100000)
        << "grew by 0x" << std::hex
        << plan.overlay.size() - this->input_.size();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::format) << e.what();
  }
}

// PT_INTERP whose string is not NUL-terminated within p_filesz. A growing
// edit moves the interpreter out of the way of the program header table and
// copies it with cstring() (unbounded by p_filesz) into a buffer of p_filesz
// bytes: a heap-buffer-overflow (found by fuzz/elf_edit.cpp; the overflow is
// only visible under -DLIBPKG_SANITIZE=ON, the output is the same).
TYPED_TEST(EditorTest, ShortPtInterpMovedWithoutOverflow) {
  this->build();
  auto& interp = at<Phdr<TypeParam>>(this->input_, this->l_.phdr_of(PT_INTERP));
  interp.p_filesz = 10;  // "/lib64/ld-" without its NUL
  interp.p_memsz = 10;
  at<Shdr<TypeParam>>(this->input_, this->l_.shdr.at(".interp")).sh_size = 10;
  ASSERT_EQ(ElfFile(view_of(this->input_)).interpreter(), "/lib64/ld-");
  EditOptions o;
  o.rpath_op = RpathOp::set;
  o.rpath = std::string(300, 'i');
  // In a child process: the overflow corrupts the heap, which would take
  // the rest of the suite down with it.
  EXPECT_EXIT(
      {
        ElfFile in(view_of(this->input_, "in.so"));
        try {
          EditPlan plan = plan_edit(in, o);
          auto out = apply_overlay(this->input_, plan.overlay);
          std::exit(ElfFile(view_of(out)).interpreter() == "/lib64/ld-" ? 0
                                                                        : 3);
        } catch (const Error& e) {
          std::exit(e.code() == Errc::format ? 0 : 4);
        }
      },
      ::testing::ExitedWithCode(0), "");
}

// An executable (ET_EXEC or with PT_INTERP) whose program header table has to
// move: the new segment is placed so that old kernels' AT_PHDR formula
// (first PT_LOAD p_vaddr - p_offset + e_phoff) holds, i.e. at file offset
// max(p_vaddr + p_memsz) - bias. A corrupt p_vaddr/p_memsz makes that offset
// anything up to 2^64 (found by fuzz/elf_edit.cpp: outputs of up to 9.2e18
// bytes, which no writer or compressor can stream).
TYPED_TEST(EditorTest, CorruptSegmentEndDoesNotBlowUpTheFile) {
  ElfSpec spec;
  spec.type = ET_EXEC;
  spec.needed = {"libc.so.6"};
  spec.runpath = "/x";
  spec.hash = HashStyle::none;  // .dynsym right after the phdrs: no room
  spec.symbols = {{"printf"}};
  this->build(spec);
  auto& rw = at<Phdr<TypeParam>>(this->input_, this->l_.phdr_of(PT_LOAD, 1));
  rw.p_memsz = TypeParam::is_64 ? u64{1} << 62 : 0x7fff0000;
  EditOptions o;
  o.rpath_op = RpathOp::set;
  o.rpath = std::string(200, 'r');
  ElfFile in(view_of(this->input_, "in.so"));
  try {
    EditPlan plan = plan_edit(in, o);
    EXPECT_LT(plan.overlay.size(), this->input_.size() + 0x1000000)
        << "output of 0x" << std::hex << plan.overlay.size() << " bytes";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::format) << e.what();
  }
}

// The same placement on a legitimate file: a non-PIE executable with a 1 GiB
// .bss grows to a 1 GiB file (sparse on disk, but every byte is streamed into
// a wheel). The editor gives up the pre-5.18-kernel AT_PHDR placement when
// it would need a hole of more than 256 MiB.
TYPED_TEST(EditorTest, LargeBssDoesNotBlowUpTheFile) {
  ElfSpec spec;
  spec.type = ET_EXEC;
  spec.needed = {"libc.so.6"};
  spec.runpath = "/x";
  spec.hash = HashStyle::none;
  spec.symbols = {{"printf"}};
  this->build(spec);
  auto& rw = at<Phdr<TypeParam>>(this->input_, this->l_.phdr_of(PT_LOAD, 1));
  rw.p_memsz = rw.p_memsz + (u64{1} << 30);
  EditOptions o;
  o.rpath_op = RpathOp::set;
  o.rpath = std::string(200, 'r');
  ElfFile in(view_of(this->input_, "in.so"));
  EditPlan plan = plan_edit(in, o);
  EXPECT_LT(plan.overlay.size(), this->input_.size() + 0x1000000)
      << "output of 0x" << std::hex << plan.overlay.size() << " bytes";
}

// The edited images must also satisfy binutils' readelf.
TYPED_TEST(EditorTest, ReadelfAcceptsGrownFile) {
  if (std::system("readelf --version >/dev/null 2>&1") != 0)
    GTEST_FAIL() << "readelf not installed (binutils)";
  this->build();
  EditOptions o;
  o.rpath_op = RpathOp::set;
  o.rpath = std::string(300, 'z');
  o.add_needed = {"libadded.so"};
  o.set_interpreter = "/a/much/longer/interpreter/path/ld.so";
  auto out = this->edit(o);
  auto path = std::filesystem::temp_directory_path() /
              ("libpkg-editor-" + std::to_string(::getpid()) + ".so");
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<const char*>(out.data()),
             static_cast<std::streamsize>(out.size()));
  std::string cmd = "readelf -a -W " + path.string() + " 2>&1 >/dev/null";
  std::string errors;
  if (FILE* p = ::popen(cmd.c_str(), "r")) {
    char buf[512];
    while (std::fgets(buf, sizeof buf, p)) errors += buf;
    ::pclose(p);
  }
  std::filesystem::remove(path);
  EXPECT_EQ(errors, "");
}

TEST(EditFile, InPlaceAndToNewPath) {
  auto image = build_elf<Elf64LE>(full_spec());
  auto dir = std::filesystem::temp_directory_path() /
             ("libpkg-editfile-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  auto lib = dir / "lib.so";
  std::ofstream(lib, std::ios::binary)
      .write(reinterpret_cast<const char*>(image.data()),
             static_cast<std::streamsize>(image.size()));
  std::filesystem::permissions(lib, std::filesystem::perms(0755));

  EditOptions shorter;
  shorter.rpath_op = RpathOp::set;
  shorter.rpath = "$ORIGIN";
  EditReport r = edit_file(lib, lib, shorter);
  EXPECT_TRUE(r.changed);
  EXPECT_TRUE(r.in_place);
  EXPECT_FALSE(r.grew);
  EXPECT_EQ(r.old_size, r.new_size);
  EXPECT_EQ(ElfFile::open(lib).runpath(), "$ORIGIN");

  EditReport again = edit_file(lib, lib, shorter);
  EXPECT_FALSE(again.changed);

  EditOptions longer = shorter;
  longer.rpath = std::string(256, 'L');
  EditReport g = edit_file(lib, dir / "out.so", longer);
  EXPECT_TRUE(g.grew);
  EXPECT_FALSE(g.in_place);
  EXPECT_GT(g.new_size, g.old_size);
  EXPECT_EQ(ElfFile::open(dir / "out.so").runpath(), longer.rpath);
  EXPECT_EQ(ElfFile::open(lib).runpath(), "$ORIGIN");
  EXPECT_EQ(std::filesystem::status(dir / "out.so").permissions(),
            std::filesystem::perms(0755));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace libpkg::elf::testing
