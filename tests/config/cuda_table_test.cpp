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
  for (const char* v : {"11.8", "12.1", "12.4", "12.6", "12.8", "13.0"}) {
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
  const CudaTable& t = cuda_table(parse_accelerator("12.8"));
  EXPECT_FALSE(t.libraries);
  try {
    t.bundled();
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::not_found);
    EXPECT_NE(std::string(e.what()).find("12.8"), std::string::npos);
  }
  EXPECT_THROW(t.arch_list(), Error);
  EXPECT_THROW(t.pypi_rpath_string(), Error);
  // No version has a documented TORCH_CUDA_ARCH_LIST.
  EXPECT_FALSE(cuda_table(parse_accelerator("12.4")).torch_cuda_arch_list);
  // pypi mode starts at 11.7.
  EXPECT_TRUE(cuda_table(parse_accelerator("11.6")).pypi_rpath.empty());
  EXPECT_FALSE(cuda_table(parse_accelerator("11.7")).pypi_rpath.empty());
}

TEST(CudaTable, UnknownVersion) {
  try {
    cuda_table(parse_accelerator("cu99"));
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::not_found);
    std::string msg = e.what();
    EXPECT_NE(msg.find("9.9"), std::string::npos) << msg;
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
