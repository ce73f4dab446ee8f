// SPDX-License-Identifier: BSD-3-Clause
// PythonVersion and PackageType parsing. The old scripts sliced these
// strings by position (`${DESIRED_PYTHON:0:3}`, `cp${py:0:1}${py:2:1}m`)
// and broke at 3.8 (no "m") and 3.10 (two digits), builder-scripts.md §7.8;
// here every accepted spelling is parsed into numbers once.
#include <fmt/format.h>

#include <charconv>

#include "libpkg/base/error.hpp"
#include "libpkg/config/build.hpp"

namespace libpkg::config {
namespace {

constexpr const char* kPythonForms =
    "3.9 … 3.13, 3.13t, legacy 2.7mu/2.7m/3.7m, or cp311-cp311, cp313-cp313t";

[[noreturn]] void bad_python(std::string_view text, std::string_view why = {}) {
  throw Error(Errc::usage, "",
              fmt::format("unknown python version '{}'{}{} (accepted: {})",
                          text, why.empty() ? "" : ": ", why, kPythonForms));
}

bool parse_int(std::string_view s, int& out) {
  if (s.empty() || s.size() > 3) return false;
  for (char c : s)
    if (c < '0' || c > '9') return false;
  std::from_chars(s.data(), s.data() + s.size(), out);
  return true;
}

// The suffix after the version: "t" (free-threaded), "m"/"mu" (legacy ABI
// flags), or nothing.
void apply_suffix(PythonVersion& v, std::string_view suffix,
                  std::string_view text) {
  if (suffix == "t")
    v.free_threaded = true;
  else if (suffix == "m" || suffix == "mu")
    v.abi_suffix = std::string(suffix);
  else if (!suffix.empty())
    bad_python(text);
}

// "3.11t" / "3.7m" / "2.7mu" (the dotted DESIRED_PYTHON form).
PythonVersion parse_dotted(std::string_view text) {
  auto dot = text.find('.');
  if (dot == std::string_view::npos) bad_python(text);
  PythonVersion v;
  std::string_view rest = text.substr(dot + 1);
  std::size_t digits = 0;
  while (digits < rest.size() && rest[digits] >= '0' && rest[digits] <= '9')
    ++digits;
  if (!parse_int(text.substr(0, dot), v.major) ||
      !parse_int(rest.substr(0, digits), v.minor))
    bad_python(text);
  std::string_view suffix = rest.substr(digits);
  apply_suffix(v, suffix, text);
  return v;
}

// "cp37" → 3.7, "cp313" → 3.13 (the major is one digit for every CPython).
bool split_cp(std::string_view tag, int& major, int& minor) {
  if (!tag.starts_with("cp") || tag.size() < 4) return false;
  return parse_int(tag.substr(2, 1), major) && parse_int(tag.substr(3), minor);
}

PythonVersion parse_cp(std::string_view text) {
  auto dash = text.find('-');
  std::string_view py = text.substr(0, dash);
  std::string_view abi =
      dash == std::string_view::npos ? py : text.substr(dash + 1);
  PythonVersion v;
  if (!split_cp(py, v.major, v.minor)) bad_python(text);
  // The ABI tag repeats the interpreter tag, plus the suffix.
  if (!abi.starts_with(py)) bad_python(text, "ABI tag does not match");
  std::string_view suffix = abi.substr(py.size());
  apply_suffix(v, suffix, text);
  return v;
}

}  // namespace

const char* package_type_name(PackageType type) {
  switch (type) {
    case PackageType::manywheel:
      return "manywheel";
    case PackageType::conda:
      return "conda";
    case PackageType::libtorch:
      return "libtorch";
    case PackageType::wheel_macos:
      return "wheel";
  }
  return "?";
}

PackageType parse_package_type(std::string_view text) {
  if (text == "manywheel") return PackageType::manywheel;
  if (text == "conda") return PackageType::conda;
  if (text == "libtorch") return PackageType::libtorch;
  if (text == "wheel" || text == "wheel_macos" || text == "wheel-macos")
    return PackageType::wheel_macos;
  throw Error(Errc::usage, "",
              fmt::format("unknown package type '{}' (accepted: manywheel, "
                          "conda, libtorch, wheel)",
                          text));
}

PythonVersion PythonVersion::parse(std::string_view text) {
  PythonVersion v =
      text.starts_with("cp") ? parse_cp(text) : parse_dotted(text);
  if (v.major != 2 && v.major != 3) bad_python(text);
  if (v.major == 2 && v.minor != 7) bad_python(text, "only 2.7 of Python 2");
  // "m" (pymalloc) was dropped from the ABI tag in 3.8; "mu" (wide
  // unicode) existed only in Python 2.
  if (v.abi_suffix == "m" && v.major == 3 && v.minor >= 8)
    bad_python(text, "the 'm' ABI suffix ended with 3.7");
  if (v.abi_suffix == "mu" && v.major != 2)
    bad_python(text, "the 'mu' ABI suffix is Python 2 only");
  if (v.free_threaded && (v.major < 3 || v.minor < 13))
    bad_python(text, "free-threaded builds start at 3.13");
  return v;
}

std::string PythonVersion::python_tag() const {
  return fmt::format("cp{}{}", major, minor);
}

std::string PythonVersion::abi_tag() const {
  return python_tag() + abi_suffix + (free_threaded ? "t" : "");
}

std::string PythonVersion::dotted() const {
  return fmt::format("{}.{}{}", major, minor, free_threaded ? "t" : "");
}

std::string PythonVersion::str() const {
  return fmt::format("{}.{}{}{}", major, minor, abi_suffix,
                     free_threaded ? "t" : "");
}

}  // namespace libpkg::config
