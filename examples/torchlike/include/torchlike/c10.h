// SPDX-License-Identifier: BSD-3-Clause
// c10:: core of torchlike (libc10like.so): strings, devices, the op helper.
#pragma once

#include <list>
#include <string>

#include "torchlike/config.h"

namespace torchlike {
// Every generated op has this signature (see ops.h).
using OpFn = std::string (*)(const std::string& self, const std::list<std::string>& args);
}  // namespace torchlike

namespace c10 {

// "1.0.0", from the library (not the header), so clients see what they loaded.
std::string version();

// The _GLIBCXX_USE_CXX11_ABI value libc10like was compiled with.
int compiled_cxx11_abi();

std::string join(const std::list<std::string>& parts, const std::string& sep);
std::list<std::string> split(const std::string& text, char sep);

struct Device {
  std::string type = "cpu";
  int index = -1;

  // "cpu", "cuda:0"
  std::string str() const;
  // Throws std::invalid_argument on a malformed or unknown device string.
  static Device parse(const std::string& text);
};

namespace detail {
// What every generated op computes: "QUALNAME#ID(self; arg, arg...)".
std::string apply_op(const char* qualname, int id, const std::string& self,
                     const std::list<std::string>& args);
}  // namespace detail

}  // namespace c10
