/* SPDX-License-Identifier: BSD-3-Clause */
// libtorchlike_cuda.so: one tiny kernel, compiled for one architecture. Nothing
// here launches it unless a device is present (tests run on machines without a
// GPU and only check that the library was built and links libcudart).
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

#include "torchlike/c10.h"
#include "torchlike/cuda.h"

namespace {

__global__ void scale_kernel(float* x, float factor, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= factor;
}

void check(cudaError_t err, const char* what) {
  if (err != cudaSuccess)
    throw std::runtime_error(std::string("torch::cuda: ") + what + ": " + cudaGetErrorString(err));
}

}  // namespace

namespace torch::cuda {

int device_count() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();  // clear the sticky "no driver" error
    return 0;
  }
  return n;
}

std::string runtime_version() {
  return std::to_string(CUDART_VERSION / 1000) + "." + std::to_string(CUDART_VERSION % 1000 / 10);
}

std::list<std::string> arch_list() {
  std::list<std::string> out;
  for (const auto& a : c10::split(TORCHLIKE_CUDA_ARCHS, ';'))
    out.push_back("sm_" + a.substr(0, a.find('-')));
  return out;
}

void scale_(at::Tensor& t, float factor) {
  if (device_count() == 0)
    throw std::runtime_error("torch::cuda::scale_: no CUDA device for " + t.str());
  const int n = static_cast<int>(t.numel());
  const size_t bytes = t.numel() * sizeof(float);
  float* dev = nullptr;
  check(cudaMalloc(&dev, bytes), "cudaMalloc");
  check(cudaMemcpy(dev, t.data().data(), bytes, cudaMemcpyHostToDevice), "cudaMemcpy");
  scale_kernel<<<(n + 255) / 256, 256>>>(dev, factor, n);
  check(cudaGetLastError(), "scale_kernel");
  check(cudaMemcpy(t.data().data(), dev, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy");
  check(cudaFree(dev), "cudaFree");
}

}  // namespace torch::cuda
