// SPDX-License-Identifier: BSD-3-Clause
// `pkgtool nightly <subcommand>`: the dispatcher. Subcommands live in their
// own files and register here at static initialisation (commands.hpp,
// NightlySubcommand), so each part of the nightly adds its commands without
// editing the others'.
#include "commands.hpp"
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
                                     SubcommandFn fn) {
  table()[name] = SubcommandEntry{usage, fn};
}

int run_nightly(const std::vector<std::string>& args) {
  return run_subcommand(table(), "nightly", args);
}

}  // namespace pkgtool
