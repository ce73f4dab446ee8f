// SPDX-License-Identifier: BSD-3-Clause
// A command group whose subcommands register themselves from their own
// files at static initialisation (`pkgtool macho`, `pkgtool nightly`):
// the table, and the dispatch with its usage listing.
#pragma once

#include <fmt/format.h>

#include <map>
#include <string>
#include <vector>

#include "commands.hpp"
#include "libpkg/base/error.hpp"

namespace pkgtool {

struct SubcommandEntry {
  std::string usage;
  SubcommandFn fn;
};
using SubcommandTable = std::map<std::string, SubcommandEntry>;

// Runs args[0] of `table`; without arguments (or -h/--help) prints
// "usage: pkgtool GROUP <subcommand> ..." and every registered usage.
inline int run_subcommand(const SubcommandTable& table, const char* group,
                          const std::vector<std::string>& args) {
  if (args.empty() || args[0] == "-h" || args[0] == "--help") {
    std::string text =
        fmt::format("usage: pkgtool {} <subcommand> ...\n", group);
    for (const auto& [name, r] : table)
      text += fmt::format("  {} {}\n", name, r.usage);
    fmt::print(args.empty() ? stderr : stdout, "{}", text);
    return args.empty() ? 2 : 0;
  }
  auto it = table.find(args[0]);
  if (it == table.end())
    throw libpkg::Error(
        libpkg::Errc::usage, "",
        fmt::format("{}: unknown subcommand '{}'", group, args[0]));
  return it->second.fn({args.begin() + 1, args.end()});
}

}  // namespace pkgtool
