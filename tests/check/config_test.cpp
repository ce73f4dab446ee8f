// SPDX-License-Identifier: BSD-3-Clause
// The build configuration as the old scripts spelled it: every DESIRED_CUDA
// form parse_accelerator accepts (and the near misses it must refuse rather
// than slice into a wrong version), the ABI from DESIRED_DEVTOOLSET and
// --abi, and check::expectation_from_env over an injected environment.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "libpkg/base/error.hpp"
#include "libpkg/check/check.hpp"
#include "libpkg/config/accelerator.hpp"

namespace {

using libpkg::Errc;
using libpkg::Error;
using libpkg::abi::CxxAbi;
using libpkg::config::abi_from_devtoolset;
using libpkg::config::Accelerator;
using libpkg::config::AcceleratorKind;
using libpkg::config::parse_accelerator;
using libpkg::config::parse_cxx_abi;

struct Spelling {
  const char* text;
  AcceleratorKind kind;
  int major, minor;
  std::optional<int> patch;
  const char* version;
  const char* tag;
};

class AcceleratorSpelling : public testing::TestWithParam<Spelling> {};

TEST_P(AcceleratorSpelling, Parses) {
  const Spelling& s = GetParam();
  Accelerator a = parse_accelerator(s.text);
  EXPECT_EQ(a.kind, s.kind) << s.text;
  EXPECT_EQ(a.major, s.major) << s.text;
  EXPECT_EQ(a.minor, s.minor) << s.text;
  EXPECT_EQ(a.patch, s.patch) << s.text;
  EXPECT_EQ(a.version(), s.version) << s.text;
  EXPECT_EQ(a.tag(), s.tag) << s.text;
}

constexpr auto kCpu = AcceleratorKind::cpu;
constexpr auto kCuda = AcceleratorKind::cuda;
constexpr auto kRocm = AcceleratorKind::rocm;
constexpr auto kXpu = AcceleratorKind::xpu;

INSTANTIATE_TEST_SUITE_P(
    OldScripts, AcceleratorSpelling,
    testing::Values(
        Spelling{"cpu", kCpu, 0, 0, std::nullopt, "", "cpu"},
        // The suffix names the image, not the accelerator.
        Spelling{"cpu-cxx11-abi", kCpu, 0, 0, std::nullopt, "", "cpu"},
        // cuXY / cuXYZ: the last digit is the minor version.
        Spelling{"cu92", kCuda, 9, 2, std::nullopt, "9.2", "cu92"},
        Spelling{"cu100", kCuda, 10, 0, std::nullopt, "10.0", "cu100"},
        Spelling{"cu118", kCuda, 11, 8, std::nullopt, "11.8", "cu118"},
        Spelling{"cu124", kCuda, 12, 4, std::nullopt, "12.4", "cu124"},
        Spelling{"12.4", kCuda, 12, 4, std::nullopt, "12.4", "cu124"},
        Spelling{"cuda12.4", kCuda, 12, 4, std::nullopt, "12.4", "cu124"},
        Spelling{"11.8", kCuda, 11, 8, std::nullopt, "11.8", "cu118"},
        Spelling{"rocm6.1", kRocm, 6, 1, std::nullopt, "6.1", "rocm6.1"},
        Spelling{"rocm6.2.4", kRocm, 6, 2, 4, "6.2.4", "rocm6.2.4"},
        Spelling{"xpu", kXpu, 0, 0, std::nullopt, "", "xpu"}));

TEST(Accelerator, SpellingsOfOneVersionAreEqual) {
  EXPECT_EQ(parse_accelerator("cu124"), parse_accelerator("12.4"));
  EXPECT_EQ(parse_accelerator("cu124"), parse_accelerator("cuda12.4"));
  EXPECT_EQ(parse_accelerator("cpu"), parse_accelerator("cpu-cxx11-abi"));
  EXPECT_NE(parse_accelerator("cu124"), parse_accelerator("cu121"));
  EXPECT_NE(parse_accelerator("rocm6.2"), parse_accelerator("rocm6.2.4"));
}

TEST(Accelerator, KindNames) {
  EXPECT_STREQ(libpkg::config::accelerator_kind_name(kCpu), "cpu");
  EXPECT_STREQ(libpkg::config::accelerator_kind_name(kCuda), "cuda");
  EXPECT_STREQ(libpkg::config::accelerator_kind_name(kRocm), "rocm");
  EXPECT_STREQ(libpkg::config::accelerator_kind_name(kXpu), "xpu");
}

class AcceleratorRejects : public testing::TestWithParam<const char*> {};

// Each near miss is a usage error that names the value (the old scripts
// would have sliced "cu1" into a version).
TEST_P(AcceleratorRejects, UsageErrorNamingTheValue) {
  const std::string text = GetParam();
  try {
    Accelerator a = parse_accelerator(text);
    ADD_FAILURE() << "'" << text << "' parsed as " << a.tag();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::usage) << text;
    EXPECT_NE(std::string(e.what()).find("'" + text + "'"), std::string::npos)
        << e.what();
  }
}

INSTANTIATE_TEST_SUITE_P(NearMisses, AcceleratorRejects,
                         testing::Values("cu1", "cu12345", "12", "12.x", "foo",
                                         "", "cu", "cuda", "cuda12", "rocm",
                                         "rocm6", "rocm6.x", "cu12a", "gpu"));

TEST(CxxAbi, FromDevtoolset) {
  EXPECT_EQ(abi_from_devtoolset("devtoolset-9-cxx11-abi", std::nullopt),
            CxxAbi::cxx11);
  EXPECT_EQ(abi_from_devtoolset("cxx11-abi", std::nullopt), CxxAbi::cxx11);
  EXPECT_EQ(abi_from_devtoolset("devtoolset-9", std::nullopt),
            CxxAbi::pre_cxx11);
  EXPECT_EQ(abi_from_devtoolset("", std::nullopt), CxxAbi::pre_cxx11);
  EXPECT_EQ(abi_from_devtoolset("devtoolset-11", parse_accelerator("cu124")),
            CxxAbi::pre_cxx11);
  EXPECT_EQ(abi_from_devtoolset("", parse_accelerator("cpu")),
            CxxAbi::pre_cxx11);
  // ROCm builds always use the new ABI.
  EXPECT_EQ(abi_from_devtoolset("", parse_accelerator("rocm6.1")),
            CxxAbi::cxx11);
  EXPECT_EQ(abi_from_devtoolset("devtoolset-9", parse_accelerator("rocm6.1")),
            CxxAbi::cxx11);
}

TEST(CxxAbi, Parse) {
  for (const char* s : {"cxx11", "1", "new"})
    EXPECT_EQ(parse_cxx_abi(s), CxxAbi::cxx11) << s;
  for (const char* s : {"pre-cxx11", "0", "old"})
    EXPECT_EQ(parse_cxx_abi(s), CxxAbi::pre_cxx11) << s;
  for (const char* s : {"cxx98", "", "2", "pre"}) {
    try {
      parse_cxx_abi(s);
      ADD_FAILURE() << "'" << s << "' parsed";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Errc::usage) << s;
    }
  }
}

// expectation_from_env over a map: the library never reads the real
// environment.
libpkg::check::Expectation from(std::map<std::string, std::string> env) {
  return libpkg::check::expectation_from_env(
      [env](const std::string& name) -> std::optional<std::string> {
        auto it = env.find(name);
        if (it == env.end()) return std::nullopt;
        return it->second;
      });
}

TEST(ExpectationFromEnv, EmptyEnvironmentExpectsNothing) {
  auto e = from({});
  EXPECT_FALSE(e.accelerator);
  EXPECT_FALSE(e.cxx_abi);
  EXPECT_FALSE(e.package_type);
  EXPECT_FALSE(e.platform);
  EXPECT_TRUE(e.libraries.empty());
}

TEST(ExpectationFromEnv, DesiredVariables) {
  auto e = from({{"DESIRED_CUDA", "cu124"},
                 {"DESIRED_DEVTOOLSET", "devtoolset-11-cxx11-abi"},
                 {"PACKAGE_TYPE", "manywheel"}});
  ASSERT_TRUE(e.accelerator);
  EXPECT_EQ(*e.accelerator, parse_accelerator("12.4"));
  EXPECT_EQ(e.cxx_abi, CxxAbi::cxx11);
  EXPECT_EQ(e.package_type, "manywheel");

  e = from({{"DESIRED_CUDA", "cpu"}, {"DESIRED_DEVTOOLSET", "devtoolset-9"}});
  ASSERT_TRUE(e.accelerator);
  EXPECT_EQ(e.accelerator->kind, kCpu);
  EXPECT_EQ(e.cxx_abi, CxxAbi::pre_cxx11);
  EXPECT_FALSE(e.package_type);
}

TEST(ExpectationFromEnv, RocmImpliesCxx11) {
  auto e = from({{"DESIRED_CUDA", "rocm6.1"}});
  ASSERT_TRUE(e.accelerator);
  EXPECT_EQ(e.accelerator->kind, kRocm);
  EXPECT_EQ(e.cxx_abi, CxxAbi::cxx11);
  e = from(
      {{"DESIRED_CUDA", "rocm6.1"}, {"DESIRED_DEVTOOLSET", "devtoolset-9"}});
  EXPECT_EQ(e.cxx_abi, CxxAbi::cxx11);
}

TEST(ExpectationFromEnv, MatrixFallbacks) {
  auto e = from({{"MATRIX_DESIRED_CUDA", "cu118"},
                 {"MATRIX_DESIRED_DEVTOOLSET", "cxx11-abi"},
                 {"MATRIX_PACKAGE_TYPE", "libtorch"}});
  ASSERT_TRUE(e.accelerator);
  EXPECT_EQ(e.accelerator->tag(), "cu118");
  EXPECT_EQ(e.cxx_abi, CxxAbi::cxx11);
  EXPECT_EQ(e.package_type, "libtorch");
  // The plain variable wins over its MATRIX_ form.
  e = from({{"DESIRED_CUDA", "cpu"},
            {"MATRIX_DESIRED_CUDA", "cu118"},
            {"PACKAGE_TYPE", "conda"},
            {"MATRIX_PACKAGE_TYPE", "libtorch"}});
  ASSERT_TRUE(e.accelerator);
  EXPECT_EQ(e.accelerator->kind, kCpu);
  EXPECT_EQ(e.package_type, "conda");
}

TEST(ExpectationFromEnv, BadValueNamesTheVariable) {
  for (const char* var : {"DESIRED_CUDA", "MATRIX_DESIRED_CUDA"}) {
    try {
      from({{var, "cu1"}});
      ADD_FAILURE() << var << "=cu1 accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Errc::usage);
      EXPECT_NE(std::string(e.what()).find(var), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("cu1"), std::string::npos)
          << e.what();
    }
  }
}

}  // namespace
