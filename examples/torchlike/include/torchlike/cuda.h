// SPDX-License-Identifier: BSD-3-Clause
// torch::cuda:: part of torchlike (libtorchlike_cuda.so, built only with nvcc).
#pragma once

#include <list>
#include <string>

#include "torchlike/aten.h"

namespace torch::cuda {

// Number of visible devices; 0 when there is no driver or no GPU (never throws).
int device_count();

// "13.0": the CUDA runtime version libtorchlike_cuda was compiled against.
std::string runtime_version();

// The architectures the kernels were compiled for, e.g. {"sm_75"}.
std::list<std::string> arch_list();

// Multiplies T by FACTOR on device 0. Throws std::runtime_error without a device.
void scale_(at::Tensor& t, float factor);

}  // namespace torch::cuda
