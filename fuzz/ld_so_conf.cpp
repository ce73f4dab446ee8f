// SPDX-License-Identifier: BSD-3-Clause
// libFuzzer target for the ld.so.conf parser (deps::parse_ld_so_conf): the
// input is split at NUL bytes into up to four files of a scratch root
// (etc/ld.so.conf, two files in etc/ld.so.conf.d/ and etc/other.conf), so
// `include` lines, globs, cycles and self-inclusion all get exercised. The
// result must be a list of distinct absolute directories under the root,
// without trailing slashes. Anything else (a crash, a sanitizer report, an
// exception, a hang on an include cycle) is a bug.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <string_view>

#include "libpkg/base/scratch_dir.hpp"
#include "libpkg/deps/resolve.hpp"

namespace {

namespace fs = std::filesystem;

const char* const kFiles[] = {"etc/ld.so.conf", "etc/ld.so.conf.d/a.conf",
                              "etc/ld.so.conf.d/b.conf", "etc/other.conf"};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data,
                                      std::size_t size) {
  // One scratch root per process, removed at exit.
  static const libpkg::ScratchDir scratch = [] {
    auto dir = libpkg::ScratchDir::in_temp("ld_so_conf_fuzz-");
    fs::create_directories(dir.path() / "etc/ld.so.conf.d");
    return dir;
  }();
  const fs::path& root = scratch.path();
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  // A relative include may climb out of the root with "..", as it may on a
  // real system (the parser follows the conf file's directory, like
  // ldconfig without -r): keep the fuzzer from reading the host's files.
  if (text.find("..") != std::string_view::npos) return 0;
  size_t start = 0;
  for (const char* file : kFiles) {
    size_t end = text.find('\0', start);
    if (end == std::string_view::npos) end = text.size();
    std::ofstream(root / file, std::ios::binary | std::ios::trunc)
        << text.substr(std::min(start, text.size()),
                       end - std::min(start, text.size()));
    start = end + 1;
  }
  const std::string prefix = root.string() + "/";
  std::set<std::string> seen;
  for (const std::string& dir :
       libpkg::deps::parse_ld_so_conf(root / kFiles[0], root)) {
    if (!dir.starts_with(prefix)) std::abort();  // outside the root
    if (dir.size() > prefix.size() && dir.back() == '/') std::abort();
    if (!seen.insert(dir).second) std::abort();  // listed twice
  }
  return 0;
}
