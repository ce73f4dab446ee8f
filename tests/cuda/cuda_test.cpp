// SPDX-License-Identifier: BSD-3-Clause
// CUDA toolkit detection and switching over fake roots built in a temporary
// directory (every version source, malformed files, a real `cuda`
// directory, magma, a missing version), a concurrent reader checking that
// root/cuda never disappears during switches, the exported environment
// evaluated by bash, and a read-only look at the machine's /usr/local.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <thread>

#include "../base/unprivileged.hpp"
#include "libpkg/base/error.hpp"
#include "libpkg/base/scratch_dir.hpp"
#include "libpkg/base/subprocess.hpp"
#include "libpkg/config/accelerator.hpp"
#include "libpkg/cuda/table_files.hpp"
#include "libpkg/cuda/toolkit.hpp"

namespace {

namespace fs = std::filesystem;
using libpkg::Errc;
using libpkg::Error;
using libpkg::ScratchDir;
using libpkg::config::parse_accelerator;
namespace cu = libpkg::cuda;

void write(const fs::path& p, const std::string& text, bool exec = false) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << text;
  if (exec) fs::permissions(p, fs::perms::owner_all, fs::perm_options::add);
}

void touch(const fs::path& p) { write(p, ""); }

std::string header(const char* prefix, const char* patch_name, int a, int b,
                   int c) {
  return std::string("#ifndef GUARD\n#define GUARD\n") + "#define " + prefix +
         "_MAJOR " + std::to_string(a) + "\n#define " + prefix + "_MINOR " +
         std::to_string(b) + "\n#  define " + prefix + "_" + patch_name + "\t" +
         std::to_string(c) + "\n#endif\n";
}

// The layout of the brief: one toolkit per version source.
//   cuda-11.8  version.txt
//   cuda-12.1  only lib64/libcudart.so.12.1.105 (+ the short names)
//   cuda-12.4  version.json, cudnn_version.h, libnccl.so.2.21.5
//   cuda-12.6  a bin/nvcc script, headers under targets/x86_64-linux
//   cuda-9.2   nothing but its name
class FakeRoot : public testing::Test {
 protected:
  void SetUp() override {
    write(root() / "cuda-11.8/version.txt", "CUDA Version 11.8.89\n");
    touch(root() / "cuda-12.1/lib64/libcudart.so.12.1.105");
    touch(root() / "cuda-12.1/lib64/libcudart.so.12");
    touch(root() / "cuda-12.1/lib64/libcudart.so.12.0.1");  // lower: ignored
    write(root() / "cuda-12.4/version.json",
          R"({"cuda": {"name": "CUDA SDK", "version": "12.4.1"},
              "cuda_cudart": {"name": "CUDA Runtime", "version": "12.4.127"}})");
    write(root() / "cuda-12.4/include/cudnn_version.h",
          header("CUDNN", "PATCHLEVEL", 9, 1, 0));
    touch(root() / "cuda-12.4/lib64/libnccl.so.2.21.5");
    touch(root() / "cuda-12.4/lib64/libnccl.so.2");
    write(root() / "cuda-12.6/bin/nvcc",
          "#!/bin/sh\n"
          "echo 'nvcc: NVIDIA (R) Cuda compiler driver'\n"
          "echo 'Copyright (c) 2005-2024 NVIDIA Corporation'\n"
          "echo 'Built on Tue_Oct_29_23:50:19_PDT_2024'\n"
          "echo 'Cuda compilation tools, release 12.6, V12.6.85'\n"
          "echo 'Build cuda_12.6.r12.6/compiler.35059454_0'\n",
          true);
    write(root() / "cuda-12.6/targets/x86_64-linux/include/nccl.h",
          header("NCCL", "PATCH", 2, 23, 4));
    touch(root() / "cuda-12.6/targets/x86_64-linux/lib/libcudnn.so.9.5.1");
    fs::create_directories(root() / "cuda-9.2");
    // Not toolkits.
    fs::create_directories(root() / "cuda-next");
    touch(root() / "cuda-13.0");  // a file
    fs::create_directories(root() / "bin");
  }

  const fs::path& root() const { return scratch_.path(); }

  std::string link_target(const char* name = "cuda") const {
    return fs::read_symlink(root() / name).string();
  }

  ScratchDir scratch_ = ScratchDir::in_temp("cuda-test-");
};

const cu::Toolkit* find(const std::vector<cu::Toolkit>& list,
                        const std::string& dir_name) {
  for (const auto& t : list)
    if (t.dir.filename() == dir_name) return &t;
  return nullptr;
}

TEST_F(FakeRoot, ListsEveryToolkitWithItsSource) {
  auto list = cu::list_toolkits(root());
  ASSERT_EQ(list.size(), 5u);
  std::vector<std::string> versions;
  for (const auto& t : list) versions.push_back(t.version);
  EXPECT_EQ(versions, (std::vector<std::string>{"9.2", "11.8.89", "12.1.105",
                                                "12.4.1", "12.6"}));

  const cu::Toolkit* t = find(list, "cuda-11.8");
  ASSERT_TRUE(t);
  EXPECT_EQ(t->version_source, "version.txt");
  EXPECT_EQ(t->major, 11);
  EXPECT_EQ(t->minor, 8);
  EXPECT_FALSE(t->cudnn);
  EXPECT_FALSE(t->nccl);

  t = find(list, "cuda-12.1");
  ASSERT_TRUE(t);
  EXPECT_EQ(t->version_source, "libcudart.so.X.Y.Z");

  t = find(list, "cuda-12.4");
  ASSERT_TRUE(t);
  EXPECT_EQ(t->version_source, "version.json");
  EXPECT_EQ(t->dir, root() / "cuda-12.4");
  EXPECT_EQ(t->cudnn, "9.1.0");
  EXPECT_EQ(t->nccl, "2.21.5");

  t = find(list, "cuda-12.6");
  ASSERT_TRUE(t);
  EXPECT_EQ(t->version_source, "nvcc");
  EXPECT_EQ(t->major, 12);
  EXPECT_EQ(t->minor, 6);
  EXPECT_EQ(t->nccl, "2.23.4");
  EXPECT_EQ(t->cudnn, "9.5.1");

  t = find(list, "cuda-9.2");
  ASSERT_TRUE(t);
  EXPECT_EQ(t->version_source, "directory name");

  for (const auto& x : list) EXPECT_FALSE(x.is_current) << x.dir;
  EXPECT_FALSE(cu::current_toolkit(root()));
}

TEST_F(FakeRoot, SourcesInOrderMalformedOnesSkipped) {
  // version.json wins over nvcc and version.txt...
  fs::path d = root() / "cuda-12.4";
  write(d / "version.txt", "CUDA Version 12.0.0\n");
  fs::create_directories(d / "bin");
  fs::copy_file(root() / "cuda-12.6/bin/nvcc", d / "bin/nvcc",
                fs::copy_options::overwrite_existing);
  EXPECT_EQ(cu::probe_toolkit(d)->version_source, "version.json");
  // ...a broken one falls through to nvcc, then version.txt, then libcudart.
  for (const char* bad : {"{\"cuda\": {\"version\": \"twelve\"}}",
                          "{\"cuda\": 12}", "[1, 2]", "{\"cuda\": {", ""}) {
    write(d / "version.json", bad);
    auto t = cu::probe_toolkit(d);
    ASSERT_TRUE(t) << bad;
    EXPECT_EQ(t->version_source, "nvcc") << bad;
    EXPECT_EQ(t->version, "12.6") << bad;
  }
  write(d / "bin/nvcc", "#!/bin/sh\necho 'release twelve'\n", true);
  EXPECT_EQ(cu::probe_toolkit(d)->version_source, "version.txt");
  write(d / "bin/nvcc", "#!/bin/sh\nexit 1\n", true);
  EXPECT_EQ(cu::probe_toolkit(d)->version, "12.0.0");
  write(d / "version.txt", "CUDA Version x\n");
  touch(d / "lib64/libcudart.so.12.4.127");
  EXPECT_EQ(cu::probe_toolkit(d)->version, "12.4.127");

  // A cudnn header without PATCHLEVEL: the library name is used instead.
  write(d / "include/cudnn_version.h",
        "#define CUDNN_MAJOR 9\n#define CUDNN_MINOR 1\n");
  EXPECT_FALSE(cu::probe_toolkit(d)->cudnn);
  touch(d / "lib64/libcudnn.so.8.9.7");
  touch(d / "lib64/libcudnn.so.8");
  EXPECT_EQ(cu::probe_toolkit(d)->cudnn, "8.9.7");
  // cuDNN 7 kept its version in cudnn.h.
  write(d / "include/cudnn.h", header("CUDNN", "PATCHLEVEL", 7, 6, 5));
  EXPECT_EQ(cu::probe_toolkit(d)->cudnn, "7.6.5");

  // Nothing at all and no version in the name: not a toolkit.
  fs::create_directories(root() / "other");
  EXPECT_FALSE(cu::probe_toolkit(root() / "other"));
}

TEST_F(FakeRoot, SwitchTwiceThenEnvironmentOfCurrent) {
  cu::SwitchResult r = cu::switch_toolkit(root(), parse_accelerator("cu124"));
  EXPECT_EQ(r.link, root() / "cuda");
  EXPECT_FALSE(r.old_target);
  EXPECT_EQ(r.new_target, "cuda-12.4");
  EXPECT_EQ(link_target(), "cuda-12.4");
  EXPECT_EQ(r.magma, cu::MagmaSwitch::absent);

  r = cu::switch_toolkit(root(), parse_accelerator("11.8"));
  EXPECT_EQ(r.old_target, fs::path("cuda-12.4"));
  EXPECT_EQ(link_target(), "cuda-11.8");

  auto current = cu::current_toolkit(root());
  ASSERT_TRUE(current);
  EXPECT_EQ(current->dir, root() / "cuda-11.8");
  EXPECT_EQ(current->version, "11.8.89");
  EXPECT_TRUE(current->is_current);
  for (const auto& t : cu::list_toolkits(root()))
    EXPECT_EQ(t.is_current, t.dir.filename() == "cuda-11.8") << t.dir;

  // No temporary links left behind.
  for (const auto& e : fs::directory_iterator(root()))
    EXPECT_FALSE(e.path().filename().string().starts_with(".cuda.tmp"))
        << e.path();

  // An absolute link (what the old scripts made) is followed too.
  fs::remove(root() / "cuda");
  fs::create_directory_symlink(root() / "cuda-12.4", root() / "cuda");
  EXPECT_EQ(cu::current_toolkit(root())->version, "12.4.1");
  r = cu::switch_toolkit(root(), parse_accelerator("cuda12.1"));
  EXPECT_EQ(r.old_target, root() / "cuda-12.4");
  EXPECT_EQ(cu::current_toolkit(root())->version, "12.1.105");
}

TEST_F(FakeRoot, MissingVersionNamesWhatIsInstalled) {
  cu::switch_toolkit(root(), parse_accelerator("12.4"));
  try {
    cu::switch_toolkit(root(), parse_accelerator("cu128"));
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::not_found);
    std::string what = e.what();
    EXPECT_NE(what.find("cuda-12.8"), std::string::npos) << what;
    EXPECT_NE(what.find("installed: 9.2, 11.8, 12.1, 12.4, 12.6"),
              std::string::npos)
        << what;
  }
  EXPECT_EQ(link_target(), "cuda-12.4");  // untouched
  EXPECT_THROW(
      {
        try {
          cu::find_toolkit(root(), parse_accelerator("10.2"));
        } catch (const Error& e) {
          EXPECT_EQ(e.code(), Errc::not_found);
          throw;
        }
      },
      Error);
  // cpu, rocm and xpu are not CUDA versions.
  for (const char* other : {"cpu", "rocm6.1", "xpu"}) {
    try {
      cu::switch_toolkit(root(), parse_accelerator(other));
      FAIL() << other;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Errc::usage) << other;
      EXPECT_NE(std::string(e.what()).find(other), std::string::npos)
          << e.what();
    }
  }
  // An empty root names that there is nothing.
  ScratchDir empty = ScratchDir::in_temp("cuda-empty-");
  try {
    cu::switch_toolkit(empty.path(), parse_accelerator("12.4"));
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no cuda-X.Y directory"),
              std::string::npos)
        << e.what();
  }
}

TEST_F(FakeRoot, RealCudaDirectoryIsListedAndNeverReplaced) {
  write(root() / "cuda/version.json", R"({"cuda": {"version": "10.2.89"}})");
  auto list = cu::list_toolkits(root());
  const cu::Toolkit* t = find(list, "cuda");
  ASSERT_TRUE(t);
  EXPECT_EQ(t->version, "10.2.89");
  EXPECT_TRUE(t->is_current);
  EXPECT_EQ(cu::current_toolkit(root())->dir, root() / "cuda");
  try {
    cu::switch_toolkit(root(), parse_accelerator("12.4"));
    FAIL() << "replaced a real directory";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::usage);
    EXPECT_NE(std::string(e.what()).find("real directory"), std::string::npos)
        << e.what();
  }
  EXPECT_TRUE(fs::is_regular_file(root() / "cuda/version.json"));
  EXPECT_FALSE(fs::is_symlink(root() / "cuda"));
  // Even rename(2) itself refuses to put a symlink over a directory, which
  // is what protects a directory created between our check and the rename.
  fs::create_directory_symlink("cuda-12.4", root() / "probe-link");
  EXPECT_NE(
      ::rename((root() / "probe-link").c_str(), (root() / "cuda").c_str()), 0);
  EXPECT_EQ(errno, EISDIR);
  EXPECT_TRUE(fs::is_regular_file(root() / "cuda/version.json"));
}

TEST_F(FakeRoot, LinkAlwaysExistsWhileSwitching) {
  cu::switch_toolkit(root(), parse_accelerator("12.4"));
  std::atomic<bool> done{false};
  std::atomic<long> checks{0}, missing{0};
  const std::string link = (root() / "cuda").string();
  std::thread reader([&] {
    struct stat st;
    while (!done.load()) {
      if (::lstat(link.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) ++missing;
      ++checks;
    }
  });
  for (int i = 0; i < 300; ++i)
    cu::switch_toolkit(root(), parse_accelerator(i % 2 ? "12.4" : "11.8"));
  done = true;
  reader.join();
  EXPECT_EQ(missing.load(), 0) << "of " << checks.load() << " checks";
  EXPECT_GT(checks.load(), 0);
  EXPECT_EQ(link_target(), "cuda-12.4");
}

TEST_F(FakeRoot, Magma) {
  fs::create_directories(root() / "cuda-12.4/magma/lib");
  fs::create_directories(root() / "magma-cuda118/lib");
  auto r = cu::switch_toolkit(root(), parse_accelerator("12.4"));
  EXPECT_EQ(r.magma, cu::MagmaSwitch::switched);
  EXPECT_FALSE(r.magma_old_target);
  EXPECT_EQ(link_target("magma"), "cuda-12.4/magma");
  EXPECT_TRUE(fs::is_directory(root() / "magma/lib"));

  r = cu::switch_toolkit(root(), parse_accelerator("11.8"));
  EXPECT_EQ(r.magma, cu::MagmaSwitch::switched);
  EXPECT_EQ(r.magma_old_target, fs::path("cuda-12.4/magma"));
  EXPECT_EQ(r.magma_new_target, fs::path("magma-cuda118"));
  EXPECT_EQ(link_target("magma"), "magma-cuda118");

  // No magma for 12.1: the link stays, and the result says where it points.
  r = cu::switch_toolkit(root(), parse_accelerator("12.1"));
  EXPECT_EQ(r.magma, cu::MagmaSwitch::absent);
  EXPECT_EQ(r.magma_old_target, fs::path("magma-cuda118"));
  EXPECT_EQ(link_target("magma"), "magma-cuda118");

  r = cu::switch_toolkit(root(), parse_accelerator("12.4"), false);
  EXPECT_EQ(r.magma, cu::MagmaSwitch::skipped);
  EXPECT_EQ(link_target("magma"), "magma-cuda118");
  EXPECT_EQ(link_target(), "cuda-12.4");

  // A real magma directory: refused before root/cuda changes.
  fs::remove(root() / "magma");
  fs::create_directories(root() / "magma/lib");
  EXPECT_THROW(cu::switch_toolkit(root(), parse_accelerator("11.8")), Error);
  EXPECT_EQ(link_target(), "cuda-12.4");
  EXPECT_TRUE(fs::is_directory(root() / "magma/lib"));
  // ...unless magma is left out.
  cu::switch_toolkit(root(), parse_accelerator("11.8"), false);
  EXPECT_EQ(link_target(), "cuda-11.8");
}

TEST_F(FakeRoot, DanglingLinkAndBadRoots) {
  fs::create_directory_symlink("cuda-99.9", root() / "cuda");
  EXPECT_THROW(cu::current_toolkit(root()), Error);
  // list still works: the dangling link is neither listed nor current.
  EXPECT_EQ(cu::list_toolkits(root()).size(), 5u);

  try {
    cu::list_toolkits(root() / "nope");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::not_found);
  }
  try {
    cu::list_toolkits(root() / "cuda-11.8/version.txt");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::io);
  }
}

TEST_F(FakeRoot, UnreadableRootIsIoError) {
  // Root reads a mode-000 directory: the listing runs as nobody in a child,
  // first on the readable root (so a failure below is the mode's doing).
  fs::permissions(root(), fs::perms(0755));
  auto list_as_nobody = [&] {
    return libpkg::testing::run_unprivileged([&]() -> std::string {
      try {
        return "listed " + std::to_string(cu::list_toolkits(root()).size());
      } catch (const Error& e) {
        return e.code() == Errc::io ? "io" : std::string("other: ") + e.what();
      }
    });
  };
  EXPECT_EQ(list_as_nobody(), "listed 5");
  fs::permissions(root(), fs::perms::none);
  EXPECT_EQ(list_as_nobody(), "io");
  fs::permissions(root(), fs::perms::owner_all);
}

TEST_F(FakeRoot, EnvironmentEvaluatesInBash) {
  // A toolkit path with a space and a quote, to exercise the quoting.
  fs::path odd = root() / "it's here" / "cuda-12.4";
  fs::create_directories(odd.parent_path());
  fs::rename(root() / "cuda-12.4", odd);
  auto t = cu::probe_toolkit(odd);
  ASSERT_TRUE(t);
  std::vector<std::string> lines = cu::environment(*t);
  ASSERT_EQ(lines.size(), 5u);
  EXPECT_EQ(lines[3], "export CUDA_VERSION=12.4");
  EXPECT_EQ(lines[4], "export CUDNN_VERSION=9.1.0");

  std::string script;
  for (const auto& l : lines) script += l + "\n";
  script +=
      "printf '%s\\n' \"$CUDA_HOME\" \"$PATH\" \"$LD_LIBRARY_PATH\" "
      "\"$CUDA_VERSION\" \"$CUDNN_VERSION\"\n";
  libpkg::RunOptions opt;
  opt.env_set = {"PATH=/usr/bin:/bin"};
  opt.env_unset = {"LD_LIBRARY_PATH"};
  auto r = libpkg::run_process({"/bin/bash", "-c", script}, opt);
  ASSERT_TRUE(r.ok()) << r.output;
  std::string d = odd.string();
  EXPECT_EQ(r.output, d + "\n" + d + "/bin:/usr/bin:/bin\n" + d +
                          "/lib64\n12.4\n9.1.0\n");
  // No CUDNN_VERSION when unknown.
  EXPECT_EQ(cu::environment(*cu::probe_toolkit(root() / "cuda-11.8")).size(),
            4u);
}

// The machine's toolkit, read only: never switched.
TEST(RealToolkit, ListsUsrLocal) {
  const fs::path root = "/usr/local";
  std::error_code ec;
  if (!fs::exists(root / "cuda", ec))
    GTEST_SKIP() << "/usr/local/cuda does not exist on this machine";
  auto list = cu::list_toolkits(root);
  ASSERT_FALSE(list.empty());
  int current = 0;
  for (const auto& t : list) {
    EXPECT_GT(t.major, 0) << t.dir;
    std::printf("  %s %s (%s) cudnn %s nccl %s%s\n", t.dir.c_str(),
                t.version.c_str(), t.version_source.c_str(),
                t.cudnn.value_or("-").c_str(), t.nccl.value_or("-").c_str(),
                t.is_current ? " [current]" : "");
    current += t.is_current;
  }
  EXPECT_EQ(current, 1);
  auto t = cu::current_toolkit(root);
  ASSERT_TRUE(t);
  // The version found agrees with the directory name the link points to.
  fs::path real = fs::canonical(root / "cuda");
  std::string name = real.filename().string();
  if (name.starts_with("cuda-")) {
    EXPECT_TRUE(t->version.starts_with(name.substr(5)))
        << t->version << " vs " << real;
  }
  // And with the toolkit's own nvcc, when it has one.
  if (fs::exists(real / "bin/nvcc")) {
    auto r = libpkg::run_process({(real / "bin/nvcc").string(), "--version"},
                                 {.timeout_seconds = 10});
    if (r.ok()) {
      EXPECT_NE(r.output.find("release " + std::to_string(t->major) + "." +
                              std::to_string(t->minor)),
                std::string::npos)
          << r.output;
    }
  }
}

// find_table_files: a table library that is not there, or not the right
// file, is passed over and listed among the places looked at; one that is
// there but cannot be read is an io error naming it (it used to be listed
// as "looked for" too, hiding why the library was missing). Root reads a
// mode-000 file, so the lookup runs as nobody in a child.
TEST(TableFiles, UnreadableLibraryIsAnIoErrorNotPassedOver) {
  ScratchDir dir = ScratchDir::in_temp("table-files-");
  fs::permissions(dir.path(), fs::perms(0755));
  const fs::path lib64 = dir.path() / "lib64";
  fs::create_directories(lib64);
  fs::permissions(lib64, fs::perms(0755));
  // Any ELF file will do (no SONAME: the file name is taken).
  fs::copy_file("/bin/true", lib64 / "libcudart.so.12");
  fs::permissions(lib64 / "libcudart.so.12", fs::perms(0644));
  libpkg::config::CudaTable table;
  table.version = "12.4";
  table.cuda_root = dir.path().string();
  libpkg::config::CudaLibrary lib;
  lib.soname = "libcudart.so.12";
  lib.dir = "lib64";
  lib.path = (lib64 / "libcudart.so.12").string();
  auto find_as_nobody = [&] {
    return libpkg::testing::run_unprivileged([&]() -> std::string {
      try {
        auto found = cu::find_table_files(table, {lib}, {});
        return "found " + std::to_string(found.found.size());
      } catch (const Error& e) {
        return std::string(libpkg::errc_name(e.code())) + ": " + e.what();
      }
    });
  };
  EXPECT_EQ(find_as_nobody(), "found 1");
  fs::permissions(lib64 / "libcudart.so.12", fs::perms::none);
  const std::string unreadable = find_as_nobody();
  EXPECT_TRUE(
      unreadable.starts_with("io: " + (lib64 / "libcudart.so.12").string()))
      << unreadable;
  EXPECT_NE(unreadable.find("Permission denied"), std::string::npos)
      << unreadable;
  // A directory that cannot be searched: the stat itself fails.
  fs::permissions(lib64 / "libcudart.so.12", fs::perms(0644));
  fs::permissions(lib64, fs::perms::owner_all);
  const std::string unsearchable = find_as_nobody();
  EXPECT_TRUE(unsearchable.starts_with("io: ")) << unsearchable;
  // Not there at all: not_found, listing where it looked.
  fs::permissions(lib64, fs::perms(0755));
  fs::remove(lib64 / "libcudart.so.12");
  const std::string missing = find_as_nobody();
  EXPECT_TRUE(missing.starts_with("not_found: ")) << missing;
  EXPECT_NE(missing.find("looked for " + (lib64 / "libcudart.so.12").string()),
            std::string::npos)
      << missing;
}

}  // namespace
