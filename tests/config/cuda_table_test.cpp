// SPDX-License-Identifier: BSD-3-Clause
// Per-CUDA tables: the built-in facts (builder-scripts.md §2.5), lookups,
// unknown versions, and user override files.
#include "libpkg/config/cuda_table.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "libpkg/base/error.hpp"

namespace {

using libpkg::Errc;
using libpkg::Error;
using namespace libpkg::config;

const CudaLibrary* find_lib(const CudaTable& t, const std::string& soname) {
  for (const auto& l : t.bundled())
    if (l.soname == soname) return &l;
  return nullptr;
}

TEST(CudaTable, KnownVersions) {
  for (const char* v :
       {"11.8", "12.1", "12.4", "12.6", "12.8", "12.9", "13.0"}) {
    SCOPED_TRACE(v);
    EXPECT_EQ(cuda_table(parse_accelerator(v)).version, v);
  }
  // Any spelling, and a patch level is ignored.
  EXPECT_EQ(cuda_table(parse_accelerator("cu118")).version, "11.8");
  Accelerator patched = parse_accelerator("12.4");
  patched.patch = 1;
  EXPECT_EQ(cuda_table(patched).version, "12.4");
}

TEST(CudaTable, Cuda118Facts) {
  const CudaTable& t = cuda_table(parse_accelerator("11.8"));
  EXPECT_EQ(t.bundled().size(), 14u + 1u);  // + optional cusparseLt
  const CudaLibrary* cudart = find_lib(t, "libcudart.so.11.0");
  ASSERT_TRUE(cudart);
  EXPECT_EQ(cudart->path, "/usr/local/cuda/lib64/libcudart.so.11.0");
  EXPECT_FALSE(cudart->keep_name);               // hash-renamed
  ASSERT_TRUE(find_lib(t, "libnvrtc.so.11.2"));  // "not a mistake"
  const CudaLibrary* builtins = find_lib(t, "libnvrtc-builtins.so.11.8");
  ASSERT_TRUE(builtins);
  EXPECT_TRUE(builtins->keep_name);  // pytorch#99781
  EXPECT_TRUE(find_lib(t, "libcudnn_graph.so.9")->keep_name);
  EXPECT_TRUE(find_lib(t, "libcublasLt.so.11")->keep_name);
  const CudaLibrary* sparse = find_lib(t, "libcusparseLt.so.0");
  ASSERT_TRUE(sparse);
  EXPECT_EQ(sparse->condition, "cusparselt");
  EXPECT_TRUE(t.bundle_ptxas);
}

TEST(CudaTable, Cuda124Facts) {
  const CudaTable& t = cuda_table(parse_accelerator("cu124"));
  EXPECT_TRUE(find_lib(t, "libcudart.so.12"));
  EXPECT_TRUE(find_lib(t, "libnvrtc-builtins.so"));
  EXPECT_TRUE(find_lib(t, "libnvToolsExt.so.1"));
  EXPECT_FALSE(t.bundle_ptxas);
  EXPECT_TRUE(t.keeps_name("libcudnn.so.9"));
  EXPECT_FALSE(t.keeps_name("libgomp.so.1"));
  ASSERT_EQ(t.pypi_rpath.size(), 11u);
  EXPECT_EQ(t.pypi_rpath.front(), "$ORIGIN/../../nvidia/cublas/lib");
  EXPECT_EQ(t.pypi_rpath.back(), "$ORIGIN/../../nvidia/nvtx/lib");
  std::string joined = t.pypi_rpath_string();
  EXPECT_EQ(std::count(joined.begin(), joined.end(), ':'), 10);
}

TEST(CudaTable, UndocumentedFactsAreNotFound) {
  // A user table may leave facts out; asking for them is not_found.
  CudaTables user =
      CudaTables::parse(R"({"versions": [{"cuda": "14.2"}]})", "user.json");
  const CudaTable& t = user.find(parse_accelerator("14.2"));
  EXPECT_FALSE(t.libraries);
  try {
    t.bundled();
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::not_found);
    EXPECT_NE(std::string(e.what()).find("14.2"), std::string::npos);
  }
  EXPECT_THROW(t.arch_list(), Error);
  EXPECT_THROW(t.arch_list("aarch64"), Error);
  // builder-scripts.md documents no TORCH_CUDA_ARCH_LIST for 12.4.
  EXPECT_FALSE(cuda_table(parse_accelerator("12.4")).torch_cuda_arch_list);
  EXPECT_THROW(cuda_table(parse_accelerator("12.4")).arch_list("x86_64"),
               Error);
  // pypi mode starts at 11.7.
  EXPECT_TRUE(cuda_table(parse_accelerator("11.6")).pypi_rpath.empty());
  EXPECT_FALSE(cuda_table(parse_accelerator("11.7")).pypi_rpath.empty());
}

std::vector<std::string> files(const std::vector<CudaLibrary>& libs) {
  std::vector<std::string> out;
  for (const auto& l : libs) out.push_back(l.file_name());
  return out;
}

bool has(const std::vector<std::string>& v, const std::string& x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

// cuda-current.md: the lists of 12.6 - 13.0.
TEST(CudaTable, CurrentVersionsBundle) {
  const char* common[] = {
      "libcudnn_adv.so.9",    "libcudnn_engines_runtime_compiled.so.9",
      "libcudnn.so.9",        "libcusparseLt.so.0",
      "libnvrtc-builtins.so", "libcufile.so.0",
      "libcufile_rdma.so.1",  "libnvshmem_host.so.3",
      "libnvperf_host.so"};
  for (const char* v : {"12.6", "12.8", "12.9", "13.0"}) {
    SCOPED_TRACE(v);
    const CudaTable& t = cuda_table(parse_accelerator(v));
    const auto x86 = files(t.bundled_for("x86_64"));
    for (const char* f : common) EXPECT_TRUE(has(x86, f)) << f;
    const bool v13 = t.version == "13.0";
    const std::string m = v13 ? "13" : "12";
    for (const std::string f :
         {"libcublas.so.", "libcublasLt.so.", "libcudart.so.", "libnvrtc.so.",
          "libcupti.so."})
      EXPECT_TRUE(has(x86, f + m)) << f;
    // The 12.9 exception, and 13.x has none either.
    EXPECT_EQ(has(x86, "libnvToolsExt.so.1"),
              t.version == "12.6" || t.version == "12.8");
    // 13.x: the RDMA stack nvshmem needs.
    for (const char* f : {"libibverbs.so.1", "librdmacm.so.1", "libmlx5.so.1",
                          "libnl-3.so.200", "libnl-route-3.so.200"})
      EXPECT_EQ(has(x86, f), v13) << f;
    // cusparseLt is unconditional here: listed once, no condition.
    EXPECT_EQ(std::count(x86.begin(), x86.end(), "libcusparseLt.so.0"), 1);
    for (const auto& l : t.bundled()) {
      EXPECT_TRUE(l.condition.empty()) << l.file_name();
      EXPECT_FALSE(l.source.empty()) << l.file_name();  // each names its source
    }
    // CUPTI from extras/CUPTI/lib64, lib64 as the fallback.
    for (const auto& l : t.bundled())
      if (l.file_name().starts_with("libcupti") ||
          l.file_name() == "libnvperf_host.so") {
        EXPECT_EQ(l.dir, "extras/CUPTI/lib64");
        EXPECT_EQ(l.path,
                  "/usr/local/cuda/extras/CUPTI/lib64/" + l.file_name());
        EXPECT_EQ(l.fallback_dirs, std::vector<std::string>{"lib64"});
      }
    // aarch64 additions: libgomp, libgfortran; ACL and NVPL when present.
    const auto arm = t.bundled_for("aarch64");
    EXPECT_EQ(arm.size(), x86.size() + 8);
    for (const auto& l : arm) {
      if (l.arch.empty()) continue;
      EXPECT_EQ(l.arch, "aarch64");
      const std::string f = l.file_name();
      EXPECT_EQ(l.optional,
                f.starts_with("libarm_compute") || f.starts_with("libnvpl_"))
          << f;
    }
    EXPECT_TRUE(has(files(arm), "libgfortran.so.5"));
    EXPECT_FALSE(has(x86, "libgfortran.so.5"));
    // Keep-name rules apply to the new lists too.
    for (const auto& l : t.bundled())
      EXPECT_EQ(l.keep_name, l.file_name().starts_with("libcudnn") ||
                                 l.file_name().starts_with("libcublas") ||
                                 l.file_name().starts_with("libnvrtc-builtins"))
          << l.file_name();
    // nvcc flags: -compress-mode=size on 13.x only.
    EXPECT_EQ(t.nvcc_flags, v13 ? "-Xfatbin -compress-all --threads 2 "
                                  "-compress-mode=size"
                                : "-Xfatbin -compress-all --threads 2");
  }
}

TEST(CudaTable, CurrentArchListsAndPypi) {
  auto list = [](const char* v, const char* arch, bool libtorch = false) {
    return cuda_table(parse_accelerator(v)).arch_list(arch, libtorch);
  };
  EXPECT_EQ(list("12.6", "x86_64"), "5.0;6.0;7.0;7.5;8.0;8.6;9.0");
  EXPECT_EQ(list("12.6", "aarch64"), "8.0;9.0");
  EXPECT_EQ(list("12.8", "x86_64"), "7.0;7.5;8.0;8.6;9.0;10.0;12.0");
  EXPECT_EQ(list("12.8", "aarch64"), "8.0;9.0;10.0;12.0");
  EXPECT_EQ(list("12.9", "x86_64"), "7.0;7.5;8.0;8.6;9.0;10.0;12.0+PTX");
  EXPECT_EQ(list("12.9", "x86_64", true), "7.5;8.0;9.0;10.0;12.0+PTX");
  EXPECT_EQ(list("12.9", "aarch64", true), "8.0;9.0;10.0;12.0+PTX");
  EXPECT_EQ(list("13.0", "x86_64"), "7.5;8.0;8.6;9.0;10.0;12.0+PTX");
  EXPECT_EQ(list("13.0", "aarch64"), "8.0;9.0;10.0;11.0;12.0+PTX");
  EXPECT_EQ(list("13.0", ""), list("13.0", "x86_64"));
  EXPECT_THROW(list("13.0", "s390x"), Error);

  const CudaTable& t12 = cuda_table(parse_accelerator("12.8"));
  ASSERT_EQ(t12.pypi_rpath.size(), 15u);
  EXPECT_EQ(t12.pypi_rpath.front(), "$ORIGIN/../../nvidia/cudnn/lib");
  EXPECT_EQ(t12.pypi_rpath[13], "$ORIGIN/../../nvidia/cufile/lib");
  EXPECT_EQ(t12.pypi_rpath.back(), "$ORIGIN/../../cusparselt/lib");
  const CudaTable& t13 = cuda_table(parse_accelerator("13.0"));
  EXPECT_EQ(t13.pypi_rpath,
            (std::vector<std::string>{"$ORIGIN/../../nvidia/cudnn/lib",
                                      "$ORIGIN/../../nvidia/nvshmem/lib",
                                      "$ORIGIN/../../nvidia/nccl/lib",
                                      "$ORIGIN/../../nvidia/cusparselt/lib",
                                      "$ORIGIN/../../nvidia/cu13/lib"}));
  EXPECT_FALSE(t13.pypi_rpath_source.empty());
  EXPECT_EQ(t13.pypi_provides.front(), "libnccl.so.*");
  EXPECT_FALSE(t13.pypi_provides_source.empty());
  ASSERT_FALSE(t13.platforms.empty());
  EXPECT_EQ(t13.platforms[0], (std::pair<std::string, std::string>{
                                  "aarch64", "manylinux_2_28_aarch64"}));
  const std::pair<std::string, std::string> cupti{"USE_CUPTI_SO", "1"};
  EXPECT_NE(std::find(t13.build_env.begin(), t13.build_env.end(), cupti),
            t13.build_env.end());
  EXPECT_EQ(t13.build_env.size(), 4u);
}

// The one name rule (drivers, keep-name rules, check_binary).
TEST(CudaTable, NameRule) {
  EXPECT_TRUE(
      table_name_matches("libnvrtc-builtins.so", "libnvrtc-builtins.so.13.0"));
  EXPECT_TRUE(table_name_matches("libcudart.so.13", "libcudart.so.13"));
  EXPECT_TRUE(table_name_matches("libcudart.so.13", "libcudart.so.13.0.48"));
  EXPECT_FALSE(table_name_matches("libnvrtc-builtins.so",
                                  "libnvrtc-builtins.alt.so.13.0"));
  EXPECT_FALSE(table_name_matches("libnvrtc.so.13", "libnvrtc.so.130"));
  EXPECT_FALSE(table_name_matches("libcudart.so.13", "libcudart.so.12"));
  EXPECT_FALSE(table_name_matches("libcudart.so", "libcudart.so."));
  EXPECT_FALSE(table_name_matches("libcublas.so.13", "libcublasLt.so.13"));
  EXPECT_FALSE(table_name_matches("", "libx.so"));
}

TEST(CudaTable, UnknownVersion) {
  try {
    cuda_table(parse_accelerator("cu99"));
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::not_found);
    std::string msg = e.what();
    EXPECT_NE(msg.find("unknown CUDA version 9.9"), std::string::npos) << msg;
    EXPECT_NE(msg.find("11.8"), std::string::npos) << msg;  // known ones
    EXPECT_NE(msg.find("13.0"), std::string::npos) << msg;
  }
  try {
    cuda_table(parse_accelerator("rocm6.1"));
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::usage);
  }
}

TEST(CudaTable, UserFileOverlay) {
  auto path = std::filesystem::temp_directory_path() /
              ("cuda-table-" + std::to_string(::getpid()) + ".json");
  {
    std::ofstream out(path);
    out << R"({"versions": [
      {"cuda": "12.8", "torch_cuda_arch_list": "7.5;8.0;9.0",
       "libraries": ["libcudart.so.12", {"path": "/opt/x/libfoo.so.1.2",
                                         "soname": "libfoo.so.1"}]},
      {"cuda": "14.1", "libraries": []}]})";
  }
  CudaTables user = CudaTables::load(path);
  std::filesystem::remove(path);
  CudaTables all = CudaTables::builtin().overlaid(user);
  const CudaTable& t = all.find(parse_accelerator("12.8"));
  EXPECT_EQ(t.arch_list(), "7.5;8.0;9.0");
  // Inherited top-level settings: directory, keep rules, optional libs.
  ASSERT_EQ(t.bundled().size(), 3u);
  EXPECT_EQ(t.bundled()[0].path, "/usr/local/cuda/lib64/libcudart.so.12");
  EXPECT_EQ(t.bundled()[1].path, "/opt/x/libfoo.so.1.2");
  EXPECT_EQ(t.bundled()[1].soname, "libfoo.so.1");
  EXPECT_EQ(t.bundled()[2].soname, "libcusparseLt.so.0");
  EXPECT_EQ(all.find(parse_accelerator("14.1")).version, "14.1");
  EXPECT_EQ(all.find(parse_accelerator("11.8")).version, "11.8");  // kept
  EXPECT_EQ(all.versions().size(), CudaTables::builtin().versions().size() + 1);
}

TEST(CudaTable, BadFiles) {
  const char* bad[] = {
      "not json",
      "[]",
      R"({"versions": [{"cuda": "twelve"}]})",
      R"({"versions": [{"cuda": "12.4"}, {"cuda": "cu124"}]})",
      R"({"versions": [{"cuda": "12.4", "libraries": [7]}]})",
      R"({"keep_names": "libcudnn*", "versions": []})",
  };
  for (const char* text : bad) {
    SCOPED_TRACE(text);
    try {
      CudaTables::parse(text, "user.json");
      ADD_FAILURE() << "accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Errc::format);
      EXPECT_EQ(e.file(), "user.json");
    }
  }
  try {
    CudaTables::load("/nonexistent/cuda.json");
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::io);
  }
}

}  // namespace
