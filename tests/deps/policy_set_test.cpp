// SPDX-License-Identifier: BSD-3-Clause
// PolicySet: parsing, validation of bad and non-monotonic data, loading user
// files, the embedded tables, find() and tags().
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "../base/temp_dir.hpp"
#include "libpkg/base/error.hpp"
#include "libpkg/deps/policy.hpp"
#include "policy_fixtures.hpp"

namespace {

using libpkg::Errc;
using libpkg::Error;
using libpkg::deps::Libc;
using libpkg::deps::Policy;
using libpkg::deps::PolicySet;

PolicySet small() {
  return PolicySet::parse(libpkg::testing::small_policy_json(), "small.json",
                          Libc::glibc);
}

// The error a parse throws (fails the test when none is thrown).
Error parse_error(const std::string& json) {
  try {
    PolicySet::parse(json, "bad.json", Libc::glibc);
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << "no error for " << json;
  return Error(Errc::io, "", "");
}

std::string one(const std::string& fields) {
  return "[{\"name\": \"manylinux_x\", \"priority\": 10, " + fields + "}]";
}

TEST(PolicyParse, SortsByPriorityAndReadsFields) {
  auto set = small();
  ASSERT_EQ(set.policies().size(), 3u);
  EXPECT_EQ(set.policies()[0].name, "manylinux_2_5");
  EXPECT_EQ(set.policies()[1].name, "manylinux_2_17");
  EXPECT_EQ(set.policies()[2].name, "linux");
  const Policy& p = set.policies()[1];
  EXPECT_EQ(p.priority, 80);
  EXPECT_EQ(p.aliases, std::vector<std::string>{"manylinux2014"});
  EXPECT_EQ(p.libc, Libc::glibc);
  EXPECT_EQ(p.symbol_versions.at("x86_64").at("GLIBC").size(), 3u);
  EXPECT_TRUE(p.symbol_versions.at("x86_64").at("CXXABI").contains("TM_1"));
  EXPECT_TRUE(p.lib_whitelist.contains("libz.so.1"));
  EXPECT_TRUE(set.policies()[0].blacklist.at("libc.so.6").contains("bad_sym"));
  auto family = set.family(Libc::glibc);
  ASSERT_EQ(family.size(), 2u);
  EXPECT_EQ(family[0]->name, "manylinux_2_5");
  EXPECT_TRUE(set.family(Libc::musl).empty());
}

TEST(PolicyParse, AddsLinuxWhenAbsentAndAcceptsMissingOptionalFields) {
  auto set = PolicySet::parse(
      one("\"symbol_versions\": {}, \"lib_whitelist\": [\"libc.so.6\"]"),
      "x.json", Libc::glibc);
  ASSERT_EQ(set.policies().size(), 2u);
  EXPECT_EQ(set.policies()[1].name, "linux");
  EXPECT_EQ(set.policies()[1].priority, 0);
  EXPECT_TRUE(set.policies()[0].aliases.empty());
  EXPECT_TRUE(set.policies()[0].blacklist.empty());
}

TEST(PolicyParse, MalformedJsonNamesFileAndOffset) {
  auto e = parse_error("[{\"name\": \"a\",, }]");
  EXPECT_EQ(e.code(), Errc::format);
  EXPECT_EQ(e.file(), "bad.json");
  EXPECT_NE(e.message().find("invalid JSON"), std::string::npos);
  ASSERT_TRUE(e.offset().has_value());  // the second ',' (nlohmann counts
  EXPECT_GE(*e.offset(), 14u);          // the byte read, 1-based)
  EXPECT_LE(*e.offset(), 15u);
  EXPECT_EQ(parse_error("").code(), Errc::format);
  EXPECT_NE(parse_error("{}").message().find("list of policies"),
            std::string::npos);
}

TEST(PolicyParse, BadFieldsAreNamed) {
  struct Case {
    std::string json, expect;
  };
  const std::vector<Case> cases = {
      {"[3]", "policy #0: must be an object"},
      {"[{\"priority\": 1}]", "policy #0: missing 'name'"},
      {"[{\"name\": \"\", \"priority\": 1}]", "'name' must be a non-empty"},
      {"[{\"name\": \"m\"}]", "policy m: missing 'priority'"},
      {one("\"priority\": \"high\""), "'priority' must be an integer"},
      {"[{\"name\": \"m\", \"priority\": -3}]",
       "'priority' must be an integer"},
      {"[{\"name\": \"m\", \"priority\": 1.5}]",
       "'priority' must be an integer"},
      {one("\"lib_whitelist\": []"),
       "policy manylinux_x: missing 'symbol_versions'"},
      {one("\"symbol_versions\": []"), "'symbol_versions' must be an object"},
      {one("\"symbol_versions\": {\"x86_64\": [\"GLIBC\"]}"),
       "'symbol_versions.x86_64' must be an object"},
      {one("\"symbol_versions\": {\"x86_64\": {\"GLIBC\": \"2.17\"}}"),
       "'symbol_versions.x86_64.GLIBC' must be a list"},
      {one("\"symbol_versions\": {\"x86_64\": {\"GLIBC\": [2.17]}}"),
       "'symbol_versions.x86_64.GLIBC' must contain only strings"},
      {one("\"symbol_versions\": {}"), "missing 'lib_whitelist'"},
      {one("\"symbol_versions\": {}, \"lib_whitelist\": [1]"),
       "'lib_whitelist' must contain only strings"},
      {one("\"symbol_versions\": {}, \"lib_whitelist\": [], \"aliases\": "
           "\"m1\""),
       "'aliases' must be a list"},
      {one("\"symbol_versions\": {}, \"lib_whitelist\": [], \"blacklist\": "
           "[]"),
       "'blacklist' must be an object"},
      {one("\"symbol_versions\": {}, \"lib_whitelist\": [], \"blacklist\": "
           "{\"libc.so.6\": [null]}"),
       "'blacklist.libc.so.6' must contain only strings"},
      {"[{\"name\": \"linux\", \"priority\": 5, \"symbol_versions\": {}, "
       "\"lib_whitelist\": []}]",
       "the 'linux' policy must have priority 0"},
      {"[{\"name\": \"m\", \"priority\": 0, \"symbol_versions\": {}, "
       "\"lib_whitelist\": []}]",
       "priority 0 is reserved"},
  };
  for (const auto& c : cases) {
    auto e = parse_error(c.json);
    EXPECT_EQ(e.code(), Errc::format) << c.json;
    EXPECT_EQ(e.file(), "bad.json");
    EXPECT_NE(e.message().find(c.expect), std::string::npos)
        << c.json << " → " << e.message();
  }
}

TEST(PolicyParse, DuplicateNamesAliasesAndPriorities) {
  auto base = [](const std::string& name, const std::string& alias, int prio) {
    return "{\"name\": \"" + name + "\", \"aliases\": [\"" + alias +
           "\"], \"priority\": " + std::to_string(prio) +
           ", \"symbol_versions\": {}, \"lib_whitelist\": []}";
  };
  auto e = parse_error("[" + base("a", "x", 2) + "," + base("a", "y", 1) + "]");
  EXPECT_NE(e.message().find("name 'a' is already used"), std::string::npos)
      << e.message();
  e = parse_error("[" + base("a", "x", 2) + "," + base("b", "x", 1) + "]");
  EXPECT_NE(e.message().find("policy b: name 'x' is already used by policy a"),
            std::string::npos)
      << e.message();
  e = parse_error("[" + base("a", "x", 2) + "," + base("b", "y", 2) + "]");
  EXPECT_NE(e.message().find("priority 2 is already used"), std::string::npos)
      << e.message();
}

// PEP 600: a newer (less compatible) policy allows everything an older one
// does.
TEST(PolicyParse, NonMonotonicWhitelistIsRejected) {
  auto json = libpkg::testing::small_policy_json();
  // manylinux_2_17 (priority 80) loses libm.so.6, which manylinux_2_5 allows.
  auto pos = json.find("\"libc.so.6\", \"libm.so.6\", \"libz.so.1\"");
  ASSERT_NE(pos, std::string::npos);
  json.replace(pos, std::string("\"libc.so.6\", \"libm.so.6\"").size(),
               "\"libc.so.6\"");
  auto e = parse_error(json);
  EXPECT_EQ(e.code(), Errc::format);
  EXPECT_NE(e.message().find("policy manylinux_2_17: lib_whitelist lacks "
                             "libm.so.6, which the more compatible policy "
                             "manylinux_2_5 allows"),
            std::string::npos)
      << e.message();
}

TEST(PolicyParse, NonMonotonicSymbolVersionsAreRejected) {
  auto json = libpkg::testing::small_policy_json();
  auto pos = json.find("[\"2.2.5\", \"2.3\", \"2.17\"]");
  ASSERT_NE(pos, std::string::npos);
  json.replace(pos, std::string("[\"2.2.5\", \"2.3\", \"2.17\"]").size(),
               "[\"2.2.5\", \"2.17\"]");
  auto e = parse_error(json);
  EXPECT_NE(
      e.message().find(
          "policy manylinux_2_17: symbol_versions.x86_64.GLIBC lacks 2.3"),
      std::string::npos)
      << e.message();
  // A version list shrinking in an arch only the newer policy has is fine.
  EXPECT_NO_THROW(small());
}

TEST(PolicyLoad, ReadsUserFilesAndInfersTheFamily) {
  libpkg::testing::TempDir dir;
  auto write = [&](const std::string& name, const std::string& text) {
    std::ofstream(dir / name) << text;
    return dir / name;
  };
  auto set =
      PolicySet::load(write("many.json", libpkg::testing::small_policy_json()));
  EXPECT_EQ(set.family(Libc::glibc).size(), 2u);
  auto musl = PolicySet::load(write(
      "musl.json",
      "[{\"name\": \"musllinux_1_2\", \"priority\": 90, \"symbol_versions\": "
      "{\"x86_64\": {}}, \"lib_whitelist\": [\"libc.so\"]}]"));
  ASSERT_EQ(musl.family(Libc::musl).size(), 1u);
  EXPECT_TRUE(musl.family(Libc::glibc).empty());
  auto mixed = write(
      "mixed.json",
      "[{\"name\": \"musllinux_1_2\", \"priority\": 90, \"symbol_versions\": "
      "{}, \"lib_whitelist\": []}, {\"name\": \"manylinux_2_17\", "
      "\"priority\": 80, \"symbol_versions\": {}, \"lib_whitelist\": []}]");
  try {
    PolicySet::load(mixed);
    ADD_FAILURE() << "mixed families accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::format);
    EXPECT_EQ(e.file(), mixed.string());
  }
  auto broken = write("broken.json", "[{\"name\": ");
  try {
    PolicySet::load(broken);
    ADD_FAILURE() << "truncated file accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::format);
    EXPECT_EQ(e.file(), broken.string());
  }
  try {
    PolicySet::load(dir / "absent.json");
    ADD_FAILURE() << "missing file accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::io);
  }
}

// The embedded tables are the files in data/policy/, byte for byte parsed
// the same way.
TEST(PolicyBuiltin, MatchesTheDataFiles) {
  const auto& builtin = PolicySet::builtin();
  auto many = PolicySet::load(LIBPKG_POLICY_DATA_DIR "/manylinux-policy.json");
  auto musl = PolicySet::load(LIBPKG_POLICY_DATA_DIR "/musllinux-policy.json");
  std::ifstream in(LIBPKG_POLICY_DATA_DIR "/manylinux-policy.json");
  auto raw = nlohmann::json::parse(in);
  auto glibc = builtin.family(Libc::glibc);
  ASSERT_EQ(glibc.size(), many.family(Libc::glibc).size());
  ASSERT_EQ(glibc.size() + 1, raw.size());  // the file lists "linux" too
  for (std::size_t i = 0; i < glibc.size(); ++i) {
    const Policy& a = *glibc[i];
    const Policy& b = *many.family(Libc::glibc)[i];
    EXPECT_EQ(a.name, b.name);
    EXPECT_EQ(a.priority, b.priority);
    EXPECT_EQ(a.symbol_versions, b.symbol_versions);
    EXPECT_EQ(a.lib_whitelist, b.lib_whitelist);
    EXPECT_EQ(a.blacklist, b.blacklist);
    if (i) {
      EXPECT_LT(a.priority, glibc[i - 1]->priority);
    }
  }
  for (const auto& item : raw) {
    const Policy* p = builtin.find(item["name"].get<std::string>());
    ASSERT_NE(p, nullptr) << item["name"];
    EXPECT_EQ(p->priority, item["priority"].get<int>());
    EXPECT_EQ(p->lib_whitelist.size(), item["lib_whitelist"].size());
  }
  auto m = builtin.family(Libc::musl);
  ASSERT_EQ(m.size(), 2u);
  EXPECT_EQ(m[0]->name, "musllinux_1_1");
  EXPECT_EQ(m[1]->name, "musllinux_1_2");
  EXPECT_EQ(m[1]->lib_whitelist, musl.family(Libc::musl)[1]->lib_whitelist);
  // Android: the user file is recognised as bionic, and the built-in
  // family is the same, API levels in order, tags with the NDK ABI names.
  auto android = PolicySet::load(LIBPKG_POLICY_DATA_DIR "/android-policy.json");
  auto a = builtin.family(Libc::bionic);
  ASSERT_EQ(a.size(), android.family(Libc::bionic).size());
  ASSERT_FALSE(a.empty());
  EXPECT_EQ(a[0]->name, "android_21");
  for (std::size_t i = 0; i < a.size(); ++i)
    EXPECT_EQ(a[i]->lib_whitelist,
              android.family(Libc::bionic)[i]->lib_whitelist);
  EXPECT_TRUE(a[0]->allows_library("libc.so"));
  EXPECT_FALSE(a[0]->allows_library("libcamera2ndk.so"));
  EXPECT_FALSE(a[0]->allows_library("ld-linux-aarch64.so.1"));
  EXPECT_EQ(a[0]->tags("aarch64"),
            std::vector<std::string>{"android_21_arm64_v8a"});
  EXPECT_EQ(builtin.find("android_24_arm64_v8a"), a[1]);
  EXPECT_EQ(builtin.find("android_24_x86_64"), a[1]);
  EXPECT_EQ(builtin.find("android_24_aarch64"), nullptr);
  // One "linux", last.
  std::size_t linux_count = 0;
  for (const auto& p : builtin.policies()) linux_count += p.name == "linux";
  EXPECT_EQ(linux_count, 1u);
  EXPECT_EQ(builtin.policies().back().name, "linux");
  // Facts from prior-art §1.1.
  const Policy* p217 = builtin.find("manylinux_2_17");
  ASSERT_NE(p217, nullptr);
  EXPECT_TRUE(
      p217->symbol_versions.at("x86_64").at("GLIBCXX").contains("3.4.19"));
  EXPECT_FALSE(
      p217->symbol_versions.at("x86_64").at("GLIBCXX").contains("3.4.20"));
  EXPECT_TRUE(
      p217->blacklist.at("libc.so.6").contains("__cxa_thread_atexit_impl"));
}

TEST(PolicyFind, NamesAliasesAndArchSuffixes) {
  const auto& set = PolicySet::builtin();
  auto name_of = [&](std::string_view query) -> std::string {
    const Policy* p = set.find(query);
    return p ? p->name : "<none>";
  };
  EXPECT_EQ(name_of("manylinux_2_17"), "manylinux_2_17");
  EXPECT_EQ(name_of("manylinux2014"), "manylinux_2_17");
  EXPECT_EQ(name_of("manylinux2014_x86_64"), "manylinux_2_17");
  EXPECT_EQ(name_of("manylinux2014_aarch64"), "manylinux_2_17");
  EXPECT_EQ(name_of("manylinux_2_17_x86_64"), "manylinux_2_17");
  EXPECT_EQ(name_of("manylinux1_x86_64"), "manylinux_2_5");
  EXPECT_EQ(name_of("manylinux2010_i686"), "manylinux_2_12");
  EXPECT_EQ(name_of("manylinux_2_28_riscv64"), "<none>");  // no such arch
  EXPECT_EQ(name_of("manylinux_2_31_riscv64"), "manylinux_2_31");
  EXPECT_EQ(name_of("manylinux1_aarch64"), "<none>");
  EXPECT_EQ(name_of("musllinux_1_2_aarch64"), "musllinux_1_2");
  EXPECT_EQ(name_of("musllinux_1_1"), "musllinux_1_1");
  EXPECT_EQ(name_of("linux"), "linux");
  EXPECT_EQ(name_of("linux_x86_64"), "linux");
  EXPECT_EQ(name_of("linux_sparc"), "<none>");
  EXPECT_EQ(name_of("manylinux_2_1"), "<none>");
  EXPECT_EQ(name_of("manylinux_2_17_"), "<none>");
  EXPECT_EQ(name_of("manylinux_2_17x86_64"), "<none>");
  EXPECT_EQ(name_of(""), "<none>");
  EXPECT_EQ(set.find("musllinux_1_2")->libc, Libc::musl);
}

TEST(PolicyTags, CanonicalThenAliasesWhereDefined) {
  const auto& set = PolicySet::builtin();
  using V = std::vector<std::string>;
  EXPECT_EQ(set.find("manylinux_2_17")->tags("x86_64"),
            (V{"manylinux_2_17_x86_64", "manylinux2014_x86_64"}));
  EXPECT_EQ(set.find("manylinux_2_17")->tags("ppc64"),
            (V{"manylinux_2_17_ppc64", "manylinux2014_ppc64"}));
  // manylinux2014 was never defined for riscv64.
  EXPECT_EQ(set.find("manylinux_2_17")->tags("riscv64"),
            (V{"manylinux_2_17_riscv64"}));
  EXPECT_EQ(set.find("manylinux_2_5")->tags("i686"),
            (V{"manylinux_2_5_i686", "manylinux1_i686"}));
  EXPECT_EQ(set.find("manylinux_2_12")->tags("x86_64"),
            (V{"manylinux_2_12_x86_64", "manylinux2010_x86_64"}));
  EXPECT_EQ(set.find("manylinux_2_28")->tags("aarch64"),
            (V{"manylinux_2_28_aarch64"}));
  EXPECT_EQ(set.find("linux")->tags("x86_64"), (V{"linux_x86_64"}));
  EXPECT_EQ(set.find("musllinux_1_2")->tag("aarch64"), "musllinux_1_2_aarch64");
}

TEST(PolicyLibraries, WhitelistLoaderAndMuslLibc) {
  const auto& set = PolicySet::builtin();
  const Policy* glibc = set.find("manylinux_2_17");
  EXPECT_TRUE(glibc->allows_library("libz.so.1"));
  EXPECT_TRUE(glibc->allows_library("libstdc++.so.6"));
  EXPECT_TRUE(glibc->allows_library("ld-linux-x86-64.so.2"));
  EXPECT_TRUE(glibc->allows_library("ld64.so.2"));
  EXPECT_FALSE(glibc->allows_library("libfoo.so.1"));
  EXPECT_FALSE(glibc->allows_library("libc.musl-x86_64.so.1"));
  EXPECT_FALSE(set.find("manylinux_2_17")->allows_library("libmvec.so.1"));
  EXPECT_TRUE(set.find("manylinux_2_24")->allows_library("libmvec.so.1"));
  const Policy* musl = set.find("musllinux_1_2");
  EXPECT_TRUE(musl->allows_library("libc.musl-x86_64.so.1"));
  EXPECT_TRUE(musl->allows_library("libc.musl-armv7.so.1"));
  EXPECT_TRUE(musl->allows_library("ld-musl-aarch64.so.1"));
  EXPECT_TRUE(musl->allows_library("libz.so.1"));
  EXPECT_FALSE(musl->allows_library("libc.so.6"));
  EXPECT_FALSE(musl->allows_library("libstdc++.so.6"));
  EXPECT_FALSE(musl->allows_library("ld-linux-x86-64.so.2"));
  EXPECT_FALSE(set.find("linux")->allows_library("libz.so.1"));
}

}  // namespace
