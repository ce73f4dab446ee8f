// SPDX-License-Identifier: BSD-3-Clause
// `pkgtool nightly`: the dispatch over the registered subcommands
// (nightly_subcommand.hpp) and the options they share.
#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>

#include "commands.hpp"
#include "libpkg/base/error.hpp"
#include "libpkg/nightly/control.hpp"
#include "nightly_subcommand.hpp"
#include "subcommand_table.hpp"

namespace pkgtool {
namespace {

// Function-local: registrations run during static initialisation, in any
// order of the translation units.
SubcommandTable& table() {
  static SubcommandTable t;
  return t;
}

}  // namespace

NightlySubcommand::NightlySubcommand(const char* name, const char* usage,
                                     NightlyFn fn) {
  table()[name] = SubcommandEntry{usage, fn};
}

void NightlyWhere::add_to(CLI::App& app) {
  const char* env = std::getenv("NIGHTLY_ROOT");
  root = env && *env ? env : "nightlies";
  app.add_option("--root", root,
                 "the nightly root (default $NIGHTLY_ROOT, else ./nightlies)");
  app.add_option("--date", date,
                 "the nightly's date, YYYY_MM_DD (default: today, UTC)");
}

libpkg::nightly::Layout NightlyWhere::layout(bool latest) const {
  if (!date.empty()) return {root, date};
  if (latest) {
    std::error_code ec;
    if (std::filesystem::is_directory(root, ec)) {
      auto all = libpkg::nightly::list_nightlies(root);
      if (!all.empty()) return {root, all.back().date};
    }
  }
  return {root, libpkg::nightly::today_utc()};
}

int run_nightly(const std::vector<std::string>& args) {
  return run_subcommand(table(), "pkgtool nightly", args);
}

}  // namespace pkgtool
