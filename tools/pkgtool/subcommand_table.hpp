// SPDX-License-Identifier: BSD-3-Clause
// The dispatch of every command group (`pkgtool <command>` itself, `pkgtool
// wheel`, `zip`, `conda`, `cache`, `libtorch`, `cuda`, `stats`, and `macho`
// and `nightly`, whose subcommands register themselves from their own
// files at static initialisation): one table gives both the dispatch and
// the names an error lists, so a new subcommand is listed (and reached by
// the CLI tests that walk these lists) without another edit.
#pragma once

#include <fmt/format.h>

#include <map>
#include <string>
#include <vector>

#include "cli_parse.hpp"
#include "commands.hpp"

namespace pkgtool {

struct SubcommandEntry {
  // One line for the generated group help ("FILE...   what it does").
  std::string usage;
  SubcommandFn fn;
  // Hand-parsed subcommands: the text `GROUP NAME ... --help` prints (the
  // dispatcher answers --help/-h anywhere in their arguments). nullptr: the
  // subcommand parses --help itself (CLI11).
  const char* help = nullptr;
};
using SubcommandTable = std::map<std::string, SubcommandEntry>;

// Runs args[0] of `table` under `command` ("pkgtool wheel"). -h/--help
// prints `help`, or without one "usage: COMMAND <subcommand> ..." and every
// entry's usage line. No subcommand or an unknown one is a one-line usage
// error listing the subcommands.
inline int run_subcommand(const SubcommandTable& table,
                          const std::string& command,
                          const std::vector<std::string>& args,
                          const char* help = nullptr) {
  // "command" at the top level, "subcommand" in a group.
  const char* noun =
      command.find(' ') == std::string::npos ? "command" : "subcommand";
  std::vector<std::string> names;
  for (const auto& [name, entry] : table) names.push_back(name);
  const std::string listed = fmt::format("{}", fmt::join(names, ", "));
  if (args.empty())
    usage_error(command, fmt::format("missing {} (one of: {})", noun, listed));
  if (args[0] == "-h" || args[0] == "--help") {
    if (help) {
      fmt::print("{}", help);
    } else {
      fmt::print("usage: {} <{}> ...\n", command, noun);
      for (const auto& [name, entry] : table)
        fmt::print("  {} {}\n", name, entry.usage);
    }
    return 0;
  }
  auto it = table.find(args[0]);
  if (it == table.end())
    usage_error(command, fmt::format("unknown {} '{}' (one of: {})", noun,
                                     args[0], listed));
  const std::vector<std::string> rest(args.begin() + 1, args.end());
  if (it->second.help)
    for (const auto& a : rest)
      if (a == "-h" || a == "--help") {
        fmt::print("{}", it->second.help);
        return 0;
      }
  return it->second.fn(rest);
}

}  // namespace pkgtool
