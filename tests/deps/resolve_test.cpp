// Resolver on trees of small ELF images written under a temporary root:
// search order, RPATH inheritance, compatibility skipping, musl rules.
// (tests/deps/resolve.sh checks the same rules against the real ld.so with
// compiled fixtures.)
#include "libpkg/deps/resolve.hpp"

#include <gtest/gtest.h>

#include "libpkg/base/error.hpp"
#include "test_root.hpp"

namespace libpkg::deps {
namespace {

using elf::testing::ElfSpec;
using testing::TestRoot;

ElfSpec lib(std::vector<std::string> needed = {},
            std::optional<std::string> rpath = {},
            std::optional<std::string> runpath = {}) {
  ElfSpec s;
  s.needed = std::move(needed);
  s.rpath = std::move(rpath);
  s.runpath = std::move(runpath);
  return s;
}

std::string via(const LddTree& t, const std::string& soname) {
  const LibraryNode* n = t.find(soname);
  return n ? found_via_name(n->via) : "<absent>";
}
std::string path(const LddTree& t, const std::string& soname) {
  const LibraryNode* n = t.find(soname);
  return n && n->path ? n->path->string() : "<none>";
}

class GlibcTree : public ::testing::Test {
 protected:
  void SetUp() override {
    r.write("etc/ld.so.conf", "include /etc/ld.so.conf.d/*.conf\n");
    r.write("etc/ld.so.conf.d/x.conf", "/sys1\n/sys-absent\n");
    r.mkdir("usr/lib");
    // prog: RPATH $ORIGIN/../rp.
    r.elf("app/bin/prog",
          lib({"liba.so", "libr.so", "libq.so", "libe.so", "libd.so", "libn.so",
               "lib32.so", "libarm.so", "libmissing.so"},
              "$ORIGIN/../rp"));
    r.elf("app/rp/liba.so", lib({"libb.so"}));
    r.elf("ld/liba.so", lib());  // LD_LIBRARY_PATH loses to RPATH
    r.elf("app/rp/libb.so", lib({"liba.so"}));  // a cycle
    // libr has RUNPATH: no RPATH at all for its own NEEDED.
    r.elf("app/rp/libr.so",
          lib({"libx.so", "liby.so", "libz.so"}, {}, "${ORIGIN}/../rn"));
    r.elf("app/rp/libx.so", lib());
    r.elf("sys1/libx.so", lib());
    r.elf("app/rn/liby.so", lib());
    r.elf("app/rn/libz.so", lib({"libw.so", "libv.so"}));
    r.elf("app/rp/libw.so", lib());
    r.elf("app/rn/libw.so", lib());
    r.elf("app/rn/libv.so", lib());  // RUNPATH is not inherited
    r.elf("ld/libq.so", lib());
    r.elf("sys1/libq.so", lib());
    r.elf("extra/libe.so", lib());
    r.elf("sys1/libe.so", lib());
    r.elf("usr/lib/libd.so", lib());
    r.write("sys1/libn.so", "INPUT(-lfoo)\n");  // not ELF: skipped
    r.elf("usr/lib/libn.so", lib());
    r.elf("sys1/lib32.so", lib(), /*is_64=*/false);
    r.elf("usr/lib/lib32.so", lib());
    ElfSpec arm = lib();
    arm.machine = elf::EM_AARCH64;
    r.elf("sys1/libarm.so", arm);
    r.elf("usr/lib/libarm.so", lib());
  }

  LddTree resolve(std::function<bool(const LibraryNode&)> prune = {}) {
    SearchConfig c;
    c.root = r.dir();
    c.ld_library_path = {r.at("ld")};
    c.extra_paths = {r.at("extra")};
    return Resolver(c).tree(r.at("app/bin/prog"), prune);
  }

  TestRoot r;
};

TEST_F(GlibcTree, SearchOrder) {
  LddTree t = resolve();
  EXPECT_EQ(via(t, "liba.so"), "rpath");
  EXPECT_EQ(path(t, "liba.so"), r.at("app/bin/../rp/liba.so"));
  EXPECT_EQ(via(t, "libb.so"), "inherited_rpath");
  EXPECT_EQ(via(t, "libr.so"), "rpath");
  // libr has RUNPATH, so the executable's RPATH is not used for libx.
  EXPECT_EQ(via(t, "libx.so"), "ld_so_conf");
  EXPECT_EQ(path(t, "libx.so"), r.at("sys1/libx.so"));
  EXPECT_EQ(via(t, "liby.so"), "runpath");
  EXPECT_EQ(path(t, "liby.so"), r.at("app/bin/../rp/../rn/liby.so"));
  EXPECT_EQ(via(t, "libz.so"), "runpath");
  // libz (no RUNPATH) inherits prog's RPATH through libr, whose own RUNPATH
  // does not block it; libr's RUNPATH is not inherited.
  EXPECT_EQ(via(t, "libw.so"), "inherited_rpath");
  EXPECT_EQ(path(t, "libw.so"), r.at("app/bin/../rp/libw.so"));
  EXPECT_EQ(via(t, "libv.so"), "not_found");
  EXPECT_EQ(via(t, "libq.so"), "ld_library_path");
  EXPECT_EQ(via(t, "libe.so"), "extra_path");
  EXPECT_EQ(via(t, "libd.so"), "default_dir");
  EXPECT_EQ(via(t, "libmissing.so"), "not_found");
  EXPECT_EQ(t.missing(),
            (std::vector<std::string>{"libmissing.so", "libv.so"}));
}

TEST_F(GlibcTree, IncompatibleCandidatesAreSkippedWithAReason) {
  LddTree t = resolve();
  const LibraryNode* n32 = t.find("lib32.so");
  ASSERT_NE(n32, nullptr);
  EXPECT_EQ(path(t, "lib32.so"), r.at("usr/lib/lib32.so"));
  ASSERT_EQ(n32->skipped.size(), 1u);
  EXPECT_EQ(n32->skipped[0].path, r.at("sys1/lib32.so"));
  EXPECT_EQ(n32->skipped[0].reason, "ELFCLASS32, need ELFCLASS64");
  const LibraryNode* arm = t.find("libarm.so");
  ASSERT_NE(arm, nullptr);
  ASSERT_EQ(arm->skipped.size(), 1u);
  EXPECT_EQ(arm->skipped[0].reason, "machine aarch64, need x86_64");
  EXPECT_EQ(via(t, "libarm.so"), "default_dir");
  const LibraryNode* n = t.find("libn.so");
  ASSERT_NE(n, nullptr);
  ASSERT_EQ(n->skipped.size(), 1u);
  EXPECT_EQ(n->skipped[0].path, r.at("sys1/libn.so"));
  EXPECT_EQ(path(t, "libn.so"), r.at("usr/lib/libn.so"));
}

TEST_F(GlibcTree, BreadthFirstOncePerSoname) {
  LddTree t = resolve();
  std::vector<std::string> order;
  for (const auto& l : t.libraries) order.push_back(l.soname);
  EXPECT_EQ(order,
            (std::vector<std::string>{
                "liba.so", "libr.so", "libq.so", "libe.so", "libd.so",
                "libn.so", "lib32.so", "libarm.so", "libmissing.so", "libb.so",
                "libx.so", "liby.so", "libz.so", "libw.so", "libv.so"}));
  EXPECT_EQ(t.find("liba.so")->needed_by, r.at("app/bin/prog"));
  EXPECT_EQ(t.find("libb.so")->needed_by, "liba.so");
  EXPECT_EQ(t.find("libw.so")->needed_by, "libz.so");
  EXPECT_EQ(t.find("libb.so")->needed, (std::vector<std::string>{"liba.so"}));
  EXPECT_EQ(t.find("libr.so")->runpath, "${ORIGIN}/../rn");
  EXPECT_EQ(t.rpath, "$ORIGIN/../rp");
  EXPECT_FALSE(t.runpath);
  EXPECT_EQ(t.find("libx.so")->search_dir, r.at("sys1"));
  EXPECT_EQ(t.find("liby.so")->search_dir, "${ORIGIN}/../rn");
}

TEST_F(GlibcTree, PrunedLibrariesAreListedNotDescended) {
  LddTree t =
      resolve([](const LibraryNode& n) { return n.soname == "libr.so"; });
  EXPECT_EQ(via(t, "libr.so"), "rpath");
  EXPECT_EQ(t.find("libr.so")->needed.size(), 3u);  // still read
  EXPECT_EQ(t.find("libx.so"), nullptr);
  EXPECT_EQ(t.find("libz.so"), nullptr);
  EXPECT_NE(t.find("libb.so"), nullptr);
}

TEST_F(GlibcTree, SystemDirsUnderRoot) {
  SearchConfig c;
  c.root = r.dir();
  Resolver res(c);
  // /sys-absent does not exist; /usr/lib does, /lib64 etc. do not.
  EXPECT_EQ(res.system_dirs(),
            (std::vector<std::string>{r.at("sys1"), r.at("usr/lib")}));
}

TEST_F(GlibcTree, LdpathsReplaceTheSystemDirectories) {
  SearchConfig c;
  c.root = r.dir();
  c.system_dirs = std::vector<std::string>{r.at("usr/lib/")};
  LddTree t = Resolver(c).tree(r.at("app/bin/prog"));
  // libx is only in ld.so.conf's /sys1 (and in an RPATH libr may not use).
  EXPECT_EQ(via(t, "libx.so"), "not_found");
  EXPECT_EQ(path(t, "libx.so"), "<none>");
  EXPECT_EQ(via(t, "libq.so"), "not_found");
  EXPECT_EQ(via(t, "libd.so"), "default_dir");
}

TEST(Resolver, SearchListRulesWithoutFiles) {
  TestRoot r;
  r.mkdir("lib64");
  r.mkdir("lib");
  r.elf("top", lib({}, "/top-rpath"));
  r.elf("mid-runpath", lib({}, "/mid-rpath-ignored", "/mid-runpath"));
  r.elf("leaf", lib({}, "/leaf-rpath:$LIB:$PLATFORM:"));
  r.elf("leaf32", lib({}, "/leaf32"), /*is_64=*/false);
  auto top = elf::ElfFile::open(r.at("top"));
  auto mid = elf::ElfFile::open(r.at("mid-runpath"));
  auto leaf = elf::ElfFile::open(r.at("leaf"));
  auto leaf32 = elf::ElfFile::open(r.at("leaf32"));
  SearchConfig c;
  c.root = r.dir();
  c.ld_library_path = {"/llp"};
  Resolver res(c);
  auto list = res.search_list(leaf, {&top, &mid});
  std::vector<std::string> dirs;
  std::vector<FoundVia> vias;
  for (const auto& e : list) {
    dirs.push_back(e.dir);
    vias.push_back(e.via);
  }
  EXPECT_EQ(dirs, (std::vector<std::string>{"/leaf-rpath", "lib64", "x86_64",
                                            ".", "/top-rpath", "/llp",
                                            r.at("lib64"), r.at("lib")}));
  EXPECT_EQ(vias, (std::vector<FoundVia>{
                      FoundVia::rpath, FoundVia::rpath, FoundVia::rpath,
                      FoundVia::rpath, FoundVia::inherited_rpath,
                      FoundVia::ld_library_path, FoundVia::default_dir,
                      FoundVia::default_dir}));
  EXPECT_EQ(list[1].raw, "$LIB");
  // A requester with RUNPATH: no RPATH at all.
  list = res.search_list(mid, {&top});
  dirs.clear();
  for (const auto& e : list) dirs.push_back(e.dir);
  EXPECT_EQ(dirs, (std::vector<std::string>{"/llp", "/mid-runpath",
                                            r.at("lib64"), r.at("lib")}));
  // ELFCLASS32: $LIB is "lib", no lib64 default directories.
  list = res.search_list(leaf32, {});
  dirs.clear();
  for (const auto& e : list) dirs.push_back(e.dir);
  EXPECT_EQ(dirs, (std::vector<std::string>{"/leaf32", "/llp", r.at("lib")}));
}

TEST(Resolver, MuslRules) {
  TestRoot r;
  r.write("etc/ld-musl-x86_64.path", "/m1:/m2\n/m3\n\n");
  r.write("etc/ld-musl-aarch64.path", "/other\n");
  ElfSpec prog = lib({"liba.so", "libl.so"}, {}, "$ORIGIN/rp");
  prog.interp = "/lib/ld-musl-x86_64.so.1";
  r.elf("app/prog", prog);
  // musl: DT_RPATH and DT_RUNPATH alike, both inherited.
  r.elf("app/rp/liba.so", lib({"libb.so", "libm2.so"}, "$ORIGIN/../ra"));
  r.elf("app/ra/libb.so", lib({"libc2.so"}));
  r.elf("app/rp/libc2.so", lib());  // through prog's RUNPATH, inherited
  r.elf("ld/libl.so", lib());
  r.elf("app/rp/libl.so", lib());  // LD_LIBRARY_PATH comes first in musl
  r.elf("m2/libm2.so", lib());
  SearchConfig c;
  c.libc = Libc::musl;
  c.root = r.dir();
  c.ld_library_path = {r.at("ld")};
  Resolver res(c);
  // Two path files and none of the default directories exist: the
  // requester's architecture picks the file, system_dirs() cannot.
  EXPECT_TRUE(res.system_dirs().empty());
  LddTree t = res.tree(r.at("app/prog"));
  EXPECT_EQ(via(t, "liba.so"), "runpath");
  EXPECT_EQ(via(t, "libl.so"), "ld_library_path");
  EXPECT_EQ(via(t, "libb.so"), "rpath");
  EXPECT_EQ(via(t, "libc2.so"), "inherited_rpath");
  EXPECT_EQ(via(t, "libm2.so"), "ld_so_conf");
  EXPECT_EQ(path(t, "libm2.so"), r.at("m2/libm2.so"));
  EXPECT_EQ(libc_of(elf::ElfFile::open(r.at("app/prog"))), Libc::musl);
}

TEST(Resolver, MuslSearchListSkipsEmptyEntries) {
  TestRoot r;
  r.write("etc/ld-musl-x86_64.path", "/p1\n");
  r.elf("top", lib({}, "/top:"));
  r.elf("leaf", lib({}, "/rp", "::/a::/b:"));
  auto top = elf::ElfFile::open(r.at("top"));
  auto leaf = elf::ElfFile::open(r.at("leaf"));
  SearchConfig c;
  c.libc = Libc::musl;
  c.root = r.dir();
  c.ld_library_path = {"", "/llp"};
  std::vector<std::string> dirs;
  std::vector<FoundVia> vias;
  for (const auto& e : Resolver(c).search_list(leaf, {&top})) {
    dirs.push_back(e.dir);
    vias.push_back(e.via);
  }
  // LD_LIBRARY_PATH first; RUNPATH in place of RPATH; the loader's RPATH.
  EXPECT_EQ(dirs,
            (std::vector<std::string>{"/llp", "/a", "/b", "/top", r.at("p1")}));
  EXPECT_EQ(vias,
            (std::vector<FoundVia>{FoundVia::ld_library_path, FoundVia::runpath,
                                   FoundVia::runpath, FoundVia::inherited_rpath,
                                   FoundVia::ld_so_conf}));
}

TEST(Resolver, MuslDefaultsWithoutPathFile) {
  TestRoot r;
  r.mkdir("usr/local/lib");
  r.mkdir("lib");
  SearchConfig c;
  c.libc = Libc::musl;
  c.root = r.dir();
  EXPECT_EQ(Resolver(c).system_dirs(),
            (std::vector<std::string>{r.at("lib"), r.at("usr/local/lib")}));
}

TEST(Resolver, NamesWithSlashAreUsedAsPaths) {
  TestRoot r;
  r.elf("dir/libp.so", lib());
  r.elf("prog", lib({r.at("dir/libp.so"), r.at("dir/absent.so")}));
  LddTree t = Resolver().tree(r.at("prog"));
  EXPECT_EQ(via(t, r.at("dir/libp.so")), "path");
  EXPECT_EQ(via(t, r.at("dir/absent.so")), "not_found");
}

TEST(Resolver, BadInputThrows) {
  TestRoot r;
  r.write("text", "not an ELF file at all, just text\n");
  Resolver res;
  EXPECT_THROW(res.tree(r.at("absent")), Error);
  EXPECT_THROW(res.tree(r.at("text")), Error);
}

// compatible / policy_arch / libc_of on in-memory images.
struct Image {
  std::vector<u8> bytes;
  elf::ElfFile elf;
  Image(bool is_64, bool is_le, ElfSpec spec)
      : bytes(elf::testing::build_elf(is_64, is_le, spec)),
        elf(ByteView({bytes.data(), bytes.size()}, "image")) {}
};

ElfSpec machine(u16 m, u8 osabi = elf::ELFOSABI_SYSV) {
  ElfSpec s;
  s.machine = m;
  s.osabi = osabi;
  return s;
}

TEST(Compatible, ClassOrderMachineOsabi) {
  Image x64(true, true, machine(elf::EM_X86_64));
  Image x64_gnu(true, true, machine(elf::EM_X86_64, elf::ELFOSABI_GNU));
  Image x64_bsd(true, true, machine(elf::EM_X86_64, elf::ELFOSABI_FREEBSD));
  Image i386(false, true, machine(elf::EM_386));
  Image ppc_be(true, false, machine(elf::EM_PPC64));
  Image ppc_le(true, true, machine(elf::EM_PPC64));
  Image arm64(true, true, machine(elf::EM_AARCH64));
  std::string why;
  EXPECT_TRUE(compatible(x64.elf, x64_gnu.elf, &why));
  EXPECT_TRUE(compatible(x64_gnu.elf, x64.elf, &why));
  EXPECT_FALSE(compatible(x64.elf, x64_bsd.elf, &why));
  EXPECT_EQ(why, "OS/ABI 9, need 0");
  EXPECT_FALSE(compatible(x64.elf, i386.elf, &why));
  EXPECT_EQ(why, "ELFCLASS32, need ELFCLASS64");
  EXPECT_FALSE(compatible(ppc_le.elf, ppc_be.elf, &why));
  EXPECT_EQ(why, "big-endian, need little-endian");
  EXPECT_FALSE(compatible(x64.elf, arm64.elf, &why));
  EXPECT_EQ(why, "machine aarch64, need x86_64");
  EXPECT_FALSE(compatible(x64.elf, arm64.elf));  // `why` is optional
}

TEST(PolicyArch, Names) {
  EXPECT_EQ(policy_arch(Image(true, true, machine(elf::EM_X86_64)).elf),
            "x86_64");
  EXPECT_EQ(policy_arch(Image(false, true, machine(elf::EM_386)).elf), "i686");
  EXPECT_EQ(policy_arch(Image(true, true, machine(elf::EM_AARCH64)).elf),
            "aarch64");
  EXPECT_EQ(policy_arch(Image(true, true, machine(elf::EM_PPC64)).elf),
            "ppc64le");
  EXPECT_EQ(policy_arch(Image(true, false, machine(elf::EM_PPC64)).elf),
            "ppc64");
  EXPECT_EQ(policy_arch(Image(true, false, machine(elf::EM_S390)).elf),
            "s390x");
  EXPECT_EQ(policy_arch(Image(false, false, machine(elf::EM_S390)).elf), "");
  // ARM: armv7l only for EABI5 hard-float (tested below).
  EXPECT_EQ(policy_arch(Image(false, true, machine(elf::EM_ARM)).elf), "");
  EXPECT_EQ(policy_arch(Image(true, true, machine(elf::EM_RISCV)).elf),
            "riscv64");
  EXPECT_EQ(policy_arch(Image(true, true, machine(elf::EM_LOONGARCH)).elf),
            "loongarch64");
  EXPECT_EQ(policy_arch(Image(true, false, machine(elf::EM_SPARCV9)).elf), "");
}

// An ARM image with e_flags (offset 36 of the ELFCLASS32 header) set.
Image arm_image(u32 e_flags) {
  Image image(false, true, machine(elf::EM_ARM));
  for (int i = 0; i < 4; ++i)
    image.bytes[36 + i] = static_cast<u8>(e_flags >> (8 * i));
  return image;
}

TEST(PolicyArch, ArmNeedsEabi5HardFloat) {
  EXPECT_EQ(policy_arch(arm_image(0x05000400).elf), "armv7l");
  Image soft = arm_image(0x05000200);
  EXPECT_EQ(policy_arch(soft.elf), "");
  EXPECT_NE(unsupported_machine(soft.elf).find("soft-float"),
            std::string::npos);
  Image eabi4 = arm_image(0x04000000);
  EXPECT_EQ(policy_arch(eabi4.elf), "");
  EXPECT_NE(unsupported_machine(eabi4.elf).find("EABI version 4"),
            std::string::npos);
  Image sparc(true, false, machine(elf::EM_SPARCV9));
  EXPECT_NE(unsupported_machine(sparc.elf).find("no platform policy"),
            std::string::npos);
}

TEST(LibcOf, Bionic) {
  ElfSpec s;
  s.interp = "/system/bin/linker64";
  EXPECT_EQ(libc_of(Image(true, true, s).elf), Libc::bionic);
  s.interp.reset();
  // libc.so with bionic's LIBC version: not musl's unversioned libc.so.
  s.needed = {"libc.so"};
  s.symbols = {{"strlen", 0, 0, elf::STB_GLOBAL, elf::STT_FUNC, 0, 2}};
  s.verneed = {{"libc.so", {{"LIBC", 2}}}};
  EXPECT_EQ(libc_of(Image(true, true, s).elf), Libc::bionic);
}

TEST(LibcFromSuffix, MuslAndroidAndTrustedGnu) {
  EXPECT_EQ(libc_from_extension_suffix("p/_m.cpython-312-x86_64-linux-musl.so"),
            Libc::musl);
  EXPECT_EQ(
      libc_from_extension_suffix("p/_m.cpython-313-aarch64-linux-android.so"),
      Libc::bionic);
  EXPECT_EQ(libc_from_extension_suffix("_m.cpython-311-x86_64-linux-gnu.so"),
            Libc::glibc);
  EXPECT_EQ(libc_from_extension_suffix("_m.cpython-313-x86_64-linux-gnu.so"),
            Libc::glibc);
  // Before 3.11 musl builds of CPython used the gnu suffix too.
  EXPECT_EQ(libc_from_extension_suffix("_m.cpython-310-x86_64-linux-gnu.so"),
            std::nullopt);
  EXPECT_EQ(libc_from_extension_suffix("_m.pypy310-pp73-x86_64-linux-gnu.so"),
            std::nullopt);
  EXPECT_EQ(libc_from_extension_suffix("_m.abi3.so"), std::nullopt);
  EXPECT_EQ(libc_from_extension_suffix("libfoo.so.1"), std::nullopt);
}

TEST(LibcOf, InterpreterThenNeeded) {
  ElfSpec s;
  s.interp = "/lib/ld-musl-aarch64.so.1";
  EXPECT_EQ(libc_of(Image(true, true, s).elf), Libc::musl);
  s.interp = "/lib64/ld-linux-x86-64.so.2";
  EXPECT_EQ(libc_of(Image(true, true, s).elf), Libc::glibc);
  s.interp = "/lib/ld64.so.2";
  EXPECT_EQ(libc_of(Image(true, false, s).elf), Libc::glibc);
  s.interp.reset();
  s.needed = {"libm.so.6", "libc.so.6"};
  EXPECT_EQ(libc_of(Image(true, true, s).elf), Libc::glibc);
  s.needed = {"libc.musl-x86_64.so.1"};
  EXPECT_EQ(libc_of(Image(true, true, s).elf), Libc::musl);
  s.needed = {"libc.so"};
  EXPECT_EQ(libc_of(Image(true, true, s).elf), Libc::musl);
  s.needed = {"libfoo.so"};
  EXPECT_EQ(libc_of(Image(true, true, s).elf), std::nullopt);
}

}  // namespace
}  // namespace libpkg::deps
