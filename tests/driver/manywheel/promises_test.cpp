// SPDX-License-Identifier: BSD-3-Clause
// driver::promised_checks: import is promised only when it can run here.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/utsname.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "libpkg/base/scratch_dir.hpp"
#include "libpkg/config/build.hpp"
#include "libpkg/driver/common.hpp"

namespace fs = std::filesystem;
using namespace libpkg;

namespace {

bool has_note(const driver::Promises& p, const std::string& text) {
  for (const auto& n : p.notes)
    if (n.find(text) != std::string::npos) return true;
  return false;
}

std::string host_machine() {
  struct utsname u {};
  ::uname(&u);
  return u.machine;
}

// An "interpreter" that answers the driver's probe as a Python 3.11 whose
// venv/ensurepip modules are missing (Debian without python3.11-venv).
fs::path fake_python_without_venv(const fs::path& dir) {
  fs::path py = dir / "python3.11";
  std::ofstream(py) << "#!/bin/sh\nprintf '3.11\\n0\\n'\n";
  ::chmod(py.c_str(), 0755);
  return py;
}

TEST(Promises, ImportNotPromisedForAnotherMachinesWheel) {
  auto config = config::parse_build_environment("manywheel 3.11 cpu");
  config.arch = host_machine() == "aarch64" ? "x86_64" : "aarch64";
  check::CheckOptions options;
  options.python = "/usr/bin/python3";
  auto p = driver::promised_checks(config, options);
  EXPECT_TRUE(p.require.empty());
  EXPECT_TRUE(has_note(p, "can't be installed on this"))
      << ::testing::PrintToString(p.notes);
}

// A macOS wheel or libtorch zip cannot be imported or linked on Linux:
// promising it made every wheel_macos run fail its import check.
TEST(Promises, NothingPromisedForMacosOnLinux) {
  for (const char* env : {"wheel 3.11 cpu macos arm64", "libtorch cpu macos"}) {
    auto config = config::parse_build_environment(env);
    check::CheckOptions options;
    options.python = "/usr/bin/python3";
    auto p = driver::promised_checks(config, options);
    EXPECT_TRUE(p.require.empty()) << env;
    EXPECT_TRUE(has_note(p, "load only on macOS")) << env;
  }
}

TEST(Promises, ImportNotPromisedWithoutVenv) {
  ScratchDir dir = ScratchDir::in_temp("promises-");
  auto config = config::parse_build_environment("manywheel 3.11 cpu");
  config.arch = host_machine();
  check::CheckOptions options;
  options.python = fake_python_without_venv(dir.path()).string();
  auto p = driver::promised_checks(config, options);
  // python3.11 / python3 on PATH may be real 3.11 ones with venv: the fake
  // comes first and its answer decides.
  EXPECT_TRUE(p.require.empty()) << ::testing::PrintToString(p.require);
  EXPECT_TRUE(has_note(p, "can't create a venv (install python3.11-venv)"))
      << ::testing::PrintToString(p.notes);
}

}  // namespace
