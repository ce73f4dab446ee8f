// SPDX-License-Identifier: BSD-3-Clause
// libc10like.so: the bottom of the dependency chain (torchlike -> c10like).
#include "torchlike/c10.h"

#include <stdexcept>

namespace c10 {

std::string version() { return TORCHLIKE_VERSION; }

int compiled_cxx11_abi() { return _GLIBCXX_USE_CXX11_ABI; }

std::string join(const std::list<std::string>& parts, const std::string& sep) {
  std::string out;
  bool first = true;
  for (const auto& p : parts) {
    if (!first) out += sep;
    out += p;
    first = false;
  }
  return out;
}

std::list<std::string> split(const std::string& text, char sep) {
  std::list<std::string> out;
  std::string::size_type start = 0;
  for (;;) {
    auto pos = text.find(sep, start);
    out.push_back(text.substr(start, pos - start));
    if (pos == std::string::npos) break;
    start = pos + 1;
  }
  return out;
}

std::string Device::str() const {
  return index < 0 ? type : type + ":" + std::to_string(index);
}

Device Device::parse(const std::string& text) {
  auto parts = split(text, ':');
  if (parts.size() > 2 || (parts.front() != "cpu" && parts.front() != "cuda"))
    throw std::invalid_argument("c10::Device::parse: unknown device '" + text + "'");
  Device d;
  d.type = parts.front();
  if (parts.size() == 2) {
    const std::string& idx = parts.back();
    if (idx.empty() || idx.find_first_not_of("0123456789") != std::string::npos)
      throw std::invalid_argument("c10::Device::parse: bad index in '" + text + "'");
    d.index = std::stoi(idx);
  }
  return d;
}

namespace detail {

std::string apply_op(const char* qualname, int id, const std::string& self,
                     const std::list<std::string>& args) {
  return std::string(qualname) + "#" + std::to_string(id) + "(" + self +
         (args.empty() ? "" : "; " + join(args, ", ")) + ")";
}

}  // namespace detail

}  // namespace c10
