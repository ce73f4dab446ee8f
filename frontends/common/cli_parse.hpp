// SPDX-License-Identifier: BSD-3-Clause
// CLI11 parsing shared by the subcommands that use it: errors become
// libpkg::Error (Errc::usage, so exit 2) carrying the usage text, and --help
// prints the generated help and tells the caller to stop.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "libpkg/base/error.hpp"

namespace pkgtool {

// Returns false when --help was printed (the command should exit 0).
inline bool parse_cli(CLI::App& app, const std::vector<std::string>& args,
                      const std::string& command, const std::string& usage) {
  std::vector<std::string> rev(args.rbegin(), args.rend());
  try {
    app.parse(rev);
  } catch (const CLI::CallForHelp&) {
    std::fputs(app.help().c_str(), stdout);
    return false;
  } catch (const CLI::ParseError& e) {
    std::string message = e.what();
    if (!usage.empty()) message += "\n" + usage;
    throw libpkg::Error(libpkg::Errc::usage, command, message);
  }
  return true;
}

// "--cuda cu124,cu126 --cuda cpu" → {cu124, cu126, cpu}: list options that
// take commas as well as repetition.
inline std::vector<std::string> split_commas(
    const std::vector<std::string>& in) {
  std::vector<std::string> out;
  for (const auto& item : in) {
    std::string::size_type start = 0;
    for (;;) {
      auto comma = item.find(',', start);
      std::string part = item.substr(start, comma - start);
      if (!part.empty()) out.push_back(part);
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
  }
  return out;
}

// An option whose slot is set only when the option is given (so "not
// given" stays distinguishable from any value).
template <class T>
void optional_option(CLI::App& app, const char* name, std::optional<T>& slot,
                     const char* help) {
  app.add_option_function<T>(
      name, [&slot](const T& v) { slot = v; }, help);
}

}  // namespace pkgtool
