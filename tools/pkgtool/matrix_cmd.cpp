// SPDX-License-Identifier: BSD-3-Clause
// `pkgtool matrix`: the build matrix as a GitHub Actions strategy.matrix.
#include <CLI/CLI.hpp>
#include <cstdio>

#include "cli_parse.hpp"
#include "commands.hpp"
#include "libpkg/base/error.hpp"
#include "libpkg/base/fd.hpp"
#include "libpkg/config/matrix.hpp"

namespace pkgtool {
namespace {

const char* kUsage =
    "usage: pkgtool matrix [--file MATRIX.json] [--package-type T]...\n"
    "                      [--cuda ACCEL]... [--python PY]... [--compact] "
    "[--count]\n";

}  // namespace

int run_matrix(const std::vector<std::string>& args) {
  CLI::App app{"the configuration matrix as a GitHub Actions strategy.matrix",
               "matrix"};
  std::string file;
  std::vector<std::string> types, accels, pythons;
  bool compact = false, count = false;
  app.add_option("--file", file, "matrix file (default: the built-in one)");
  app.add_option("--package-type", types,
                 "manywheel, conda, libtorch, wheel (repeatable, commas)");
  app.add_option("--cuda", accels,
                 "accelerator: cpu, cu124, 12.4, rocm6.1, xpu, or a kind "
                 "(cuda, rocm) (repeatable, commas)");
  app.add_option("--python", pythons, "3.11, 3.13t, ... (repeatable, commas)");
  app.add_flag("--compact", compact, "one line (for $GITHUB_OUTPUT)");
  app.add_flag("--count", count, "print only the number of entries");
  if (!parse_cli(app, args, "pkgtool matrix", kUsage)) return 0;

  std::string text, origin = "<built-in matrix.json>";
  if (file.empty()) {
    text = std::string(libpkg::config::builtin_matrix_json());
  } else {
    text = libpkg::read_regular_file(file);
    origin = file;
  }
  libpkg::config::MatrixFilter filter{split_commas(types), split_commas(accels),
                                      split_commas(pythons)};
  auto configs = libpkg::config::expand_matrix(text, origin, filter);
  if (count) {
    std::printf("%zu\n", configs.size());
    return 0;
  }
  std::printf("%s\n",
              libpkg::config::matrix_json(configs, compact ? -1 : 2).c_str());
  return 0;
}

}  // namespace pkgtool
