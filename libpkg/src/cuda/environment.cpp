// SPDX-License-Identifier: BSD-3-Clause
// The shell environment selecting one toolkit, meant for
// `eval "$(pkgtool cuda env 12.4)"`.
#include <fmt/format.h>

#include <string_view>

#include "libpkg/cuda/toolkit.hpp"

namespace libpkg::cuda {

namespace fs = std::filesystem;

namespace {

// A word the shell reads back unchanged: as is when it is made of safe
// characters, otherwise single-quoted ('\'' for a quote inside).
std::string shell_quote(const std::string& s) {
  bool safe = !s.empty();
  for (char c : s) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
              (c >= '0' && c <= '9') ||
              std::string_view("_@%+=:,./-").find(c) != std::string_view::npos;
    if (!ok) safe = false;
  }
  if (safe) return s;
  std::string out = "'";
  for (char c : s) {
    if (c == '\'')
      out += "'\\''";
    else
      out += c;
  }
  return out + "'";
}

// `NAME=<dir>"${NAME:+:$NAME}"`: prepends without leaving an empty entry
// when NAME is unset — an empty LD_LIBRARY_PATH or PATH entry means the
// current directory.
std::string prepend(const char* name, const fs::path& dir) {
  return fmt::format("export {0}={1}\"${{{0}:+:${0}}}\"", name,
                     shell_quote(dir.string()));
}

}  // namespace

std::vector<std::string> environment(const Toolkit& toolkit) {
  std::error_code ec;
  // lib64 is the installers' name; pip-assembled trees may only have lib.
  fs::path lib = toolkit.dir / "lib64";
  if (!fs::is_directory(lib, ec) && fs::is_directory(toolkit.dir / "lib", ec))
    lib = toolkit.dir / "lib";
  std::vector<std::string> out;
  out.push_back("export CUDA_HOME=" + shell_quote(toolkit.dir.string()));
  out.push_back(prepend("PATH", toolkit.dir / "bin"));
  out.push_back(prepend("LD_LIBRARY_PATH", lib));
  out.push_back(
      fmt::format("export CUDA_VERSION={}.{}", toolkit.major, toolkit.minor));
  if (toolkit.cudnn)
    out.push_back("export CUDNN_VERSION=" + shell_quote(*toolkit.cudnn));
  return out;
}

}  // namespace libpkg::cuda
