// SPDX-License-Identifier: BSD-3-Clause
// `pkgtool macho lipo -create|-thin|-info` with llvm-lipo's syntax, layout
// and -info text (tests/macho/lipo.sh compares them byte for byte).
#include <fmt/format.h>

#include "cli_parse.hpp"
#include "commands.hpp"
#include "libpkg/base/error.hpp"
#include "libpkg/macho/lipo.hpp"

namespace pkgtool {

namespace {

const char* kLipoUsage =
    "usage: pkgtool macho lipo -create FILE... -output OUT\n"
    "       pkgtool macho lipo -thin ARCH FILE -output OUT\n"
    "       pkgtool macho lipo -info FILE...\n";

[[noreturn]] void lipo_usage(const std::string& msg) {
  usage_error("pkgtool macho lipo", msg);
}

int run_lipo(const std::vector<std::string>& args) {
  std::string mode, arch, output;
  std::vector<std::string> files;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto set_mode = [&](const std::string& m) {
      if (!mode.empty()) lipo_usage("only one of -create, -thin, -info");
      mode = m;
    };
    if (a == "-h" || a == "--help") {
      fmt::print("{}", kLipoUsage);
      return 0;
    } else if (a == "-create" || a == "-info") {
      set_mode(a);
    } else if (a == "-thin") {
      set_mode(a);
      if (++i == args.size()) lipo_usage("-thin expects an architecture");
      arch = args[i];
    } else if (a == "-output" || a == "-o") {
      if (++i == args.size()) lipo_usage("-output expects a file");
      output = args[i];
    } else if (a.starts_with("-") && a.size() > 1) {
      lipo_usage(unexpected_argument(a));
    } else {
      files.push_back(a);
    }
  }
  if (mode.empty()) lipo_usage("one of -create, -thin, -info is needed");
  if (files.empty()) lipo_usage("no input file");
  if (mode != "-info" && output.empty()) lipo_usage(mode + " needs -output");
  if (mode == "-thin" && files.size() != 1)
    lipo_usage("-thin takes exactly one input file");

  std::vector<libpkg::macho::MachOFile> inputs;
  inputs.reserve(files.size());
  for (const auto& f : files)
    inputs.push_back(libpkg::macho::MachOFile::open(f));
  if (mode == "-create") {
    std::vector<const libpkg::macho::MachOFile*> ptrs;
    for (const auto& f : inputs) ptrs.push_back(&f);
    libpkg::macho::write_fat(ptrs, output);
  } else if (mode == "-thin") {
    libpkg::macho::write_thin(inputs.front(), arch, output);
  } else {
    // As llvm-lipo: fat files first, then thin ones, each in argument order.
    for (bool fat : {true, false})
      for (size_t i = 0; i < inputs.size(); ++i) {
        if (inputs[i].is_fat() != fat) continue;
        std::string archs;
        for (const auto& s : inputs[i].slices()) archs += s.arch() + " ";
        if (fat)
          fmt::print("Architectures in the fat file: {} are: {}\n", files[i],
                     archs);
        else
          fmt::print("Non-fat file: {} is architecture: {}\n", files[i], archs);
      }
  }
  return 0;
}

const MachoSubcommand kLipo(
    "lipo",
    "-create FILE... -output OUT | -thin ARCH FILE -output OUT | "
    "-info FILE...   fat files as llvm-lipo lays them out",
    run_lipo);

}  // namespace

}  // namespace pkgtool
