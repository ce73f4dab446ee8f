// SPDX-License-Identifier: BSD-3-Clause
// torchlike_client: the smallest program that exercises the C++ API across both
// libraries. Its references to std::string / std::list functions only resolve
// when it is compiled with the ABI the libraries were built with.
#include <cstdio>
#include <exception>

#include "torchlike/torch.h"

int main() {
  try {
    at::Tensor t = at::ones(4, "x");
    c10::Device dev = c10::Device::parse("cpu");
    std::printf("torchlike %s cxx11_abi=%d ops=%zu\n", torch::version().c_str(),
                c10::compiled_cxx11_abi(), torch::registered_ops().size());
    std::printf("%s on %s\n", torch::describe(t).c_str(), dev.str().c_str());
    std::printf("%s\n", torch::call_op("torch::ops::op_001", "x", {"alpha", "beta"}).c_str());
    std::printf("%s\n", at::ops::op_002("y", {"gamma"}).c_str());
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "torchlike_client: %s\n", e.what());
    return 1;
  }
}
