// SPDX-License-Identifier: BSD-3-Clause
// evaluate() on synthetic BinaryFacts: every blocker kind, grouping and
// examples, grafted libraries, missing libraries, pruning below allowed
// libraries, max_versions, the "linux" fallback and inconsistent inputs.
#include <gtest/gtest.h>

#include <functional>

#include "libpkg/base/error.hpp"
#include "libpkg/deps/policy.hpp"
#include "policy_fixtures.hpp"

namespace {

using libpkg::Errc;
using libpkg::Error;
using libpkg::abi::VersionRequirement;
using libpkg::deps::BinaryFacts;
using libpkg::deps::BlockerKind;
using libpkg::deps::EvaluateOptions;
using libpkg::deps::Evaluation;
using libpkg::deps::Libc;
using libpkg::deps::PolicySet;
using libpkg::deps::PolicyVerdict;

const PolicySet& small() {
  static const PolicySet set = PolicySet::parse(
      libpkg::testing::small_policy_json(), "small.json", Libc::glibc);
  return set;
}

BinaryFacts binary(std::string path,
                   std::vector<VersionRequirement> versions = {}) {
  BinaryFacts f;
  f.path = std::move(path);
  f.arch = "x86_64";
  f.libc = Libc::glibc;
  f.versions = std::move(versions);
  f.needed = {"libc.so.6"};
  return f;
}

VersionRequirement req(std::string library, std::string version,
                       std::vector<std::string> symbols = {}) {
  std::size_t count = symbols.size();
  return {std::move(library), std::move(version), std::move(symbols), count};
}

const PolicyVerdict& verdict(const Evaluation& e, std::string_view name) {
  for (const auto& v : e.verdicts)
    if (v.policy->name == name) return v;
  throw std::runtime_error("no verdict for " + std::string(name));
}

std::vector<std::string> names(const Evaluation& e) {
  std::vector<std::string> out;
  for (const auto& v : e.verdicts) out.push_back(v.policy->name);
  return out;
}

TEST(Evaluate, AllowedVersionsGiveTheMostCompatiblePolicy) {
  auto e = libpkg::deps::evaluate(
      {binary("a.so", {req("libc.so.6", "GLIBC_2.3"),
                       req("libstdc++.so.6", "CXXABI_TM_1")})},
      small());
  EXPECT_EQ(names(e), (std::vector<std::string>{"manylinux_2_5",
                                                "manylinux_2_17", "linux"}));
  ASSERT_NE(e.best, nullptr);
  EXPECT_EQ(e.best->name, "manylinux_2_5");
  EXPECT_EQ(e.arch, "x86_64");
  EXPECT_EQ(e.libc, Libc::glibc);
  for (const auto& v : e.verdicts) EXPECT_TRUE(v.satisfied) << v.policy->name;
}

TEST(Evaluate, TooRecentVersionBlocksWithExamples) {
  auto e = libpkg::deps::evaluate(
      {binary("pkg/a.so",
              {req("libc.so.6", "GLIBC_2.2.5", {"malloc"}),
               req("libc.so.6", "GLIBC_2.17",
                   {"clock_gettime", "secure_getenv", "x1", "x2"})})},
      small(), EvaluateOptions{.max_symbols = 2});
  const auto& v = verdict(e, "manylinux_2_5");
  EXPECT_FALSE(v.satisfied);
  ASSERT_EQ(v.blockers.size(), 1u);
  const auto& b = v.blockers[0];
  EXPECT_EQ(b.kind, BlockerKind::symbol_version);
  EXPECT_EQ(b.file, "pkg/a.so");
  EXPECT_EQ(b.detail, "GLIBC_2.17");
  EXPECT_EQ(b.from, "libc.so.6");
  EXPECT_EQ(b.symbols,
            (std::vector<std::string>{"clock_gettime", "secure_getenv"}));
  EXPECT_EQ(b.symbol_count, 4u);
  EXPECT_EQ(b.message(),
            "pkg/a.so: needs GLIBC_2.17 from libc.so.6 (4 symbols, e.g. "
            "clock_gettime, secure_getenv)");
  EXPECT_TRUE(verdict(e, "manylinux_2_17").satisfied);
  EXPECT_EQ(e.best->name, "manylinux_2_17");
}

TEST(Evaluate, UntrackedPrefixesIgnoredNonNumericVersionsBlock) {
  // FOO is not tracked: ignored. GLIBC_PRIVATE is tracked (GLIBC) and not
  // listed: blocks every policy. The loader's own requirements are skipped.
  auto e = libpkg::deps::evaluate(
      {binary("a.so", {req("libfoo.so", "FOO_99"),
                       req("ld-linux-x86-64.so.2", "GLIBC_PRIVATE"),
                       req("ld-linux-x86-64.so.2", "GLIBC_2.35")})},
      small());
  EXPECT_EQ(e.best->name, "manylinux_2_5");
  e = libpkg::deps::evaluate(
      {binary("a.so", {req("libc.so.6", "GLIBC_PRIVATE", {"__libc_x"}),
                       req("libstdc++.so.6", "CXXABI_TM_1")})},
      small());
  EXPECT_EQ(e.best->name, "linux");
  EXPECT_EQ(verdict(e, "manylinux_2_17").blockers.at(0).detail,
            "GLIBC_PRIVATE");
  EXPECT_EQ(verdict(e, "manylinux_2_17").blockers.size(), 1u);
  EXPECT_TRUE(verdict(e, "linux").satisfied);
}

TEST(Evaluate, OneBlockerPerFileAndVersion) {
  auto e = libpkg::deps::evaluate(
      {binary("a.so", {req("libc.so.6", "GLIBC_2.17", {"b", "d"}),
                       req("libm.so.6", "GLIBC_2.17", {"a", "c"})}),
       binary("b.so", {req("libc.so.6", "GLIBC_2.17", {"z"})})},
      small());
  const auto& v = verdict(e, "manylinux_2_5");
  ASSERT_EQ(v.blockers.size(), 2u);
  EXPECT_EQ(v.blockers[0].file, "a.so");
  EXPECT_EQ(v.blockers[0].from, "libc.so.6, libm.so.6");
  EXPECT_EQ(v.blockers[0].symbols, (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(v.blockers[0].symbol_count, 4u);
  EXPECT_EQ(v.blockers[1].file, "b.so");
}

TEST(Evaluate, ExternalLibrariesBlockUnlessWhitelisted) {
  auto a = binary("a.so");
  a.external = {{"libz.so.1", "/usr/lib/libz.so.1"},
                {"libfoo.so.2", "/opt/lib/libfoo.so.2.1"},
                {"libc.so.6", "/lib/libc.so.6"},
                {"ld-linux-x86-64.so.2", "/lib64/ld-linux-x86-64.so.2"}};
  auto e = libpkg::deps::evaluate({a}, small());
  const auto& v5 = verdict(e, "manylinux_2_5");
  ASSERT_EQ(v5.blockers.size(), 2u);
  EXPECT_EQ(v5.blockers[0].kind, BlockerKind::library);
  EXPECT_EQ(v5.blockers[0].detail, "libfoo.so.2");
  EXPECT_EQ(v5.blockers[0].from, "/opt/lib/libfoo.so.2.1");
  EXPECT_EQ(v5.blockers[0].file, "a.so");
  EXPECT_EQ(v5.blockers[1].detail, "libz.so.1");
  EXPECT_EQ(v5.blockers[0].message(),
            "a.so: links libfoo.so.2 (/opt/lib/libfoo.so.2.1), which the "
            "policy does not allow");
  const auto& v17 = verdict(e, "manylinux_2_17");
  ASSERT_EQ(v17.blockers.size(), 1u);
  EXPECT_EQ(v17.blockers[0].detail, "libfoo.so.2");
  EXPECT_EQ(e.best->name, "linux");
  // Without library blockers (what repair can reach) libfoo is grafted.
  e = libpkg::deps::evaluate({a}, small(), {.libraries_block = false});
  EXPECT_EQ(e.best->name, "manylinux_2_5");
}

TEST(Evaluate, LibrariesBelowAnAllowedLibraryDoNotCount) {
  auto a = binary("a.so");
  a.external = {{"libm.so.6", "/lib/libm.so.6"},
                {"libhelper.so.1", "/lib/libhelper.so.1"},
                {"libz.so.1", "/lib/libz.so.1"},
                {"libzdep.so.1", "/lib/libzdep.so.1"}};
  a.external_parent = {{"libhelper.so.1", "libm.so.6"},
                       {"libzdep.so.1", "libz.so.1"}};
  auto e = libpkg::deps::evaluate({a}, small());
  // manylinux_2_5 doesn't allow libz, so libz and what it pulls in count.
  const auto& v5 = verdict(e, "manylinux_2_5");
  ASSERT_EQ(v5.blockers.size(), 2u);
  EXPECT_EQ(v5.blockers[0].detail, "libz.so.1");
  EXPECT_EQ(v5.blockers[1].detail, "libzdep.so.1");
  EXPECT_TRUE(verdict(e, "manylinux_2_17").satisfied);
  EXPECT_EQ(e.best->name, "manylinux_2_17");
}

TEST(Evaluate, MissingAllowedLibrariesAreTheTargetSystems) {
  // A foreign-architecture wheel analysed without its sysroot: libc.so.6 is
  // not found, but every policy allows it.
  auto a = binary("a.so");
  a.external = {{"libc.so.6", ""}};
  auto e = libpkg::deps::evaluate({a}, small());
  EXPECT_EQ(e.best->name, "manylinux_2_5");
  // libz.so.1 not found: only the policy that doesn't allow it is blocked.
  a.external = {{"libz.so.1", ""}};
  e = libpkg::deps::evaluate({a}, small());
  EXPECT_EQ(verdict(e, "manylinux_2_17").blockers.size(), 0u);
  ASSERT_EQ(verdict(e, "manylinux_2_5").blockers.size(), 1u);
  EXPECT_EQ(verdict(e, "manylinux_2_5").blockers[0].kind,
            BlockerKind::missing_library);
  EXPECT_EQ(e.best->name, "manylinux_2_17");
}

// Evaluates `a` as it is and after repair; in both, only "linux" is
// satisfied and every other policy has the same `count` blockers of `kind`,
// passed to `check`.
void expect_every_policy_blocked(
    const BinaryFacts& a, std::size_t count, BlockerKind kind,
    const std::function<void(const std::vector<libpkg::deps::Blocker>&)>&
        check) {
  for (bool libraries_block : {true, false}) {
    auto e = libpkg::deps::evaluate({a}, small(),
                                    {.libraries_block = libraries_block});
    EXPECT_EQ(e.best->name, "linux");
    for (const char* name : {"manylinux_2_5", "manylinux_2_17"}) {
      const auto& v = verdict(e, name);
      ASSERT_EQ(v.blockers.size(), count) << name;
      for (const auto& b : v.blockers) EXPECT_EQ(b.kind, kind);
      check(v.blockers);
    }
  }
}

TEST(Evaluate, PythonAbiSymbolsBlockEveryPolicy) {
  auto a = binary("fpe.so");
  a.undefined = {{"PyFPE_jbuf", ""},
                 {"PyUnicodeUCS2_FromString", ""},
                 {"PyUnicode_FromString", ""}};
  expect_every_policy_blocked(a, 2, BlockerKind::python_abi, [](auto& b) {
    EXPECT_EQ(b[0].detail, "PyFPE_jbuf");
    EXPECT_EQ(b[1].detail, "PyUnicodeUCS2_FromString");
    EXPECT_NE(b[0].message().find("fpectl"), std::string::npos);
  });
}

TEST(Evaluate, LibpythonBlocksOnlyAsItIs) {
  auto a = binary("ext.so");
  a.needed = {"libpython3.11.so.1.0", "libc.so.6"};
  auto as_is = libpkg::deps::evaluate({a}, small());
  EXPECT_EQ(as_is.best->name, "linux");
  const auto& v = verdict(as_is, "manylinux_2_5");
  ASSERT_EQ(v.blockers.size(), 1u);
  EXPECT_EQ(v.blockers[0].kind, BlockerKind::libpython);
  EXPECT_EQ(v.blockers[0].detail, "libpython3.11.so.1.0");
  auto repaired =
      libpkg::deps::evaluate({a}, small(), {.libraries_block = false});
  EXPECT_EQ(repaired.best->name, "manylinux_2_5");
}

TEST(Evaluate, LibcOptionDecidesWhenNoBinarySays) {
  auto a = binary("a.so");
  a.libc = std::nullopt;
  a.needed = {};
  EXPECT_EQ(libpkg::deps::evaluate({a}, PolicySet::builtin()).libc,
            Libc::glibc);
  auto e =
      libpkg::deps::evaluate({a}, PolicySet::builtin(), {.libc = Libc::musl});
  EXPECT_EQ(e.libc, Libc::musl);
  EXPECT_EQ(e.best->name, "musllinux_1_1");
  e = libpkg::deps::evaluate({a}, PolicySet::builtin(), {.libc = Libc::bionic});
  EXPECT_EQ(e.best->tag("x86_64"), "android_21_x86_64");
  a.arch = "aarch64";
  e = libpkg::deps::evaluate({a}, PolicySet::builtin(), {.libc = Libc::bionic});
  EXPECT_EQ(e.best->tag("aarch64"), "android_21_arm64_v8a");
  EXPECT_EQ(PolicySet::builtin().find("android_21_arm64_v8a"), e.best);
}

TEST(Evaluate, MissingLibrariesAlwaysBlock) {
  auto a = binary("a.so");
  a.external = {{"libgone.so.3", ""}};
  for (bool libraries_block : {true, false}) {
    auto e = libpkg::deps::evaluate({a}, small(),
                                    {.libraries_block = libraries_block});
    EXPECT_EQ(e.best->name, "linux");
    const auto& v = verdict(e, "manylinux_2_17");
    ASSERT_EQ(v.blockers.size(), 1u);
    EXPECT_EQ(v.blockers[0].kind, BlockerKind::missing_library);
    EXPECT_EQ(v.blockers[0].message(),
              "a.so: needs libgone.so.3, which was not found");
    EXPECT_TRUE(verdict(e, "linux").blockers.empty());
  }
}

TEST(Evaluate, GraftedLibrariesCountOnlyWherePolicyWouldGraftThem) {
  auto a = binary("a.so", {req("libc.so.6", "GLIBC_2.2.5")});
  a.external = {{"libz.so.1", "/usr/lib/libz.so.1"},
                {"libbar.so.1", "/usr/lib/libbar.so.1"}};
  // libz needs GLIBC_2.17: grafted for manylinux_2_5 only (2_17 allows it).
  auto z = binary("/usr/lib/libz.so.1.2.13",
                  {req("libc.so.6", "GLIBC_2.17", {"zsym"})});
  z.grafted = true;
  z.soname = "libz.so.1";
  auto bar = binary("/usr/lib/libbar.so.1", {req("libc.so.6", "GLIBC_2.3")});
  bar.grafted = true;  // soname from the path's file name
  EvaluateOptions repairable{.libraries_block = false};
  auto e = libpkg::deps::evaluate({a, z, bar}, small(), repairable);
  const auto& v5 = verdict(e, "manylinux_2_5");
  ASSERT_EQ(v5.blockers.size(), 1u);
  EXPECT_EQ(v5.blockers[0].file, "/usr/lib/libz.so.1.2.13");
  EXPECT_EQ(v5.blockers[0].detail, "GLIBC_2.17");
  EXPECT_EQ(v5.blockers[0].symbols, std::vector<std::string>{"zsym"});
  EXPECT_TRUE(verdict(e, "manylinux_2_17").satisfied);
  EXPECT_EQ(e.best->name, "manylinux_2_17");
  // max_versions covers what the best tag's wheel holds: a and libbar, not
  // libz (manylinux_2_17 uses the system's).
  EXPECT_EQ(e.max_versions.at("GLIBC").tag.str(), "GLIBC_2.3");
  EXPECT_EQ(e.max_versions.at("GLIBC").file, "/usr/lib/libbar.so.1");
  // With libraries blocking, grafted facts are ignored: libz and libbar
  // block instead.
  e = libpkg::deps::evaluate({a, z, bar}, small());
  for (const auto& b : verdict(e, "manylinux_2_5").blockers)
    EXPECT_EQ(b.kind, BlockerKind::library);
  EXPECT_EQ(verdict(e, "manylinux_2_5").blockers.size(), 2u);
  EXPECT_EQ(e.max_versions.at("GLIBC").tag.str(), "GLIBC_2.2.5");
}

TEST(Evaluate, BlacklistedSymbols) {
  auto a = binary("a.so");
  a.undefined = {{"bad_sym", "libc.so.6"}, {"good_sym", "libc.so.6"}};
  auto e = libpkg::deps::evaluate({a}, small());
  const auto& v = verdict(e, "manylinux_2_5");
  ASSERT_EQ(v.blockers.size(), 1u);
  EXPECT_EQ(v.blockers[0].kind, BlockerKind::blacklisted_symbol);
  EXPECT_EQ(v.blockers[0].detail, "bad_sym");
  EXPECT_EQ(v.blockers[0].from, "libc.so.6");
  EXPECT_EQ(
      v.blockers[0].message(),
      "a.so: references bad_sym from libc.so.6, which the policy forbids");
  EXPECT_EQ(e.best->name, "manylinux_2_17");
  // Unversioned: checked against the direct NEEDED libraries' blacklists.
  a.undefined = {{"bad_sym", ""}};
  EXPECT_EQ(libpkg::deps::evaluate({a}, small()).best->name, "manylinux_2_17");
  a.needed = {"libm.so.6"};
  EXPECT_EQ(libpkg::deps::evaluate({a}, small()).best->name, "manylinux_2_5");
  // Versioned from another library: not the blacklisted one.
  a.undefined = {{"bad_sym", "libm.so.6"}};
  EXPECT_EQ(libpkg::deps::evaluate({a}, small()).best->name, "manylinux_2_5");
}

TEST(Evaluate, MaxVersionsPerPrefixAcrossBinaries) {
  auto e = libpkg::deps::evaluate(
      {binary("a.so", {req("libc.so.6", "GLIBC_2.3", {"f"}),
                       req("libstdc++.so.6", "CXXABI_TM_1"),
                       req("libc.so.6", "GLIBC_PRIVATE")}),
       binary("b.so", {req("libm.so.6", "GLIBC_2.17", {"g", "h", "i", "j"}),
                       req("libc.so.6", "GLIBC_2.2.5"),
                       req("libstdc++.so.6", "CXXABI_1.3.7")})},
      small());
  ASSERT_EQ(e.max_versions.size(), 3u);
  const auto& glibc = e.max_versions.at("GLIBC");
  EXPECT_EQ(glibc.tag.str(), "GLIBC_2.17");
  EXPECT_EQ(glibc.file, "b.so");
  EXPECT_EQ(glibc.library, "libm.so.6");
  EXPECT_EQ(glibc.symbols, (std::vector<std::string>{"g", "h", "i"}));
  EXPECT_EQ(e.max_versions.at("CXXABI").tag.str(), "CXXABI_1.3.7");
  EXPECT_EQ(e.max_versions.at("CXXABI_TM").tag.str(), "CXXABI_TM_1");
}

TEST(Evaluate, ArchSelectsPolicies) {
  auto a = binary("a.so", {req("libc.so.6", "GLIBC_2.17")});
  a.arch = "aarch64";
  auto e = libpkg::deps::evaluate({a}, small());
  EXPECT_EQ(names(e), (std::vector<std::string>{"manylinux_2_17", "linux"}));
  EXPECT_EQ(e.best->name, "manylinux_2_17");
  a.arch = "riscv64";  // no policy has data for it
  e = libpkg::deps::evaluate({a}, small());
  EXPECT_EQ(names(e), (std::vector<std::string>{"linux"}));
  EXPECT_EQ(e.best->tags("riscv64"),
            (std::vector<std::string>{"linux_riscv64"}));
}

TEST(Evaluate, MuslBinariesUseTheMuslFamily) {
  auto a = binary("a.so");
  a.libc = Libc::musl;
  a.needed = {"libc.musl-x86_64.so.1"};
  a.external = {{"libc.musl-x86_64.so.1", "/lib/libc.musl-x86_64.so.1"}};
  auto helper = binary("b.so");
  helper.libc = std::nullopt;  // says nothing about its libc
  auto e = libpkg::deps::evaluate({a, helper}, PolicySet::builtin());
  EXPECT_EQ(e.libc, Libc::musl);
  EXPECT_EQ(names(e), (std::vector<std::string>{"musllinux_1_1",
                                                "musllinux_1_2", "linux"}));
  EXPECT_EQ(e.best->name, "musllinux_1_1");
}

TEST(Evaluate, NoBinariesGiveLinuxOnly) {
  auto e = libpkg::deps::evaluate({}, small());
  EXPECT_EQ(names(e), (std::vector<std::string>{"linux"}));
  EXPECT_EQ(e.best->name, "linux");
  EXPECT_TRUE(e.max_versions.empty());
}

TEST(Evaluate, InconsistentBinariesAreRejected) {
  auto a = binary("a.so");
  auto b = binary("b.so");
  b.arch = "aarch64";
  try {
    libpkg::deps::evaluate({a, b}, small());
    ADD_FAILURE() << "mixed arches accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::unsupported);
    EXPECT_EQ(e.file(), "b.so");
    EXPECT_NE(e.message().find("a.so"), std::string::npos) << e.message();
  }
  b.arch = "x86_64";
  b.libc = Libc::musl;
  try {
    libpkg::deps::evaluate({a, b}, small());
    ADD_FAILURE() << "mixed libcs accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::unsupported);
    EXPECT_EQ(e.message(), "built for musl, but a.so is built for glibc");
  }
  b.arch = "";
  try {
    libpkg::deps::evaluate({b}, small());
    ADD_FAILURE() << "unknown machine accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::unsupported);
  }
}

TEST(Evaluate, IsaLevelAboveBaselineBlocksEveryPolicy) {
  auto a = binary("ext.so");
  a.isa_level = "x86-64-v3";
  expect_every_policy_blocked(a, 1, BlockerKind::isa_extension, [](auto& b) {
    EXPECT_EQ(b[0].file, "ext.so");
    EXPECT_EQ(b[0].detail, "x86-64-v3");
    EXPECT_NE(
        b[0].message().find("ext.so: requires the x86-64-v3 instruction set"),
        std::string::npos);
  });
  // --disable-isa-ext-check
  for (bool libraries_block : {true, false}) {
    auto off = libpkg::deps::evaluate(
        {a}, small(),
        {.libraries_block = libraries_block, .isa_ext_check = false});
    EXPECT_EQ(off.best->name, "manylinux_2_5");
  }
}

TEST(Evaluate, IsaLevelOfAGraftedLibraryBlocksWhereItIsGrafted) {
  auto a = binary("a.so");
  a.external = {{"libz.so.1", "/usr/lib/libz.so.1"}};
  auto z = binary("/usr/lib/libz.so.1.2.13");
  z.grafted = true;
  z.soname = "libz.so.1";
  z.isa_level = "x86-64-v2";
  // manylinux_2_17 allows libz (the system's copy, not the wheel's).
  auto e = libpkg::deps::evaluate({a, z}, small(), {.libraries_block = false});
  const auto& v5 = verdict(e, "manylinux_2_5");
  ASSERT_EQ(v5.blockers.size(), 1u);
  EXPECT_EQ(v5.blockers[0].kind, BlockerKind::isa_extension);
  EXPECT_EQ(v5.blockers[0].file, "/usr/lib/libz.so.1.2.13");
  EXPECT_EQ(v5.blockers[0].detail, "x86-64-v2");
  EXPECT_EQ(e.best->name, "manylinux_2_17");
}

TEST(Blocker, KindNames) {
  EXPECT_STREQ(libpkg::deps::blocker_kind_name(BlockerKind::symbol_version),
               "symbol_version");
  EXPECT_STREQ(libpkg::deps::blocker_kind_name(BlockerKind::library),
               "library");
  EXPECT_STREQ(libpkg::deps::blocker_kind_name(BlockerKind::blacklisted_symbol),
               "blacklisted_symbol");
  EXPECT_STREQ(libpkg::deps::blocker_kind_name(BlockerKind::missing_library),
               "missing_library");
  EXPECT_STREQ(libpkg::deps::blocker_kind_name(BlockerKind::python_abi),
               "python_abi");
  EXPECT_STREQ(libpkg::deps::blocker_kind_name(BlockerKind::libpython),
               "libpython");
  EXPECT_STREQ(libpkg::deps::blocker_kind_name(BlockerKind::isa_extension),
               "isa_extension");
}

}  // namespace
