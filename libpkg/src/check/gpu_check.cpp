// SPDX-License-Identifier: BSD-3-Clause
// gpu: a tiny job through the packaged CUDA runtime (the CUDA rows of
// check_binary.sh §1.4), by a probe compiled at check time that dlopens it
// — skipped with the runtime's own reason where no GPU answers.
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <set>
#include <sstream>
#include <variant>

#include "check/runtime_util.hpp"
#include "libpkg/base/atomic_file.hpp"
#include "libpkg/base/error.hpp"
#include "libpkg/base/scratch_dir.hpp"
#include "libpkg/base/subprocess.hpp"

namespace fs = std::filesystem;

namespace libpkg::check::detail {
namespace {

// The GPU probe: the CUDA runtime API through dlopen/dlsym (no CUDA
// headers or toolkit needed to build it). cudaMemset runs a kernel on the
// device; the copy back proves it ran. Exit 0 pass, 1 CUDA error or wrong
// bytes, 3 no usable device, 4 the library or a symbol doesn't load.
constexpr const char* kGpuProbe = R"(#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int (*get_count_t)(int*);
typedef const char* (*error_string_t)(int);
typedef int (*malloc_t)(void**, size_t);
typedef int (*memset_t)(void*, int, size_t);
typedef int (*memcpy_t)(void*, const void*, size_t, int);
typedef int (*free_t)(void*);
typedef int (*synchronize_t)(void);

enum { kDeviceToHost = 2, kSize = 1 << 20, kByte = 0x5a };

static void* lib;

static void* need(const char* name) {
  void* f = dlsym(lib, name);
  if (f == NULL) {
    const char* err = dlerror();
    printf("missing %s: %s\n", name, err ? err : "not found");
    exit(4);
  }
  return f;
}

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (lib == NULL) {
    printf("%s\n", dlerror());
    return 4;
  }
  get_count_t get_count = (get_count_t)need("cudaGetDeviceCount");
  error_string_t error_string = (error_string_t)need("cudaGetErrorString");
  malloc_t cuda_malloc = (malloc_t)need("cudaMalloc");
  memset_t cuda_memset = (memset_t)need("cudaMemset");
  memcpy_t cuda_memcpy = (memcpy_t)need("cudaMemcpy");
  free_t cuda_free = (free_t)need("cudaFree");
  synchronize_t synchronize = (synchronize_t)need("cudaDeviceSynchronize");

  int count = 0;
  int err = get_count(&count);
  if (err != 0) {
    printf("%s (cudaGetDeviceCount error %d)\n", error_string(err), err);
    return 3;
  }
  if (count == 0) {
    printf("no CUDA device\n");
    return 3;
  }
  void* device = NULL;
  if ((err = cuda_malloc(&device, kSize)) != 0) {
    printf("cudaMalloc: %s\n", error_string(err));
    return 1;
  }
  if ((err = cuda_memset(device, kByte, kSize)) != 0 ||
      (err = synchronize()) != 0) {
    printf("cudaMemset: %s\n", error_string(err));
    return 1;
  }
  unsigned char* host = (unsigned char*)malloc(kSize);
  if (host == NULL) return 1;
  memset(host, 0, kSize);
  if ((err = cuda_memcpy(host, device, kSize, kDeviceToHost)) != 0) {
    printf("cudaMemcpy: %s\n", error_string(err));
    return 1;
  }
  for (size_t i = 0; i < kSize; ++i)
    if (host[i] != kByte) {
      printf("byte %zu is 0x%02x after cudaMemset 0x%02x\n", i, host[i],
             kByte);
      return 1;
    }
  cuda_free(device);
  free(host);
  printf("ok %d\n", count);
  return 0;
}
)";

}  // namespace

void check_gpu(const Package& pkg, const CheckOptions& options,
               CheckResult& result) {
  std::optional<fs::path> cudart = cuda_runtime(pkg);
  if (!cudart) {
    set_result(result, Status::skip, "no CUDA runtime in the package");
    return;
  }
  const unsigned timeout = std::min(options.timeout_seconds, 60u);
  ScratchDir scratch = make_scratch(options, "gpu");
  const fs::path source = scratch.path() / "gpu_probe.c";
  const fs::path exe = scratch.path() / "gpu_probe";
  write_file_atomically(source, kGpuProbe);
  RunResult built = run_process(
      {options.cc, source.string(), "-o", exe.string(), "-ldl"},
      run_options(options, options.timeout_seconds, scratch.path()));
  if (built.not_found) {
    set_result(
        result, Status::skip,
        fmt::format("no C compiler: {} not found (pass --cc)", options.cc));
    return;
  }
  if (!built.ok()) {
    set_result(result, Status::skip,
               fmt::format("the GPU probe does not build with {} ({}): {}",
                           options.cc, built.describe(options.timeout_seconds),
                           compiler_errors(built.output, 2)));
    return;
  }
  log_step(options, fmt::format("gpu: probing {}", cudart->string()));
  RunResult ran = run_process({exe.string(), cudart->string()},
                              run_options(options, timeout, scratch.path()));
  const std::string message = tail(ran.output, 2);
  const std::string lib = cudart->filename().string();
  if (ran.ok()) {
    std::string count = last_line(ran.output);
    if (count.starts_with("ok ")) count = count.substr(3);
    set_result(result, Status::pass,
               fmt::format("ran a memset kernel on {} device(s) through {}",
                           count, cudart->string()));
  } else if (ran.exit_code == 3) {
    set_result(result, Status::skip, fmt::format("no usable GPU: {}", message));
  } else if (ran.exit_code == 4) {
    set_result(
        result, Status::fail,
        fmt::format("the packaged CUDA runtime does not load: {}", message));
    result.problems.push_back({lib, message});
  } else {
    set_result(result, Status::fail,
               fmt::format("the GPU job through {} failed ({}){}", lib,
                           ran.describe(timeout),
                           message.empty() ? "" : ": " + message));
    result.problems.push_back(
        {lib, message.empty() ? ran.describe(timeout) : message});
  }
}

}  // namespace libpkg::check::detail
