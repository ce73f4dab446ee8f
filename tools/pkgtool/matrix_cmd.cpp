// SPDX-License-Identifier: BSD-3-Clause
// `pkgtool matrix`: the build matrix as a GitHub Actions strategy.matrix.
#include <CLI/CLI.hpp>
#include <cstdio>

#include "cli_parse.hpp"
#include "commands.hpp"
#include "libpkg/config/matrix.hpp"
#include "matrix_input.hpp"

namespace pkgtool {
namespace {

const char* kUsage =
    "usage: pkgtool matrix [--file|--matrix-file MATRIX.json]\n"
    "                      [--package-type T]... [--cuda ACCEL]...\n"
    "                      [--python PY]... [--compact] [--count]\n";

}  // namespace

int run_matrix(const std::vector<std::string>& args) {
  CLI::App app{"the configuration matrix as a GitHub Actions strategy.matrix",
               "matrix"};
  MatrixInput input;
  bool compact = false, count = false;
  input.add_to(app, "--file,--matrix-file");
  app.add_flag("--compact", compact, "one line (for $GITHUB_OUTPUT)");
  app.add_flag("--count", count, "print only the number of entries");
  if (!parse_cli(app, args, "pkgtool matrix", kUsage)) return 0;

  auto configs = input.matching();
  if (count) {
    std::printf("%zu\n", configs.size());
    return 0;
  }
  std::printf("%s\n",
              libpkg::config::matrix_json(configs, compact ? -1 : 2).c_str());
  return 0;
}

}  // namespace pkgtool
