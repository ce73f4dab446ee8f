// SPDX-License-Identifier: BSD-3-Clause
// at:: half of libtorchlike.so.
#include "torchlike/aten.h"

#include <numeric>
#include <stdexcept>
#include <utility>

namespace at {

Tensor::Tensor(std::vector<float> data, std::string name, c10::Device device)
    : data_(std::move(data)), name_(std::move(name)), device_(std::move(device)) {}

std::string Tensor::str() const {
  return "Tensor(" + name_ + ", numel=" + std::to_string(numel()) + ", device=" + device_.str() +
         ")";
}

Tensor arange(std::int64_t n, const std::string& name) {
  if (n < 0) throw std::invalid_argument("at::arange: negative size");
  std::vector<float> v(static_cast<std::size_t>(n));
  std::iota(v.begin(), v.end(), 0.0f);
  return Tensor(std::move(v), name);
}

Tensor ones(std::int64_t n, const std::string& name) {
  if (n < 0) throw std::invalid_argument("at::ones: negative size");
  return Tensor(std::vector<float>(static_cast<std::size_t>(n), 1.0f), name);
}

double sum(const Tensor& t) {
  return std::accumulate(t.data().begin(), t.data().end(), 0.0);
}

}  // namespace at
