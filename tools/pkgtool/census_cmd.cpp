// SPDX-License-Identifier: BSD-3-Clause
// `pkgtool census FILE... [--json]`: the C++ ABI census per ELF file (which
// std::string/std::list ABI a library's own API uses), as PyTorch's
// check_binary_symbols.py decides it.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "cli_parse.hpp"
#include "commands.hpp"
#include "libpkg/abi/census.hpp"
#include "libpkg/base/error.hpp"
#include "libpkg/elf/view.hpp"
#include "macho_inspect.hpp"

namespace pkgtool {

int run_census(const std::vector<std::string>& args) {
  CLI::App app{"C++ ABI census of ELF files", "census"};
  std::vector<std::string> files, namespaces, forbidden;
  libpkg::abi::CensusOptions options;
  std::string expect;
  bool json = false;
  app.add_option("files", files, "ELF files")->required();
  app.add_option("--namespace", namespaces,
                 "namespace prefix to count (repeatable; default c10:: at:: "
                 "caffe2:: torch::)");
  app.add_option("--min", options.min_count,
                 "symbols needed to call an ABI used (default 1)");
  app.add_option("--forbid", forbidden,
                 "substring of a demangled defined symbol that must not "
                 "appear");
  app.add_flag("--defined-only", options.defined_only,
               "count defined symbols only");
  app.add_option("--expect", expect,
                 "cxx11 or pre-cxx11: exit 1 unless every file has it")
      ->check(CLI::IsMember({"cxx11", "pre-cxx11"}));
  app.add_flag("--json", json, "JSON output");
  if (!parse_cli(app, args, "pkgtool census", "")) return 0;
  if (!namespaces.empty()) options.namespaces = namespaces;
  options.forbidden = forbidden;

  int status = 0;
  nlohmann::json out = nlohmann::json::array();
  for (const auto& f : files) {
    if (looks_like_macho(f)) {
      // libc++ (every macOS toolchain) has no dual string/list ABI and no
      // cxx11 tag: a count would say "none" and read as a verdict.
      const char* why =
          "Mach-O files use libc++ (std::__1), which has no cxx11 ABI tag";
      const bool ok = expect.empty();
      if (!ok) status = 1;
      if (json)
        out.push_back({{"file", f},
                       {"verdict", "not_applicable"},
                       {"reason", why},
                       {"ok", ok}});
      else
        std::printf("%s: does not apply (%s)%s\n", f.c_str(), why,
                    ok ? "" : "  FAIL");
      continue;
    }
    libpkg::abi::Census c =
        libpkg::abi::cxx_abi_census(libpkg::elf::ElfFile::open(f), options);
    const std::string verdict = libpkg::abi::cxx_abi_name(c.verdict);
    bool ok = c.forbidden.empty();
    if (!expect.empty() && verdict != expect) ok = false;
    if (!ok) status = 1;
    if (json) {
      nlohmann::json forb = nlohmann::json::object();
      for (const auto& [pattern, examples] : c.forbidden)
        forb[pattern] = examples;
      out.push_back({{"file", f},
                     {"verdict", verdict},
                     {"cxx11", c.cxx11},
                     {"pre_cxx11", c.pre_cxx11},
                     {"cxx11_examples", c.cxx11_examples},
                     {"pre_cxx11_examples", c.pre_cxx11_examples},
                     {"forbidden", forb},
                     {"ok", ok}});
      continue;
    }
    std::printf("%s: %s (cxx11 %zu, pre-cxx11 %zu)%s\n", f.c_str(),
                verdict.c_str(), c.cxx11, c.pre_cxx11, ok ? "" : "  FAIL");
    for (const auto& s : c.cxx11_examples)
      std::printf("  cxx11:     %s\n", s.c_str());
    for (const auto& s : c.pre_cxx11_examples)
      std::printf("  pre-cxx11: %s\n", s.c_str());
    for (const auto& [pattern, examples] : c.forbidden)
      for (const auto& s : examples)
        std::printf("  forbidden (%s): %s\n", pattern.c_str(), s.c_str());
  }
  if (json) std::printf("%s\n", out.dump(2).c_str());
  return status;
}

}  // namespace pkgtool
