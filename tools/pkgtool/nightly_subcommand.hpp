// SPDX-License-Identifier: BSD-3-Clause
// `pkgtool nightly SUBCOMMAND ...`. Each subcommand lives in its own file
// (nightly_run_cmd.cpp: run, publish; nightly_status_cmd.cpp: status,
// describe, logs, cancel, list; the report has its own) and registers itself
// at static initialisation with a file-scope
//   const NightlySubcommand kRun("run", "[--jobs FILE | MATRIX] ...", run_run);
// so a new file adds a subcommand without touching the others.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "commands.hpp"
#include "libpkg/nightly/layout.hpp"

namespace pkgtool {

using NightlyFn = SubcommandFn;
struct NightlySubcommand {
  NightlySubcommand(const char* name, const char* usage, NightlyFn fn);
};

// --root DIR (default $NIGHTLY_ROOT, else ./nightlies) and --date (default:
// `default_date`), added to a subcommand's parser.
struct NightlyWhere {
  std::string root;
  std::string date;
  void add_to(CLI::App& app);
  // The nightly named by the options; with no --date, today's (UTC) when
  // `latest` is false, else the newest nightly under the root.
  libpkg::nightly::Layout layout(bool latest) const;
};

}  // namespace pkgtool
