// SPDX-License-Identifier: BSD-3-Clause
// The runtime checks (import, link, link-wrong-abi, gpu) over Package values
// built by hand on fixture trees made at test time: a tiny Python package
// (with a real extension module when Python.h is there), a tiny C++ library
// compiled with each _GLIBCXX_USE_CXX11_ABI and a client for it, and for
// the GPU a mock CUDA runtime plus the machine's libcudart when present.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "check/package.hpp"
#include "libpkg/base/scratch_dir.hpp"
#include "libpkg/base/subprocess.hpp"

namespace fs = std::filesystem;

namespace libpkg::check::detail {
namespace {

void write(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
}

std::string python() {
  const char* p = std::getenv("LIBPKG_PYTHON");
  return p != nullptr && *p != '\0' ? p : "/usr/bin/python3";
}

// Runs a fixture build step; the test fails with its output if it fails.
bool build(const std::vector<std::string>& argv) {
  RunResult r = run_process(argv, {.timeout_seconds = 120});
  EXPECT_TRUE(r.ok()) << argv[0] << ": " << r.describe() << "\n" << r.output;
  return r.ok();
}

bool have(const std::string& tool) {
  return !run_process({tool, "--version"}, {.timeout_seconds = 30}).not_found;
}

std::string dump(const CheckResult& r) {
  std::string s = std::string(status_name(r.status)) + ": " + r.summary;
  for (const auto& p : r.problems)
    s += "\n  problem " + p.file + ": " + p.message;
  for (const auto& n : r.notes) s += "\n  note " + n;
  return s;
}

CheckOptions base_options(const ScratchDir& dir) {
  CheckOptions o;
  o.python = python();
  o.timeout_seconds = 120;
  o.scratch_parent = dir.path();
  return o;
}

// ---------------------------------------------------------------------------
// import

class ImportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!have(python()))
      GTEST_FAIL() << python() << " not found (scripts/setup.sh installs it)";
  }
  ScratchDir dir = ScratchDir::in_temp("runtime-test-");
  fs::path site = dir.path() / "site";

  Package site_package() {
    Package pkg;
    pkg.kind = ArtifactKind::site_packages;
    pkg.artifact = site;
    pkg.root = fs::canonical(site);
    return pkg;
  }

  // Compiles `source` into the extension module `rel` (under site) when
  // Python.h is there; false (nothing built) otherwise.
  bool extension(const std::string& rel, const std::string& source,
                 std::vector<std::string> extra = {}) {
    RunResult info = run_process(
        {python(), "-c",
         "import sysconfig; print(sysconfig.get_paths()['include'])"});
    std::string include = info.output.substr(0, info.output.find('\n'));
    if (!fs::exists(fs::path(include) / "Python.h") || !have("cc"))
      return false;
    write(dir.path() / "ext.c", source);
    fs::create_directories((site / rel).parent_path());
    std::vector<std::string> argv = {"cc",
                                     "-shared",
                                     "-fPIC",
                                     "-I" + include,
                                     (dir.path() / "ext.c").string(),
                                     "-o",
                                     (site / rel).string()};
    argv.insert(argv.end(), extra.begin(), extra.end());
    return build(argv);
  }

  std::string ext_suffix() {
    RunResult r = run_process(
        {python(), "-c",
         "import sysconfig; print(sysconfig.get_config_var('EXT_SUFFIX'))"});
    return r.output.substr(0, r.output.find('\n'));
  }
};

constexpr const char* kExtension = R"(#include <Python.h>
static struct PyModuleDef def = {PyModuleDef_HEAD_INIT, "_C", 0, -1, 0};
PyMODINIT_FUNC PyInit__C(void) { return PyModule_Create(&def); }
)";

TEST_F(ImportTest, SitePackagesPass) {
  write(site / "goodpkg" / "__init__.py", "VALUE = 1\n");
  write(site / "goodpkg-1.0.dist-info" / "top_level.txt", "goodpkg\n");
  Package pkg = site_package();
  std::string ext = "goodpkg/_C" + ext_suffix();
  if (extension(ext, kExtension)) {
    ElfEntry e;
    e.member = ext;
    e.file = pkg.root / ext;
    e.extension = true;
    pkg.elfs.push_back(e);
  }
  CheckOptions options = base_options(dir);
  CheckResult r{"import"};
  check_import(pkg, options, r);
  EXPECT_EQ(r.status, Status::pass) << dump(r);
  std::string expect = pkg.elfs.empty() ? "imported goodpkg with "
                                        : "imported goodpkg, goodpkg._C with ";
  EXPECT_NE(r.summary.find(expect), std::string::npos) << r.summary;
  EXPECT_NE(r.summary.find("from " + pkg.root.string()), std::string::npos);
}

TEST_F(ImportTest, ExtensionWithAMissingLibraryFails) {
  write(site / "brokenpkg" / "__init__.py", "");
  write(site / "brokenpkg-1.0.dist-info" / "top_level.txt", "brokenpkg\n");
  // libgone.so is linked in, then removed: the extension can't load.
  write(dir.path() / "gone.c", "int gone(void) { return 1; }\n");
  if (!have("cc"))
    GTEST_FAIL() << "cc not found (scripts/setup.sh installs it)";
  ASSERT_TRUE(build({"cc", "-shared", "-fPIC", "-o",
                     (dir.path() / "libgone.so").string(),
                     (dir.path() / "gone.c").string()}));
  std::string ext = "brokenpkg/_C" + ext_suffix();
  if (!extension(ext,
                 std::string("int gone(void);\n") + kExtension +
                     "int use(void) { return gone(); }\n",
                 {"-L" + dir.path().string(), "-lgone"}))
    GTEST_FAIL() << "Python.h not found (python3-dev)";
  fs::remove(dir.path() / "libgone.so");
  Package pkg = site_package();
  ElfEntry e;
  e.member = ext;
  e.file = pkg.root / ext;
  e.extension = true;
  pkg.elfs.push_back(e);
  CheckResult r{"import"};
  check_import(pkg, base_options(dir), r);
  EXPECT_EQ(r.status, Status::fail) << dump(r);
  ASSERT_EQ(r.problems.size(), 1u) << dump(r);
  EXPECT_EQ(r.problems[0].file, "brokenpkg._C");
  EXPECT_NE(r.problems[0].message.find("libgone.so: cannot open shared object"),
            std::string::npos)
      << r.problems[0].message;
  EXPECT_NE(r.problems[0].message.find("see the dependencies check"),
            std::string::npos);
}

TEST_F(ImportTest, FailingModuleIsReportedWithItsLastLine) {
  write(site / "okpkg" / "__init__.py", "");
  write(site / "badpkg" / "__init__.py",
        "raise RuntimeError('the package is broken')\n");
  // No top_level.txt: the modules are found by scanning site-packages.
  write(site / "badpkg-1.0.dist-info" / "METADATA", "Name: badpkg\n");
  Package pkg = site_package();
  CheckResult r{"import"};
  check_import(pkg, base_options(dir), r);
  EXPECT_EQ(r.status, Status::fail) << dump(r);
  ASSERT_EQ(r.problems.size(), 1u) << dump(r);
  EXPECT_EQ(r.problems[0].file, "badpkg");
  EXPECT_EQ(r.problems[0].message, "RuntimeError: the package is broken");
  EXPECT_NE(r.summary.find("1 of 2 module(s)"), std::string::npos) << r.summary;
}

TEST_F(ImportTest, SubmodulesOfAFailedPackageAreNotRepeated) {
  write(site / "badpkg" / "__init__.py", "raise ImportError('broken init')\n");
  write(site / "badpkg-1.0.dist-info" / "top_level.txt", "badpkg\n");
  std::string ext = "badpkg/_C" + ext_suffix();
  if (!extension(ext, kExtension))
    GTEST_FAIL() << "Python.h not found (python3-dev)";
  Package pkg = site_package();
  ElfEntry e;
  e.member = ext;
  e.file = pkg.root / ext;
  e.extension = true;
  pkg.elfs.push_back(e);
  CheckResult r{"import"};
  check_import(pkg, base_options(dir), r);
  EXPECT_EQ(r.status, Status::fail) << dump(r);
  ASSERT_EQ(r.problems.size(), 1u) << dump(r);
  EXPECT_EQ(r.problems[0].file, "badpkg");
  EXPECT_EQ(r.problems[0].message, "ImportError: broken init");
  ASSERT_EQ(r.notes.size(), 1u) << dump(r);
  EXPECT_EQ(r.notes[0], "badpkg._C not tried: badpkg does not import");
}

TEST_F(ImportTest, ScanRules) {
  // Without top_level.txt: packages, .py and extension modules count;
  // metadata, grafted .libs, namespace dirs, caches, .pth and private names
  // don't (private ones only when nothing else is there).
  write(site / "pkg" / "__init__.py", "");
  write(site / "single.py", "");
  write(site / "_private.py", "raise ImportError('never imported')\n");
  write(site / "pkg.libs" / "libx.so", "");
  write(site / "namespace" / "mod.py", "");
  write(site / "__pycache__" / "x.pyc", "");
  write(site / "extra.pth", "");
  write(site / "pkg-1.0.dist-info" / "METADATA", "Name: pkg\n");
  write(site / "pkg-1.0.data" / "scripts" / "tool", "");
  CheckResult r{"import"};
  check_import(site_package(), base_options(dir), r);
  EXPECT_EQ(r.status, Status::pass) << dump(r);
  EXPECT_NE(r.summary.find("imported pkg, single with"), std::string::npos)
      << r.summary;

  fs::remove_all(site);
  write(site / "_only.py", "");
  write(site / "only-1.0.dist-info" / "METADATA", "Name: only\n");
  CheckResult priv{"import"};
  check_import(site_package(), base_options(dir), priv);
  EXPECT_EQ(priv.status, Status::pass) << dump(priv);
  EXPECT_NE(priv.summary.find("imported _only with"), std::string::npos);
}

TEST_F(ImportTest, ExplicitModulesAndMissingModule) {
  write(site / "goodpkg" / "__init__.py", "");
  write(site / "goodpkg" / "sub.py", "");
  write(site / "goodpkg-1.0.dist-info" / "top_level.txt", "goodpkg\n");
  CheckOptions options = base_options(dir);
  options.import_modules = {"goodpkg.sub", "goodpkg.absent"};
  CheckResult r{"import"};
  check_import(site_package(), options, r);
  EXPECT_EQ(r.status, Status::fail) << dump(r);
  ASSERT_EQ(r.problems.size(), 1u) << dump(r);
  EXPECT_EQ(r.problems[0].file, "goodpkg.absent");
  EXPECT_NE(r.problems[0].message.find(
                "No module named 'goodpkg.absent' — the package does not "
                "contain this module"),
            std::string::npos)
      << r.problems[0].message;
}

TEST_F(ImportTest, ModuleFromElsewhereFails) {
  // top_level.txt may name a module the package doesn't ship: if the
  // interpreter finds one elsewhere (here the standard library's json),
  // the import proves nothing about the package. A directory "json"
  // without __init__.py would be a namespace package and lose to the
  // regular one.
  write(site / "json" / "data.txt", "");
  write(site / "x-1.0.dist-info" / "top_level.txt", "json\n");
  CheckResult r{"import"};
  check_import(site_package(), base_options(dir), r);
  EXPECT_EQ(r.status, Status::fail) << dump(r);
  ASSERT_EQ(r.problems.size(), 1u) << dump(r);
  EXPECT_NE(r.problems[0].message.find("not from the package"),
            std::string::npos);
}

TEST_F(ImportTest, OtherPythonVersionSkips) {
  site = dir.path() / "lib" / "python3.99" / "site-packages";
  write(site / "goodpkg" / "__init__.py", "");
  write(site / "goodpkg-1.0.dist-info" / "top_level.txt", "goodpkg\n");
  CheckResult r{"import"};
  check_import(site_package(), base_options(dir), r);
  EXPECT_EQ(r.status, Status::skip) << dump(r);
  EXPECT_NE(r.summary.find("for Python 3.99"), std::string::npos) << r.summary;
}

TEST_F(ImportTest, CondaTreeUsesItsSitePackages) {
  RunResult v = run_process(
      {python(), "-c", "import sys; print('%d.%d' % sys.version_info[:2])"});
  std::string version = v.output.substr(0, v.output.find('\n'));
  fs::path prefix = dir.path() / "prefix";
  write(prefix / "lib" / ("python" + version) / "site-packages" / "condapkg" /
            "__init__.py",
        "");
  write(prefix / "conda-meta" / "condapkg-1.0-0.json", "{}");
  Package pkg;
  pkg.kind = ArtifactKind::conda_tree;
  pkg.artifact = prefix;
  pkg.root = fs::canonical(prefix);
  CheckResult r{"import"};
  check_import(pkg, base_options(dir), r);
  EXPECT_EQ(r.status, Status::pass) << dump(r);
  EXPECT_NE(r.summary.find("imported condapkg with"), std::string::npos);

  Package bare = pkg;
  fs::remove_all(prefix / "lib");
  CheckResult none{"import"};
  check_import(bare, base_options(dir), none);
  EXPECT_EQ(none.status, Status::skip) << dump(none);
}

TEST_F(ImportTest, PythonNotFoundSkips) {
  write(site / "goodpkg" / "__init__.py", "");
  CheckOptions options = base_options(dir);
  options.python = "libpkg-no-such-python";
  CheckResult r{"import"};
  check_import(site_package(), options, r);
  EXPECT_EQ(r.status, Status::skip);
  EXPECT_NE(r.summary.find("libpkg-no-such-python not found"),
            std::string::npos);
}

TEST_F(ImportTest, LibtorchIsNotAPythonPackage) {
  Package pkg;
  pkg.kind = ArtifactKind::libtorch_tree;
  CheckResult r{"import"};
  check_import(pkg, base_options(dir), r);
  EXPECT_EQ(r.status, Status::skip);
  EXPECT_NE(r.summary.find("not a Python package"), std::string::npos);
}

// A wheel made with zipfile from a tree that also serves as the extracted
// root (what open_package gives the check).
class WheelTest : public ImportTest {
 protected:
  void SetUp() override {
    ImportTest::SetUp();
    if (HasFatalFailure()) return;
    RunResult r = run_process({python(), "-c", "import ensurepip, venv"},
                              {.timeout_seconds = 60});
    if (!r.ok())
      GTEST_FAIL() << python() << " cannot make venvs (python3-venv)";
  }

  Package make_wheel(const std::string& tag, const std::string& init) {
    fs::path root = dir.path() / "wheel-root";
    write(root / "wheelpkg" / "__init__.py", init);
    std::string info = "wheelpkg-1.0.dist-info";
    write(root / info / "METADATA",
          "Metadata-Version: 2.1\nName: wheelpkg\nVersion: 1.0\n");
    write(root / info / "WHEEL",
          "Wheel-Version: 1.0\nGenerator: test\n"
          "Root-Is-Purelib: true\nTag: " +
              tag + "\n");
    write(root / info / "top_level.txt", "wheelpkg\n");
    write(root / info / "RECORD", "wheelpkg/__init__.py,,\n" + info +
                                      "/METADATA,,\n" + info + "/WHEEL,,\n" +
                                      info + "/top_level.txt,,\n" + info +
                                      "/RECORD,,\n");
    fs::path whl = dir.path() / ("wheelpkg-1.0-" + tag + ".whl");
    EXPECT_TRUE(build({python(), "-c",
                       "import os, sys, zipfile\n"
                       "root, out = sys.argv[1], sys.argv[2]\n"
                       "with zipfile.ZipFile(out, 'w') as z:\n"
                       "  for d, _, files in os.walk(root):\n"
                       "    for f in files:\n"
                       "      p = os.path.join(d, f)\n"
                       "      z.write(p, os.path.relpath(p, root))\n",
                       root.string(), whl.string()}));
    Package pkg;
    pkg.kind = ArtifactKind::wheel;
    pkg.artifact = whl;
    pkg.root = fs::canonical(root);
    pkg.dist_info = info;
    pkg.wheel_name = wheel::WheelName::parse(whl.filename().string());
    return pkg;
  }
};

TEST_F(WheelTest, ImportsInAFreshVenv) {
  Package pkg = make_wheel("py3-none-any", "VALUE = 1\n");
  CheckResult r{"import"};
  check_import(pkg, base_options(dir), r);
  EXPECT_EQ(r.status, Status::pass) << dump(r);
  EXPECT_NE(r.summary.find("imported wheelpkg with"), std::string::npos);
  EXPECT_NE(r.summary.find("in a fresh venv"), std::string::npos);
}

TEST_F(WheelTest, ExtensionModuleInAFreshVenv) {
  RunResult t = run_process(
      {python(), "-c",
       "import sys, sysconfig\n"
       "v = 'cp%d%d' % sys.version_info[:2]\n"
       "p = sysconfig.get_platform().replace('-', '_').replace('.', '_')\n"
       "print('%s-%s-%s' % (v, v, p))\n"});
  std::string tag = t.output.substr(0, t.output.find('\n'));
  // The extension is built into the tree make_wheel zips.
  site = dir.path() / "wheel-root";
  std::string ext = "wheelpkg/_C" + ext_suffix();
  if (!extension(ext, kExtension))
    GTEST_FAIL() << "Python.h not found (python3-dev)";
  Package pkg = make_wheel(tag, "from . import _C\n");
  ElfEntry e;
  e.member = ext;
  e.file = pkg.root / ext;
  e.extension = true;
  pkg.elfs.push_back(e);
  CheckResult r{"import"};
  check_import(pkg, base_options(dir), r);
  EXPECT_EQ(r.status, Status::pass) << dump(r);
  EXPECT_NE(r.summary.find("imported wheelpkg, wheelpkg._C with "),
            std::string::npos)
      << r.summary;
}

TEST_F(WheelTest, UnsupportedTagSkips) {
  Package pkg = make_wheel("cp27-cp27mu-linux_x86_64", "");
  CheckResult r{"import"};
  check_import(pkg, base_options(dir), r);
  EXPECT_EQ(r.status, Status::skip) << dump(r);
  EXPECT_NE(r.summary.find("is not a supported wheel for"), std::string::npos)
      << r.summary;
}

TEST_F(WheelTest, MissingDependencyIsNotTheWheelsFault) {
  // The venv gets no dependencies: a third-party import nobody has makes
  // the check unable to tell (skip), not a failure.
  Package pkg = make_wheel("py3-none-any", "import libpkg_absent_dependency\n");
  CheckResult r{"import"};
  check_import(pkg, base_options(dir), r);
  EXPECT_EQ(r.status, Status::skip) << dump(r);
  EXPECT_NE(r.summary.find("cannot import wheelpkg"), std::string::npos)
      << r.summary;
}

// ---------------------------------------------------------------------------
// link

constexpr const char* kGreetHeader = R"(#pragma once
#include <string>
std::string greet(const std::string& who);
)";
constexpr const char* kGreetLib = R"(#include "greet.h"
std::string greet(const std::string& who) { return "hello " + who; }
)";
constexpr const char* kGreetClient = R"(#include <iostream>
#include "greet.h"
int main() {
  std::string s = greet("world");
  std::cout << s << std::endl;
  return s == "hello world" ? 0 : 1;
}
)";

class LinkTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!have("c++"))
      GTEST_FAIL() << "c++ not found (scripts/setup.sh installs it)";
  }
  ScratchDir dir = ScratchDir::in_temp("runtime-test-");

  // An unpacked libtorch-style tree whose libgreet.so has the given ABI.
  Package tree(int abi_macro, const std::string& lib_source = kGreetLib) {
    fs::path top = dir.path() / "dist" / "libtorch";
    write(top / "include" / "greet.h", kGreetHeader);
    write(top / "build-version", "1.0\n");
    write(dir.path() / "greet.cpp", lib_source);
    fs::create_directories(top / "lib");
    build({"c++", "-shared", "-fPIC",
           "-D_GLIBCXX_USE_CXX11_ABI=" + std::to_string(abi_macro),
           "-I" + (top / "include").string(),
           (dir.path() / "greet.cpp").string(), "-o",
           (top / "lib" / "libgreet.so").string()});
    write(dir.path() / "client.cpp", kGreetClient);
    Package pkg;
    pkg.kind = ArtifactKind::libtorch_tree;
    pkg.artifact = dir.path() / "dist";
    pkg.root = fs::canonical(dir.path() / "dist");
    pkg.content_dir = "libtorch";
    return pkg;
  }

  CheckOptions options(std::optional<abi::CxxAbi> abi) {
    CheckOptions o = base_options(dir);
    o.expect.cxx_abi = abi;
    o.client = dir.path() / "client.cpp";
    return o;
  }
};

TEST_F(LinkTest, Cxx11) {
  Package pkg = tree(1);
  CheckResult link{"link"}, wrong{"link-wrong-abi"};
  check_link(pkg, options(abi::CxxAbi::cxx11), link, wrong);
  EXPECT_EQ(link.status, Status::pass) << dump(link);
  EXPECT_NE(link.summary.find("_GLIBCXX_USE_CXX11_ABI=1"), std::string::npos);
  EXPECT_NE(link.summary.find("-lgreet"), std::string::npos) << link.summary;
  EXPECT_EQ(wrong.status, Status::pass) << dump(wrong);
  EXPECT_NE(wrong.summary.find("linking with _GLIBCXX_USE_CXX11_ABI=0 fails "
                               "as it must: "),
            std::string::npos)
      << wrong.summary;
  EXPECT_NE(wrong.summary.find("undefined reference"), std::string::npos);
}

TEST_F(LinkTest, PreCxx11) {
  Package pkg = tree(0);
  CheckResult link{"link"}, wrong{"link-wrong-abi"};
  check_link(pkg, options(abi::CxxAbi::pre_cxx11), link, wrong);
  EXPECT_EQ(link.status, Status::pass) << dump(link);
  EXPECT_NE(link.summary.find("_GLIBCXX_USE_CXX11_ABI=0"), std::string::npos);
  EXPECT_EQ(wrong.status, Status::pass) << dump(wrong);
  EXPECT_NE(wrong.summary.find("_GLIBCXX_USE_CXX11_ABI=1 fails"),
            std::string::npos);
}

TEST_F(LinkTest, DeclaredAbiDisagreesWithTheLibrary) {
  Package pkg = tree(0);
  CheckResult link{"link"}, wrong{"link-wrong-abi"};
  check_link(pkg, options(abi::CxxAbi::cxx11), link, wrong);
  EXPECT_EQ(link.status, Status::fail) << dump(link);
  ASSERT_EQ(link.problems.size(), 1u);
  EXPECT_EQ(link.problems[0].file, (dir.path() / "client.cpp").string());
  EXPECT_NE(link.problems[0].message.find("undefined reference"),
            std::string::npos)
      << link.problems[0].message;
  EXPECT_EQ(wrong.status, Status::skip) << dump(wrong);
}

TEST_F(LinkTest, AbiAgnosticApiFailsWrongAbi) {
  // A C API links with either macro: the ABI claim can't be enforced.
  Package pkg = tree(1, "extern \"C\" int answer() { return 42; }\n");
  write(dir.path() / "client.cpp",
        "extern \"C\" int answer();\nint main() { return answer() == 42 ? 0 "
        ": 1; }\n");
  CheckResult link{"link"}, wrong{"link-wrong-abi"};
  check_link(pkg, options(abi::CxxAbi::cxx11), link, wrong);
  EXPECT_EQ(link.status, Status::pass) << dump(link);
  EXPECT_EQ(wrong.status, Status::fail) << dump(wrong);
  EXPECT_NE(wrong.summary.find("not honoured"), std::string::npos);
}

TEST_F(LinkTest, NoDeclaredAbi) {
  Package pkg = tree(1);
  CheckResult link{"link"}, wrong{"link-wrong-abi"};
  check_link(pkg, options(std::nullopt), link, wrong);
  EXPECT_EQ(link.status, Status::pass) << dump(link);
  EXPECT_NE(link.summary.find("none declared"), std::string::npos);
  EXPECT_EQ(wrong.status, Status::skip) << dump(wrong);
  EXPECT_EQ(wrong.summary, "the package declares no C++ ABI");
}

TEST_F(LinkTest, ClientThatFailsAtRunTime) {
  Package pkg = tree(1);
  write(dir.path() / "client.cpp",
        "#include \"greet.h\"\n#include <cstdio>\nint main() { "
        "std::puts(greet(\"x\").c_str()); return 3; }\n");
  CheckResult link{"link"}, wrong{"link-wrong-abi"};
  check_link(pkg, options(abi::CxxAbi::cxx11), link, wrong);
  EXPECT_EQ(link.status, Status::fail) << dump(link);
  EXPECT_NE(link.summary.find("does not run (exit status 3)"),
            std::string::npos)
      << link.summary;
  EXPECT_EQ(wrong.status, Status::skip);
}

TEST_F(LinkTest, SkipsWithoutClientCompilerOrLibtorch) {
  Package pkg = tree(1);
  CheckOptions no_client = options(abi::CxxAbi::cxx11);
  no_client.client.reset();
  CheckResult link{"link"}, wrong{"link-wrong-abi"};
  check_link(pkg, no_client, link, wrong);
  EXPECT_EQ(link.status, Status::skip);
  EXPECT_NE(link.summary.find("pass --client"), std::string::npos);
  EXPECT_EQ(wrong.status, Status::skip);

  CheckOptions no_cxx = options(abi::CxxAbi::cxx11);
  no_cxx.cxx = "libpkg-no-such-compiler";
  CheckResult l2{"link"}, w2{"link-wrong-abi"};
  check_link(pkg, no_cxx, l2, w2);
  EXPECT_EQ(l2.status, Status::skip) << dump(l2);
  EXPECT_NE(l2.summary.find("libpkg-no-such-compiler not found"),
            std::string::npos);
  EXPECT_EQ(w2.status, Status::skip);

  Package wheel_pkg;
  wheel_pkg.kind = ArtifactKind::wheel;
  CheckResult l3{"link"}, w3{"link-wrong-abi"};
  check_link(wheel_pkg, no_cxx, l3, w3);
  EXPECT_EQ(l3.status, Status::skip);
  EXPECT_EQ(l3.summary, "not a C++ distribution (libtorch)");
  EXPECT_EQ(w3.status, Status::skip);
}

// ---------------------------------------------------------------------------
// gpu

// A mock CUDA runtime: the seven functions the probe uses, over host
// memory; MOCK_MEMSET_BYTE picks what "cudaMemset" really writes.
constexpr const char* kMockCudart = R"(#include <stdlib.h>
#include <string.h>
int cudaGetDeviceCount(int* n) { *n = MOCK_DEVICES; return MOCK_DEVICES ? 0 : 100; }
const char* cudaGetErrorString(int e) { return e == 100 ? "no CUDA-capable device is detected" : "mock error"; }
int cudaMalloc(void** p, size_t n) { *p = malloc(n); return *p ? 0 : 2; }
int cudaMemset(void* p, int v, size_t n) { memset(p, MOCK_MEMSET_BYTE, n); (void)v; return 0; }
int cudaMemcpy(void* d, const void* s, size_t n, int k) { (void)k; memcpy(d, s, n); return 0; }
int cudaFree(void* p) { free(p); return 0; }
int cudaDeviceSynchronize(void) { return 0; }
)";

class GpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!have("cc"))
      GTEST_FAIL() << "cc not found (scripts/setup.sh installs it)";
  }
  ScratchDir dir = ScratchDir::in_temp("runtime-test-");

  Package with_cudart(const fs::path& lib) {
    Package pkg;
    pkg.kind = ArtifactKind::wheel;
    pkg.root = dir.path();
    ElfEntry e;
    e.member = lib.filename().string();
    e.file = lib;
    pkg.elfs.push_back(e);
    return pkg;
  }

  fs::path mock(const std::string& name, int devices, int byte) {
    write(dir.path() / "mock.c", kMockCudart);
    fs::path lib = dir.path() / name;
    build({"cc", "-shared", "-fPIC",
           "-DMOCK_DEVICES=" + std::to_string(devices),
           "-DMOCK_MEMSET_BYTE=" + std::to_string(byte),
           (dir.path() / "mock.c").string(), "-o", lib.string()});
    return lib;
  }
};

TEST_F(GpuTest, MockRuntimePasses) {
  fs::path lib = mock("libcudart.so.12", 2, 0x5a);
  CheckResult r{"gpu"};
  check_gpu(with_cudart(lib), base_options(dir), r);
  EXPECT_EQ(r.status, Status::pass) << dump(r);
  EXPECT_EQ(r.summary,
            "ran a memset kernel on 2 device(s) through " + lib.string());
}

TEST_F(GpuTest, WrongBytesFail) {
  fs::path lib = mock("libcudart.so.12", 1, 0);
  CheckResult r{"gpu"};
  check_gpu(with_cudart(lib), base_options(dir), r);
  EXPECT_EQ(r.status, Status::fail) << dump(r);
  EXPECT_NE(r.summary.find("byte 0 is 0x00 after cudaMemset 0x5a"),
            std::string::npos)
      << r.summary;
}

TEST_F(GpuTest, NoDeviceSkips) {
  fs::path lib = mock("libcudart.so.12", 0, 0x5a);
  CheckResult r{"gpu"};
  check_gpu(with_cudart(lib), base_options(dir), r);
  EXPECT_EQ(r.status, Status::skip) << dump(r);
  EXPECT_NE(r.summary.find("no usable GPU: no CUDA-capable device is detected"),
            std::string::npos)
      << r.summary;
}

TEST_F(GpuTest, RuntimeThatDoesNotLoadFails) {
  fs::path lib = dir.path() / "libcudart.so.12";
  write(lib, "not an ELF file\n");
  CheckResult r{"gpu"};
  check_gpu(with_cudart(lib), base_options(dir), r);
  EXPECT_EQ(r.status, Status::fail) << dump(r);
  EXPECT_NE(r.summary.find("does not load"), std::string::npos) << r.summary;
}

TEST_F(GpuTest, NoRuntimeSkips) {
  Package pkg;
  pkg.kind = ArtifactKind::wheel;
  pkg.root = dir.path();
  CheckResult r{"gpu"};
  check_gpu(pkg, base_options(dir), r);
  EXPECT_EQ(r.status, Status::skip);
  EXPECT_EQ(r.summary, "no CUDA runtime in the package");
}

TEST_F(GpuTest, RealRuntimeWithoutGpuSkipsWithTheDriversReason) {
  fs::path lib = "/usr/local/cuda/lib64/libcudart.so";
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/usr/local/cuda/lib64", ec))
    if (e.path().filename().string().starts_with("libcudart.so.")) {
      lib = e.path();
      break;
    }
  if (!fs::exists(lib)) GTEST_SKIP() << "no libcudart under /usr/local/cuda";
  CheckResult r{"gpu"};
  check_gpu(with_cudart(lib), base_options(dir), r);
  // With a GPU this passes; without one the driver says why.
  if (r.status == Status::pass) return;
  EXPECT_EQ(r.status, Status::skip) << dump(r);
  EXPECT_TRUE(r.summary.starts_with("no usable GPU: ")) << r.summary;
  EXPECT_GT(r.summary.size(), std::string("no usable GPU: ").size() + 5);
  std::cout << "gpu: " << r.summary << "\n";
}

}  // namespace
}  // namespace libpkg::check::detail
