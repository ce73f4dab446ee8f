// SPDX-License-Identifier: BSD-3-Clause
// torch:: half of libtorchlike.so: the registry over every generated op, which
// is what makes libtorchlike NEED libc10like (c10::ops and c10::detail).
#include "torchlike/torch.h"

#include <map>
#include <stdexcept>

namespace torch {

namespace {

const std::map<std::string, torchlike::OpFn>& registry() {
  static const auto table = [] {
    std::map<std::string, torchlike::OpFn> t;
    c10::ops::register_all(t);
    at::ops::register_all(t);
    torch::ops::register_all(t);
    return t;
  }();
  return table;
}

}  // namespace

std::string version() { return c10::version(); }

bool compiled_with_cxx11_abi() { return _GLIBCXX_USE_CXX11_ABI != 0; }

std::list<std::string> registered_ops() {
  std::list<std::string> names;
  for (const auto& entry : registry()) names.push_back(entry.first);
  return names;
}

std::string call_op(const std::string& qualname, const std::string& self,
                    const std::list<std::string>& args) {
  auto it = registry().find(qualname);
  if (it == registry().end()) throw std::out_of_range("torch::call_op: no op named '" + qualname + "'");
  return it->second(self, args);
}

std::string describe(const at::Tensor& t) {
  return t.str() + " sum=" + std::to_string(at::sum(t));
}

}  // namespace torch
