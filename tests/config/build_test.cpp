// SPDX-License-Identifier: BSD-3-Clause
// BuildConfig parsing: every PythonVersion spelling, the BUILD_ENVIRONMENT
// forms of builder-scripts.md §6.3, the environment-variable layer (§2.2,
// §8.38) over an injected environment, flag overrides, and the refused
// combinations — each error must be Errc::usage and name the value.
#include "libpkg/config/build.hpp"

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "libpkg/base/error.hpp"

namespace {

using libpkg::Errc;
using libpkg::Error;
using libpkg::abi::CxxAbi;
using namespace libpkg::config;

// Runs `f`, expecting Errc::usage with every `needle` in the message.
template <class F>
void expect_usage(F&& f, std::initializer_list<const char*> needles) {
  try {
    f();
    ADD_FAILURE() << "no error; expected one mentioning " << *needles.begin();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::usage) << e.what();
    for (const char* n : needles)
      EXPECT_NE(std::string(e.what()).find(n), std::string::npos)
          << "'" << e.what() << "' lacks '" << n << "'";
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos)
        << "multi-line: " << e.what();
  }
}

struct PySpelling {
  const char* text;
  int major, minor;
  bool free_threaded;
  const char* suffix;
  const char* python_tag;
  const char* abi_tag;
  const char* dotted;
  const char* str;
};

TEST(PythonVersion, EverySpelling) {
  const PySpelling cases[] = {
      {"3.9", 3, 9, false, "", "cp39", "cp39", "3.9", "3.9"},
      {"3.10", 3, 10, false, "", "cp310", "cp310", "3.10", "3.10"},
      {"3.11", 3, 11, false, "", "cp311", "cp311", "3.11", "3.11"},
      {"3.12", 3, 12, false, "", "cp312", "cp312", "3.12", "3.12"},
      {"3.13", 3, 13, false, "", "cp313", "cp313", "3.13", "3.13"},
      {"3.13t", 3, 13, true, "", "cp313", "cp313t", "3.13t", "3.13t"},
      {"2.7mu", 2, 7, false, "mu", "cp27", "cp27mu", "2.7", "2.7mu"},
      {"2.7m", 2, 7, false, "m", "cp27", "cp27m", "2.7", "2.7m"},
      {"3.7m", 3, 7, false, "m", "cp37", "cp37m", "3.7", "3.7m"},
      {"3.7", 3, 7, false, "", "cp37", "cp37", "3.7", "3.7"},
      {"cp311-cp311", 3, 11, false, "", "cp311", "cp311", "3.11", "3.11"},
      {"cp313-cp313t", 3, 13, true, "", "cp313", "cp313t", "3.13t", "3.13t"},
      {"cp37-cp37m", 3, 7, false, "m", "cp37", "cp37m", "3.7", "3.7m"},
      {"cp27-cp27mu", 2, 7, false, "mu", "cp27", "cp27mu", "2.7", "2.7mu"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.text);
    PythonVersion v = PythonVersion::parse(c.text);
    EXPECT_EQ(v.major, c.major);
    EXPECT_EQ(v.minor, c.minor);
    EXPECT_EQ(v.free_threaded, c.free_threaded);
    EXPECT_EQ(v.abi_suffix, c.suffix);
    EXPECT_EQ(v.python_tag(), c.python_tag);
    EXPECT_EQ(v.abi_tag(), c.abi_tag);
    EXPECT_EQ(v.dotted(), c.dotted);
    EXPECT_EQ(v.str(), c.str);
    EXPECT_EQ(PythonVersion::parse(v.str()), v);  // round trip
  }
}

TEST(PythonVersion, Refused) {
  for (const char* bad :
       {"", "3", "3.", "three", "4.0", "3.8m", "3.11m", "3.7mu", "3.12t", "2.6",
        "3.11x", "cp311-cp310", "cp3", "cp311-abi3", "3.1234"}) {
    SCOPED_TRACE(bad);
    expect_usage([&] { PythonVersion::parse(bad); },
                 {"python version", "accepted"});
  }
  expect_usage([&] { PythonVersion::parse("3.14x"); }, {"'3.14x'"});
}

TEST(PackageType, Names) {
  EXPECT_EQ(parse_package_type("manywheel"), PackageType::manywheel);
  EXPECT_EQ(parse_package_type("conda"), PackageType::conda);
  EXPECT_EQ(parse_package_type("libtorch"), PackageType::libtorch);
  EXPECT_EQ(parse_package_type("wheel"), PackageType::wheel_macos);
  EXPECT_EQ(parse_package_type("wheel_macos"), PackageType::wheel_macos);
  EXPECT_STREQ(package_type_name(PackageType::wheel_macos), "wheel");
  expect_usage([] { parse_package_type("manywheels"); },
               {"'manywheels'", "manywheel, conda, libtorch, wheel"});
}

TEST(BuildEnvironment, DocExamples) {
  BuildConfig c = parse_build_environment("manywheel 3.7m cu100 devtoolset7");
  EXPECT_EQ(c.type, PackageType::manywheel);
  EXPECT_EQ(c.python->abi_tag(), "cp37m");
  EXPECT_EQ(c.accelerator.kind, AcceleratorKind::cuda);
  EXPECT_EQ(c.accelerator.version(), "10.0");
  EXPECT_EQ(c.cxx_abi, CxxAbi::pre_cxx11);
  EXPECT_FALSE(c.variant);
  EXPECT_EQ(c.os, "linux");
  EXPECT_EQ(c.version, "1.0.0");
  EXPECT_EQ(c.build_number, 1);

  c = parse_build_environment("conda 3.7 cpu devtoolset7");
  EXPECT_EQ(c.type, PackageType::conda);
  EXPECT_EQ(c.accelerator.kind, AcceleratorKind::cpu);

  c = parse_build_environment("libtorch 3.7m cpu devtoolset7");
  EXPECT_EQ(c.type, PackageType::libtorch);
  EXPECT_FALSE(c.python);
  EXPECT_EQ(c.build_python->str(), "3.7m");
  EXPECT_EQ(c.cxx_abi, CxxAbi::pre_cxx11);
  EXPECT_EQ(c.variant->name(), "shared-with-deps");  // default

  c = parse_build_environment("libtorch 3.7m cpu gcc5.4_cxx11-abi");
  EXPECT_EQ(c.cxx_abi, CxxAbi::cxx11);

  c = parse_build_environment("wheel 3.7 cpu");
  EXPECT_EQ(c.type, PackageType::wheel_macos);
  EXPECT_EQ(c.os, "macos");
  EXPECT_EQ(c.cxx_abi, CxxAbi::none);
}

TEST(BuildEnvironment, BriefForms) {
  BuildConfig c = parse_build_environment("conda 3.11 cpu");
  EXPECT_EQ(c.python->str(), "3.11");
  c = parse_build_environment("libtorch 3.11 cu124 cxx11-abi");
  EXPECT_EQ(c.accelerator.tag(), "cu124");
  EXPECT_EQ(c.cxx_abi, CxxAbi::cxx11);
  EXPECT_EQ(c.build_python->str(), "3.11");
  c = parse_build_environment("libtorch cpu");
  EXPECT_FALSE(c.build_python);
  EXPECT_EQ(c.accelerator.kind, AcceleratorKind::cpu);
  c = parse_build_environment("libtorch 12.4");  // no python: accelerator
  EXPECT_EQ(c.accelerator.tag(), "cu124");
  c = parse_build_environment("conda 3.11 12.4");  // python first
  EXPECT_EQ(c.python->str(), "3.11");
  EXPECT_EQ(c.accelerator.tag(), "cu124");
  c = parse_build_environment("  manywheel\t3.13t  rocm6.1 ");
  EXPECT_TRUE(c.python->free_threaded);
  EXPECT_EQ(c.cxx_abi, CxxAbi::cxx11);  // ROCm is always cxx11
  c = parse_build_environment("manywheel cp312-cp312 xpu release");
  EXPECT_FALSE(c.debug);
  c = parse_build_environment("libtorch cu118 debug static-without-deps");
  EXPECT_TRUE(c.debug);
  EXPECT_EQ(c.variant->name(), "static-without-deps");
  c = parse_build_environment("libtorch cpu macos arm64");
  EXPECT_EQ(c.os, "macos");
  EXPECT_EQ(c.arch, "arm64");
  EXPECT_FALSE(c.variant);
  c = parse_build_environment("manywheel 3.12 cpu aarch64 pre-cxx11");
  EXPECT_EQ(c.arch, "aarch64");
}

TEST(BuildEnvironment, RoundTrip) {
  for (const char* text :
       {"manywheel 3.7m cu100", "conda 3.11 cpu",
        "libtorch cpu shared-with-deps",
        "libtorch 3.11 cu124 cxx11-abi static-with-deps",
        "manywheel 3.13t rocm6.1", "wheel 3.12 cpu arm64", "libtorch cpu macos",
        "manywheel 3.11 cuda12.10", "manywheel 3.10 cpu s390x debug"}) {
    SCOPED_TRACE(text);
    BuildConfig c = parse_build_environment(text);
    EXPECT_EQ(parse_build_environment(c.build_environment()), c)
        << c.build_environment();
  }
  EXPECT_EQ(
      parse_build_environment("manywheel 3.11 cuda12.10").accelerator.minor,
      10);
}

TEST(BuildEnvironment, Errors) {
  expect_usage([] { parse_build_environment(""); }, {"empty"});
  expect_usage([] { parse_build_environment("   "); }, {"empty"});
  expect_usage([] { parse_build_environment("pip 3.11 cpu"); },
               {"'pip'", "accepted"});
  expect_usage([] { parse_build_environment("manywheel 3.11"); },
               {"no accelerator"});
  expect_usage([] { parse_build_environment("manywheel 3.11 cu12x"); },
               {"'cu12x'", "accepted"});
  expect_usage([] { parse_build_environment("manywheel 3.1x cpu"); },
               {"'3.1x'", "python"});
  expect_usage([] { parse_build_environment("manywheel cpu"); },
               {"python version"});
  expect_usage([] { parse_build_environment("manywheel 3.11 cpu cu124"); },
               {"unexpected 'cu124'"});
  expect_usage(
      [] { parse_build_environment("manywheel 3.11 cpu debug release"); },
      {"two build modes"});
  expect_usage(
      [] { parse_build_environment("manywheel 3.11 cpu shared-with-deps"); },
      {"shared-with-deps", "Linux libtorch only"});
  expect_usage([] { parse_build_environment("conda 3.11 rocm6.1"); },
               {"rocm6.1", "conda"});
  expect_usage([] { parse_build_environment("conda 3.11 xpu"); },
               {"xpu", "conda"});
  expect_usage([] { parse_build_environment("conda 3.7m cpu"); },
               {"3.7m", "conda"});
  expect_usage([] { parse_build_environment("wheel 3.11 cu124"); },
               {"cu124", "macOS"});
  expect_usage([] { parse_build_environment("wheel 3.11 cpu devtoolset7"); },
               {"devtoolset7", "macOS"});
  expect_usage([] { parse_build_environment("wheel 3.11 cpu linux"); },
               {"macOS wheel"});
  expect_usage([] { parse_build_environment("manywheel 3.11 cpu macos"); },
               {"Linux only"});
  expect_usage([] { parse_build_environment("manywheel 3.11 cpu arm64"); },
               {"aarch64"});
  expect_usage([] { parse_build_environment("libtorch rocm6.1 pre-cxx11"); },
               {"rocm6.1", "cxx11"});
  expect_usage(
      [] { parse_build_environment("libtorch cpu macos shared-with-deps"); },
      {"shared-with-deps", "macos"});
  // Every message names the string it came from.
  expect_usage([] { parse_build_environment("manywheel 3.11 cu12x"); },
               {"BUILD_ENVIRONMENT 'manywheel 3.11 cu12x'"});
}

// An injected environment.
struct Env {
  std::map<std::string, std::string> vars;
  Getenv fn() const {
    return [this](const std::string& n) -> std::optional<std::string> {
      auto it = vars.find(n);
      if (it == vars.end()) return std::nullopt;
      return it->second;
    };
  }
};

TEST(FromEnvironment, Manywheel) {
  Env env{{{"PACKAGE_TYPE", "manywheel"},
           {"DESIRED_PYTHON", "3.11"},
           {"DESIRED_CUDA", "cu124"},
           {"DESIRED_DEVTOOLSET", "devtoolset9-cxx11-abi"},
           {"PYTORCH_BUILD_VERSION", "2.5.0+cu124"},
           {"PYTORCH_BUILD_NUMBER", "1"}}};
  BuildConfig c = from_environment(env.fn());
  EXPECT_EQ(c.python->str(), "3.11");
  EXPECT_EQ(c.accelerator.tag(), "cu124");
  EXPECT_EQ(c.cxx_abi, CxxAbi::cxx11);
  EXPECT_EQ(c.version, "2.5.0+cu124");
  EXPECT_EQ(c.build_number, 1);
  EXPECT_FALSE(c.version_overridden);
}

TEST(FromEnvironment, Versions) {
  Env env{{{"PACKAGE_TYPE", "manywheel"},
           {"DESIRED_PYTHON", "3.11"},
           {"DESIRED_CUDA", "cpu"}}};
  EXPECT_EQ(from_environment(env.fn()).version, "1.0.0");  // defaults
  EXPECT_EQ(from_environment(env.fn()).build_number, 1);
  env.vars["PYTORCH_BUILD_VERSION"] = "2.5.0+cpu";
  env.vars["PYTORCH_BUILD_NUMBER"] = "3";
  EXPECT_EQ(from_environment(env.fn()).version, "2.5.0.post3+cpu");
  env.vars["PYTORCH_BUILD_NUMBER"] = "1";
  EXPECT_EQ(from_environment(env.fn()).version, "2.5.0+cpu");
  env.vars["PYTORCH_BUILD_NUMBER"] = "3";
  env.vars["OVERRIDE_PACKAGE_VERSION"] = "2.6.0.dev20241001+cpu";
  BuildConfig c = from_environment(env.fn());
  EXPECT_EQ(c.version, "2.6.0.dev20241001+cpu");  // exactly
  EXPECT_EQ(c.build_number, 0);
  EXPECT_TRUE(c.version_overridden);
  env.vars["PYTORCH_BUILD_NUMBER"] = "two";
  expect_usage([&] { from_environment(env.fn()); },
               {"PYTORCH_BUILD_NUMBER", "'two'"});
  env.vars["PYTORCH_BUILD_NUMBER"] = "-1";
  expect_usage([&] { from_environment(env.fn()); }, {"PYTORCH_BUILD_NUMBER"});
  env.vars["PYTORCH_BUILD_NUMBER"] = "1";
  env.vars["OVERRIDE_PACKAGE_VERSION"] = "not a version";
  expect_usage([&] { from_environment(env.fn()); },
               {"'not a version'", "PEP 440"});
}

TEST(FromEnvironment, MatrixFallbacks) {
  Env env{{{"MATRIX_PACKAGE_TYPE", "conda"},
           {"MATRIX_PYTHON_VERSION", "3.10"},
           {"MATRIX_DESIRED_CUDA", "11.8"},
           {"CUDNN_VERSION", "9.1"}}};
  BuildConfig c = from_environment(env.fn());
  EXPECT_EQ(c.type, PackageType::conda);
  EXPECT_EQ(c.python->str(), "3.10");
  EXPECT_EQ(c.accelerator.tag(), "cu118");
  EXPECT_EQ(c.cudnn_version, "9.1");
  // The primary name wins over the MATRIX_ one; empty counts as unset.
  env.vars["DESIRED_PYTHON"] = "3.12";
  env.vars["DESIRED_CUDA"] = "";
  c = from_environment(env.fn());
  EXPECT_EQ(c.python->str(), "3.12");
  EXPECT_EQ(c.accelerator.tag(), "cu118");
  env.vars["MATRIX_DESIRED_CUDA"] = "cu1x";
  expect_usage([&] { from_environment(env.fn()); },
               {"MATRIX_DESIRED_CUDA", "'cu1x'"});
}

TEST(FromEnvironment, Libtorch) {
  // libtorch/build.sh: BUILD_PYTHONLESS=1 DESIRED_PYTHON=3.9.
  Env env{{{"BUILD_PYTHONLESS", "1"},
           {"DESIRED_PYTHON", "3.9"},
           {"DESIRED_CUDA", "cu118"},
           {"LIBTORCH_VARIANT", "static-without-deps"},
           {"LIBTORCH_CONFIG", "debug"}}};
  BuildConfig c = from_environment(env.fn());
  EXPECT_EQ(c.type, PackageType::libtorch);
  EXPECT_FALSE(c.python);
  EXPECT_EQ(c.build_python->str(), "3.9");
  EXPECT_EQ(c.variant->name(), "static-without-deps");
  EXPECT_TRUE(c.debug);
  env.vars["LIBTORCH_VARIANT"] = "shared";
  expect_usage([&] { from_environment(env.fn()); },
               {"LIBTORCH_VARIANT", "shared"});
  env.vars["LIBTORCH_VARIANT"] = "shared-with-deps";
  env.vars["LIBTORCH_CONFIG"] = "fast";
  expect_usage([&] { from_environment(env.fn()); },
               {"LIBTORCH_CONFIG", "'fast'"});
}

TEST(FromEnvironment, VariantOnWheelRefused) {
  Env env{{{"PACKAGE_TYPE", "manywheel"},
           {"DESIRED_PYTHON", "3.11"},
           {"DESIRED_CUDA", "cpu"},
           {"LIBTORCH_VARIANT", "shared-with-deps"}}};
  expect_usage([&] { from_environment(env.fn()); },
               {"shared-with-deps", "Linux libtorch only", "manywheel"});
}

TEST(FromEnvironment, GpuArchType) {
  Env env{{{"PACKAGE_TYPE", "manywheel"},
           {"DESIRED_PYTHON", "3.11"},
           {"GPU_ARCH_TYPE", "cuda"},
           {"GPU_ARCH_VERSION", "12.6"}}};
  EXPECT_EQ(from_environment(env.fn()).accelerator.tag(), "cu126");
  env.vars["GPU_ARCH_TYPE"] = "rocm";
  env.vars["GPU_ARCH_VERSION"] = "6.2.4";
  BuildConfig c = from_environment(env.fn());
  EXPECT_EQ(c.accelerator.tag(), "rocm6.2.4");
  EXPECT_EQ(c.cxx_abi, CxxAbi::cxx11);
  env.vars["GPU_ARCH_TYPE"] = "cpu-cxx11-abi";
  c = from_environment(env.fn());
  EXPECT_EQ(c.accelerator.kind, AcceleratorKind::cpu);
  EXPECT_EQ(c.cxx_abi, CxxAbi::cxx11);
  env.vars["GPU_ARCH_TYPE"] = "cpu-s390x";
  EXPECT_EQ(from_environment(env.fn()).arch, "s390x");
  env.vars["GPU_ARCH_TYPE"] = "xpu";
  EXPECT_EQ(from_environment(env.fn()).accelerator.kind, AcceleratorKind::xpu);
  env.vars["GPU_ARCH_TYPE"] = "tpu";
  expect_usage([&] { from_environment(env.fn()); }, {"GPU_ARCH_TYPE", "'tpu'"});
  env.vars["GPU_ARCH_TYPE"] = "cuda";
  env.vars.erase("GPU_ARCH_VERSION");
  expect_usage([&] { from_environment(env.fn()); }, {"GPU_ARCH_VERSION"});
  // Both set: they must agree on the kind.
  env.vars["DESIRED_CUDA"] = "rocm6.1";
  expect_usage([&] { from_environment(env.fn()); },
               {"DESIRED_CUDA 'rocm6.1'", "GPU_ARCH_TYPE 'cuda'"});
  env.vars["DESIRED_CUDA"] = "cu124";
  EXPECT_EQ(from_environment(env.fn()).accelerator.tag(), "cu124");
}

TEST(FromEnvironment, MissingAndBuildEnvironment) {
  Env env;
  expect_usage([&] { from_environment(env.fn()); }, {"PACKAGE_TYPE"});
  env.vars["PACKAGE_TYPE"] = "manywheel";
  env.vars["DESIRED_PYTHON"] = "3.11";
  expect_usage([&] { from_environment(env.fn()); }, {"DESIRED_CUDA"});
  env.vars["DESIRED_CUDA"] = "cpu";
  env.vars.erase("DESIRED_PYTHON");
  expect_usage([&] { from_environment(env.fn()); }, {"DESIRED_PYTHON"});
  env.vars["DESIRED_PYTHON"] = "3.11q";
  expect_usage([&] { from_environment(env.fn()); },
               {"DESIRED_PYTHON", "'3.11q'"});
  env.vars["PACKAGE_TYPE"] = "wheels";
  expect_usage([&] { from_environment(env.fn()); },
               {"PACKAGE_TYPE", "'wheels'"});

  // Without PACKAGE_TYPE, a BUILD_ENVIRONMENT string supplies the job;
  // version variables still apply.
  Env ci{{{"BUILD_ENVIRONMENT", "manywheel 3.7m cu100 devtoolset7"},
          {"PYTORCH_BUILD_VERSION", "1.3.0.dev20190912+cu100"}}};
  BuildConfig c = from_environment(ci.fn());
  EXPECT_EQ(c.python->abi_tag(), "cp37m");
  EXPECT_EQ(c.version, "1.3.0.dev20190912+cu100");
}

// A BUILD_ENVIRONMENT string (--build-env) with the CI environment on top:
// what the string cannot carry comes from the environment, what it says
// the environment may only restate.
TEST(FromBuildEnvironment, VersionVariablesApply) {
  // A release with build number 3 (a nightly's .devN takes no .postN in
  // PEP 440).
  Env ci{{{"PYTORCH_BUILD_VERSION", "2.6.0+cu124"},
          {"PYTORCH_BUILD_NUMBER", "3"},
          {"TORCH_PACKAGE_NAME", "torch-nightly"}}};
  BuildConfig c =
      from_build_environment("manywheel 3.11 cu124", ci.fn(), "--build-env");
  EXPECT_EQ(c.version, "2.6.0.post3+cu124");
  EXPECT_EQ(c.build_number, 3);
  EXPECT_EQ(c.package_name, "torch-nightly");
  ci.vars["OVERRIDE_PACKAGE_VERSION"] = "2.6.0";
  c = from_build_environment("manywheel 3.11 cu124", ci.fn());
  EXPECT_EQ(c.version, "2.6.0");
  EXPECT_TRUE(c.version_overridden);
  // An empty environment is the string alone.
  Env none;
  EXPECT_EQ(from_build_environment("conda 3.11 cpu", none.fn()),
            parse_build_environment("conda 3.11 cpu"));
  // Values from the environment are still checked, naming the variable.
  Env bad{{{"PYTORCH_BUILD_NUMBER", "two"}}};
  expect_usage([&] { from_build_environment("manywheel 3.11 cpu", bad.fn()); },
               {"PYTORCH_BUILD_NUMBER", "'two'"});
  Env conda{{{"CUDNN_VERSION", "9.1"}}};
  EXPECT_EQ(from_build_environment("conda 3.11 cu124", conda.fn())
                .cudnn_version.value_or(""),
            "9.1");
}

TEST(FromBuildEnvironment, RestatingVariablesMustAgree) {
  // The old CI exported both, consistently: accepted.
  Env ci{{{"PACKAGE_TYPE", "manywheel"},
          {"DESIRED_PYTHON", "3.7m"},
          {"DESIRED_CUDA", "10.0"},
          {"DESIRED_DEVTOOLSET", "devtoolset7"},
          {"GPU_ARCH_TYPE", "cuda"}}};
  BuildConfig c =
      from_build_environment("manywheel 3.7m cu100 devtoolset7", ci.fn());
  EXPECT_EQ(c.accelerator.tag(), "cu100");
  // Each contradiction is refused, naming the variable, its value, the
  // string and what it says.
  auto refused = [](std::map<std::string, std::string> vars, const char* text,
                    std::initializer_list<const char*> needles) {
    Env env{std::move(vars)};
    expect_usage([&] { from_build_environment(text, env.fn(), "--build-env"); },
                 needles);
  };
  refused({{"PACKAGE_TYPE", "conda"}}, "manywheel 3.11 cpu",
          {"PACKAGE_TYPE 'conda'", "--build-env 'manywheel 3.11 cpu'",
           "package type manywheel"});
  refused({{"BUILD_PYTHONLESS", "1"}}, "manywheel 3.11 cpu",
          {"BUILD_PYTHONLESS"});
  refused({{"DESIRED_PYTHON", "3.12"}}, "manywheel 3.11 cpu",
          {"DESIRED_PYTHON '3.12'", "python 3.11"});
  refused({{"DESIRED_PYTHON", "3.12"}}, "libtorch 3.11 cpu",
          {"DESIRED_PYTHON '3.12'", "build python 3.11"});
  refused({{"DESIRED_CUDA", "cu126"}}, "manywheel 3.11 cu124",
          {"DESIRED_CUDA 'cu126'", "accelerator cu124"});
  refused({{"MATRIX_DESIRED_CUDA", "cpu"}}, "manywheel 3.11 cu124",
          {"MATRIX_DESIRED_CUDA 'cpu'"});
  refused({{"GPU_ARCH_TYPE", "rocm"}, {"GPU_ARCH_VERSION", "6.1"}},
          "manywheel 3.11 cu124",
          {"GPU_ARCH_TYPE 'rocm' with GPU_ARCH_VERSION '6.1'",
           "accelerator cu124"});
  refused({{"GPU_ARCH_TYPE", "cpu-aarch64"}}, "manywheel 3.11 cpu",
          {"GPU_ARCH_TYPE 'cpu-aarch64'", "architecture x86_64"});
  refused({{"DESIRED_DEVTOOLSET", "cxx11-abi"}}, "manywheel 3.11 cpu",
          {"DESIRED_DEVTOOLSET 'cxx11-abi'", "C++ ABI pre-cxx11"});
  refused({{"LIBTORCH_VARIANT", "static-with-deps"}},
          "libtorch cpu shared-with-deps",
          {"LIBTORCH_VARIANT 'static-with-deps'", "shared-with-deps"});
  refused({{"LIBTORCH_CONFIG", "release"}}, "libtorch cpu debug",
          {"LIBTORCH_CONFIG 'release'", "build mode debug"});
  // Equal spellings agree: cu124 = 12.4 = cuda12.4; a pythonless string
  // takes DESIRED_PYTHON as its build python; the job's variant and build
  // mode complete a string that names none.
  Env same{{{"DESIRED_CUDA", "12.4"},
            {"DESIRED_PYTHON", "3.12"},
            {"LIBTORCH_VARIANT", "static-without-deps"},
            {"LIBTORCH_CONFIG", "debug"}}};
  c = from_build_environment("libtorch cuda12.4 cxx11-abi", same.fn());
  EXPECT_EQ(c.build_python->str(), "3.12");
  EXPECT_EQ(c.variant->name(), "static-without-deps");
  EXPECT_TRUE(c.debug);
}

TEST(FromEnvironment, BuildEnvironmentWithPackageType) {
  // BUILD_ENVIRONMENT is the job even when PACKAGE_TYPE is set too; they
  // must agree (before, PACKAGE_TYPE silently won).
  Env env{{{"BUILD_ENVIRONMENT", "libtorch 3.9 cu124 cxx11-abi"},
           {"PACKAGE_TYPE", "libtorch"},
           {"PYTORCH_BUILD_VERSION", "2.5.0+cu124"}}};
  BuildConfig c = from_environment(env.fn());
  EXPECT_EQ(c.version, "2.5.0+cu124");
  EXPECT_EQ(c.cxx_abi, CxxAbi::cxx11);
  env.vars["PACKAGE_TYPE"] = "manywheel";
  expect_usage([&] { from_environment(env.fn()); },
               {"PACKAGE_TYPE 'manywheel'", "BUILD_ENVIRONMENT 'libtorch"});
}

TEST(Overrides, Apply) {
  BuildConfig c = parse_build_environment("manywheel 3.11 cpu");
  ConfigOverrides o;
  o.accelerator = "cu126";
  o.abi = "cxx11";
  o.base_version = "2.6.0";
  o.build_number = 2;
  c = apply_overrides(c, o);
  EXPECT_EQ(c.accelerator.tag(), "cu126");
  EXPECT_EQ(c.cxx_abi, CxxAbi::cxx11);
  EXPECT_EQ(c.version, "2.6.0.post2");

  // Switching to libtorch moves the python to build_python.
  ConfigOverrides lt;
  lt.package_type = "libtorch";
  BuildConfig l = apply_overrides(c, lt);
  EXPECT_FALSE(l.python);
  EXPECT_EQ(l.build_python->str(), "3.11");
  EXPECT_TRUE(l.variant);
  // A python given explicitly for libtorch is refused.
  ConfigOverrides py;
  py.python = "3.12";
  expect_usage([&] { apply_overrides(l, py); }, {"libtorch", "3.12"});
  ConfigOverrides bad;
  bad.os = "windows";
  expect_usage([&] { apply_overrides(c, bad); }, {"'windows'"});
  bad = {};
  bad.arch = "riscv";
  expect_usage([&] { apply_overrides(c, bad); }, {"'riscv'"});
  bad = {};
  bad.abi = "gnu";
  expect_usage([&] { apply_overrides(c, bad); }, {"'gnu'"});
  bad = {};
  bad.package_type = "conda";
  bad.base_version = "2.6.0+cu126";
  expect_usage([&] { apply_overrides(c, bad); }, {"+cu126", "conda"});
}

}  // namespace
