// SPDX-License-Identifier: BSD-3-Clause
#include "libpkg/config/accelerator.hpp"

#include <fmt/format.h>

#include <charconv>

#include "libpkg/base/error.hpp"

namespace libpkg::config {

namespace {

constexpr const char* kForms =
    "cpu, cuXY (cu118, cu124), X.Y (12.4), cudaX.Y, rocmX.Y[.Z] or xpu";

[[noreturn]] void bad(std::string_view text) {
  throw Error(
      Errc::usage, "",
      fmt::format("unknown accelerator '{}' (accepted: {})", text, kForms));
}

bool all_digits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (c < '0' || c > '9') return false;
  return true;
}

int to_int(std::string_view s) {
  int value = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc() || end != s.data() + s.size()) return -1;
  return value;
}

// "12.4" or "6.1.3" into `accel` (patch only when allowed); false if the
// text isn't a dotted version.
bool parse_dotted(std::string_view s, bool allow_patch, Accelerator& accel) {
  int parts[3] = {0, 0, 0};
  int n = 0;
  while (true) {
    auto dot = s.find('.');
    std::string_view part = s.substr(0, dot);
    if (!all_digits(part) || n == 3) return false;
    parts[n++] = to_int(part);
    if (parts[n - 1] < 0) return false;
    if (dot == std::string_view::npos) break;
    s.remove_prefix(dot + 1);
  }
  if (n < 2 || (n == 3 && !allow_patch)) return false;
  accel.major = parts[0];
  accel.minor = parts[1];
  if (n == 3) accel.patch = parts[2];
  return true;
}

}  // namespace

const char* accelerator_kind_name(AcceleratorKind kind) {
  switch (kind) {
    case AcceleratorKind::cpu:
      return "cpu";
    case AcceleratorKind::cuda:
      return "cuda";
    case AcceleratorKind::rocm:
      return "rocm";
    case AcceleratorKind::xpu:
      return "xpu";
  }
  return "?";
}

std::string Accelerator::version() const {
  if (kind == AcceleratorKind::cpu || kind == AcceleratorKind::xpu) return "";
  if (patch) return fmt::format("{}.{}.{}", major, minor, *patch);
  return fmt::format("{}.{}", major, minor);
}

std::string Accelerator::tag() const {
  switch (kind) {
    case AcceleratorKind::cpu:
      return "cpu";
    case AcceleratorKind::xpu:
      return "xpu";
    case AcceleratorKind::cuda:
      return fmt::format("cu{}{}", major, minor);
    case AcceleratorKind::rocm:
      return "rocm" + version();
  }
  return "";
}

Accelerator parse_accelerator(std::string_view text) {
  Accelerator accel;
  if (text == "cpu" || text.starts_with("cpu-")) return accel;
  if (text == "xpu") {
    accel.kind = AcceleratorKind::xpu;
    return accel;
  }
  if (text.starts_with("rocm")) {
    accel.kind = AcceleratorKind::rocm;
    if (!parse_dotted(text.substr(4), true, accel)) bad(text);
    return accel;
  }
  accel.kind = AcceleratorKind::cuda;
  if (text.starts_with("cuda")) {
    if (!parse_dotted(text.substr(4), false, accel)) bad(text);
    return accel;
  }
  if (text.starts_with("cu")) {
    std::string_view digits = text.substr(2);
    if (!all_digits(digits) || digits.size() < 2 || digits.size() > 3)
      bad(text);
    accel.major = to_int(digits.substr(0, digits.size() - 1));
    accel.minor = digits.back() - '0';
    return accel;
  }
  if (parse_dotted(text, false, accel)) return accel;
  bad(text);
}

abi::CxxAbi abi_from_devtoolset(std::string_view devtoolset,
                                const std::optional<Accelerator>& accel) {
  if (devtoolset.find("cxx11-abi") != std::string_view::npos)
    return abi::CxxAbi::cxx11;
  if (accel && accel->kind == AcceleratorKind::rocm) return abi::CxxAbi::cxx11;
  return abi::CxxAbi::pre_cxx11;
}

abi::CxxAbi parse_cxx_abi(std::string_view text) {
  if (text == "cxx11" || text == "1" || text == "new" || text == "cxx11-abi")
    return abi::CxxAbi::cxx11;
  if (text == "pre-cxx11" || text == "pre_cxx11" || text == "0" ||
      text == "old")
    return abi::CxxAbi::pre_cxx11;
  throw Error(Errc::usage, "",
              fmt::format("unknown C++ ABI '{}' (accepted: cxx11 or 1, "
                          "pre-cxx11 or 0)",
                          text));
}

}  // namespace libpkg::config
