// SPDX-License-Identifier: BSD-3-Clause
// The configuration matrix as `matrix`, `nightly run` and `workflow` take
// it: a matrix file (default: the built-in data/matrix.json) and the filters
// --package-type, --cuda, --python (repeatable, commas), the same options
// on all three so one set of arguments names one set of configurations.
// (Header-only: pkgtool builds its *_cmd.cpp files.)
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "cli_parse.hpp"
#include "libpkg/base/error.hpp"
#include "libpkg/base/fd.hpp"
#include "libpkg/config/matrix.hpp"

namespace pkgtool {

struct MatrixInput {
  std::string file;  // empty: the built-in matrix
  std::vector<std::string> package_types, accelerators, pythons;

  // Registers the file option under `file_flags` (CLI11 names, e.g.
  // "--file,--matrix-file"), --package-type, --cuda and --python.
  void add_to(CLI::App& app, const std::string& file_flags = "--matrix-file");
  // True when any of the options was given.
  bool given() const;
  // The configurations, in matrix order; Errc::usage (exit 2) for a bad
  // filter or when none matches, Errc::format for a malformed file.
  std::vector<libpkg::config::BuildConfig> configs() const;
  // The same, empty when none matches (`matrix --count` says 0).
  std::vector<libpkg::config::BuildConfig> matching() const;
  // What the configurations come from, for messages ("<built-in
  // matrix.json>" or the file).
  std::string origin() const;
};

inline void MatrixInput::add_to(CLI::App& app, const std::string& file_flags) {
  app.add_option(file_flags, file, "matrix file (default: the built-in one)");
  app.add_option("--package-type", package_types,
                 "matrix filter: manywheel, conda, libtorch, wheel "
                 "(repeatable, commas)");
  app.add_option("--cuda", accelerators,
                 "matrix filter: accelerator, e.g. cpu, cu124, 12.4, rocm6.1, "
                 "xpu, or a kind (cuda, rocm) (repeatable, commas)");
  app.add_option("--python", pythons,
                 "matrix filter: 3.11, 3.13t, ... (repeatable, commas)");
}

inline bool MatrixInput::given() const {
  return !file.empty() || !package_types.empty() || !accelerators.empty() ||
         !pythons.empty();
}

inline std::string MatrixInput::origin() const {
  return file.empty() ? "<built-in matrix.json>" : file;
}

inline std::vector<libpkg::config::BuildConfig> MatrixInput::matching() const {
  std::string text = file.empty()
                         ? std::string(libpkg::config::builtin_matrix_json())
                         : libpkg::read_regular_file(file);
  libpkg::config::MatrixFilter filter{split_commas(package_types),
                                      split_commas(accelerators),
                                      split_commas(pythons)};
  return libpkg::config::expand_matrix(text, origin(), filter);
}

inline std::vector<libpkg::config::BuildConfig> MatrixInput::configs() const {
  auto configs = matching();
  if (configs.empty())
    throw libpkg::Error(
        libpkg::Errc::usage, origin(),
        "no configuration matches --package-type/--cuda/--python");
  return configs;
}

}  // namespace pkgtool
