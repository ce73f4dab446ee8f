// SPDX-License-Identifier: BSD-3-Clause
// Matrix expansion: the built-in data file, filters, exclusions, and bad
// matrix files (Errc::format naming the file and the group).
#include "libpkg/config/matrix.hpp"

#include <gtest/gtest.h>

#include <set>

#include "libpkg/base/error.hpp"

namespace {

using libpkg::Errc;
using libpkg::Error;
using namespace libpkg::config;

std::vector<BuildConfig> builtin(const MatrixFilter& f = {}) {
  return expand_matrix(builtin_matrix_json(), "<built-in>", f);
}

TEST(Matrix, BuiltinIsValidAndUnique) {
  auto all = builtin();
  ASSERT_FALSE(all.empty());
  std::set<std::string> names;
  for (const auto& c : all) {
    EXPECT_TRUE(names.insert(build_name(c)).second)
        << "duplicate " << build_name(c);
    // Each entry's BUILD_ENVIRONMENT string parses back to it.
    EXPECT_EQ(parse_build_environment(c.build_environment()), c)
        << c.build_environment();
  }
}

TEST(Matrix, ExclusionsApply) {
  for (const auto& c : builtin()) {
    if (c.type == PackageType::manywheel && c.python->free_threaded) {
      EXPECT_NE(c.accelerator.kind, AcceleratorKind::rocm);
    }
    if (c.accelerator.kind == AcceleratorKind::rocm) {
      EXPECT_EQ(c.cxx_abi, libpkg::abi::CxxAbi::cxx11);
    }
  }
}

TEST(Matrix, Filters) {
  MatrixFilter f;
  f.package_types = {"manywheel"};
  f.accelerators = {"12.4"};  // any spelling
  f.pythons = {"cp311-cp311"};
  auto one = builtin(f);
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(build_name(one[0]), "manywheel-py3_11-cuda12_4");
  f = {};
  f.package_types = {"libtorch"};
  f.accelerators = {"rocm"};  // a kind
  for (const auto& c : builtin(f)) {
    EXPECT_EQ(c.type, PackageType::libtorch);
    EXPECT_EQ(c.accelerator.kind, AcceleratorKind::rocm);
  }
  f.pythons = {"3.11"};  // libtorch has none
  EXPECT_TRUE(builtin(f).empty());
  f = {};
  f.accelerators = {"cu12x"};
  EXPECT_THROW(builtin(f), Error);
}

TEST(Matrix, BuildNames) {
  // The legacy ABI suffix is part of the name: 2.7m and 2.7mu are two jobs.
  EXPECT_EQ(build_name(parse_build_environment("manywheel 2.7mu cpu")),
            "manywheel-py2_7mu-cpu");
  EXPECT_EQ(build_name(parse_build_environment("manywheel 2.7m cpu")),
            "manywheel-py2_7m-cpu");
  EXPECT_EQ(build_name(parse_build_environment("manywheel 3.13t rocm6.1")),
            "manywheel-py3_13t-rocm6_1");
  EXPECT_EQ(build_name(parse_build_environment("wheel 3.12 cpu arm64")),
            "wheel-py3_12-cpu-arm64");
  EXPECT_EQ(build_name(parse_build_environment("libtorch cpu macos arm64")),
            "libtorch-cpu-macos-arm64");
}

TEST(Matrix, JsonShape) {
  MatrixFilter f;
  f.package_types = {"libtorch"};
  f.accelerators = {"cpu"};
  std::string json = matrix_json(builtin(f), -1);
  EXPECT_EQ(json.rfind("{\"include\":[", 0), 0u) << json;
  EXPECT_NE(json.find("\"libtorch_variant\":\"static-without-deps\""),
            std::string::npos);
  EXPECT_NE(json.find("\"build_name\":\"libtorch-cpu-shared-with-deps-cxx11\""),
            std::string::npos);
}

TEST(Matrix, BadFiles) {
  const char* bad[] = {
      "{}",
      R"({"groups": [{"pythons": ["3.11"]}]})",
      R"({"groups": [{"package_type": "manywheel", "pythons": ["3.11"]}]})",
      R"({"groups": [{"package_type": "manywheel", "pythons": ["3.1x"],
                      "accelerators": ["cpu"]}]})",
      R"({"groups": [{"package_type": "conda", "pythons": ["3.11"],
                      "accelerators": ["rocm6.1"]}]})",
      R"({"groups": [{"package_type": "libtorch", "pythons": ["3.11"],
                      "accelerators": ["cpu"]}]})",
      R"({"groups": [], "exclude": [{"pyton": "3.11"}]})",
  };
  for (const char* text : bad) {
    SCOPED_TRACE(text);
    try {
      expand_matrix(text, "m.json");
      ADD_FAILURE() << "accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Errc::format) << e.what();
      EXPECT_EQ(e.file(), "m.json");
    }
  }
}

}  // namespace
