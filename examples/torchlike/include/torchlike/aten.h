// SPDX-License-Identifier: BSD-3-Clause
// at:: tensors of torchlike (libtorchlike.so): a named vector of floats.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "torchlike/c10.h"

namespace at {

class Tensor {
 public:
  Tensor() = default;
  Tensor(std::vector<float> data, std::string name, c10::Device device = {});

  const std::vector<float>& data() const { return data_; }
  std::vector<float>& data() { return data_; }
  const std::string& name() const { return name_; }
  const c10::Device& device() const { return device_; }
  std::size_t numel() const { return data_.size(); }

  // "Tensor(NAME, numel=N, device=cpu)"
  std::string str() const;

 private:
  std::vector<float> data_;
  std::string name_;
  c10::Device device_;
};

Tensor arange(std::int64_t n, const std::string& name = "arange");
Tensor ones(std::int64_t n, const std::string& name = "ones");
double sum(const Tensor& t);

}  // namespace at
