// SPDX-License-Identifier: BSD-3-Clause
// pkgtool: one command line over every library capability.
//
// Invoked as `patchelf` (the installed symlink) it behaves as `pkgtool
// patchelf`, so tools that shell out to patchelf (auditwheel, conda-build)
// use ours unchanged; as `install_name_tool` it is `pkgtool macho edit`.
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "commands.hpp"
#include "guarded.hpp"
#include "subcommand_table.hpp"

namespace {

const char* kUsage =
    "usage: pkgtool <command> [options]\n"
    "\n"
    "commands:\n"
    "  inspect FILE... [--json]   dynamic-linking facts of ELF and Mach-O "
    "files\n"
    "  macho edit OPTIONS FILE... install_name_tool-compatible Mach-O edits\n"
    "  symbols FILE... [--demangle] [--defined-only|--undefined-only] "
    "[--json]\n"
    "                             dynamic symbols in nm -D format\n"
    "  patchelf OPTIONS FILE...   patchelf-compatible editing and printing\n"
    "  zip list|test|extract ...  inspect, test and safely unpack zips\n"
    "  wheel unpack|pack|verify|tags|info|update ...\n"
    "                             build, check, retag and edit wheels\n"
    "  conda pack|extract|transmute|verify ...\n"
    "                             conda packages (.conda and .tar.bz2)\n"
    "  libtorch pack|name|verify ...\n"
    "                             libtorch-style C++ zip distributions\n"
    "  cache stats|prune|clear    the chunk cache of the zip writers\n"
    "  show WHEEL... [--json]     the platform tag a wheel satisfies, and "
    "why\n"
    "  repair WHEEL... -w DIR     bundle external libraries, retag "
    "(auditwheel-like)\n"
    "  census FILE... [--json]    C++ ABI census (cxx11 vs pre-cxx11 "
    "symbols)\n"
    "  check ARTIFACT [options]   check_binary: ABI, symbol-version ceiling,\n"
    "                             dependencies, RPATH, integrity, import/link\n"
    "  matrix [--package-type T] [--cuda C] [--python P]\n"
    "                             build matrix as GitHub Actions JSON\n"
    "  workflow [filters] [-o FILE] | --check FILE\n"
    "                             the nightly as a GitHub Actions workflow\n"
    "  config [BUILD_ENVIRONMENT] [--json]\n"
    "                             parsed build configuration and its "
    "artifact names\n"
    "  ldd FILE... [--json] [--root DIR] [--lib-path DIR]...\n"
    "                             shared-library closure with ld.so's rules\n"
    "  cuda list|switch X.Y|env [X.Y] [--root DIR]\n"
    "                             installed CUDA toolkits, switch the cuda "
    "link\n"
    "  macho sign|verify FILE...  Mach-O code signatures (ad-hoc sign, "
    "re-sign, verify)\n"
    "  stats ingest|query ...     the nightly stats store (stats.db): "
    "ingest job\n"
    "                             documents and driver summaries, ad-hoc SQL\n"
    "  nightly report --html OUT  the nightly's status grid, sizes, "
    "durations and\n"
    "                             regressions as one static page\n"
    "  diff OLD NEW [--json]      members, sizes, ELF NEEDED/versions "
    "changed between\n"
    "                             two wheels, conda packages or zips\n"
    "  nightly run|status|describe|logs|cancel|list|publish ...\n"
    "                             run the matrix or a job file as a nightly,\n"
    "                             follow it, publish what passed\n"
    "  --version                  print the version\n";

// Every command, for the dispatch and for the list an unknown one prints.
const pkgtool::SubcommandTable& commands() {
  using pkgtool::SubcommandEntry;
  static const pkgtool::SubcommandTable table = {
      {"inspect", SubcommandEntry{"", pkgtool::run_inspect}},
      {"symbols", SubcommandEntry{"", pkgtool::run_symbols}},
      {"patchelf", SubcommandEntry{"", pkgtool::run_patchelf}},
      {"zip", SubcommandEntry{"", pkgtool::run_zip}},
      {"wheel", SubcommandEntry{"", pkgtool::run_wheel}},
      {"conda", SubcommandEntry{"", pkgtool::run_conda}},
      {"libtorch", SubcommandEntry{"", pkgtool::run_libtorch}},
      {"cache", SubcommandEntry{"", pkgtool::run_cache}},
      {"ldd", SubcommandEntry{"", pkgtool::run_ldd}},
      {"show", SubcommandEntry{"", pkgtool::run_show}},
      {"repair", SubcommandEntry{"", pkgtool::run_repair}},
      {"census", SubcommandEntry{"", pkgtool::run_census}},
      {"check", SubcommandEntry{"", pkgtool::run_check}},
      {"matrix", SubcommandEntry{"", pkgtool::run_matrix}},
      {"workflow", SubcommandEntry{"", pkgtool::run_workflow}},
      {"config", SubcommandEntry{"", pkgtool::run_config}},
      {"cuda", SubcommandEntry{"", pkgtool::run_cuda}},
      {"macho", SubcommandEntry{"", pkgtool::run_macho}},
      {"stats", SubcommandEntry{"", pkgtool::run_stats}},
      {"diff", SubcommandEntry{"", pkgtool::run_diff}},
      {"nightly", SubcommandEntry{"", pkgtool::run_nightly}},
  };
  return table;
}

int dispatch(const std::vector<std::string>& args, const std::string& self) {
  if (self == "patchelf") return pkgtool::run_patchelf_entry(args);
  if (self == "install_name_tool") return pkgtool::run_install_name_tool(args);
  if (!args.empty() && args[0] == "--version") {
    std::printf("pkgtool %s\n", LIBPKG_VERSION);
    return 0;
  }
  return pkgtool::run_subcommand(commands(), "pkgtool", args, kUsage);
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  std::string self = std::filesystem::path(argv[0]).filename().string();
  return pkgtool::guarded([&] { return dispatch(args, self); });
}
