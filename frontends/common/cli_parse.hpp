// SPDX-License-Identifier: BSD-3-Clause
// Command-line errors of every frontend (pkgtool and its subcommands,
// check_binary, the drivers): one line naming what is wrong, plus where the
// usage is, exit 2. The usage text itself is printed only for --help.
//
// CLI11 parsing goes through parse_cli; hand-written parsers (patchelf's and
// install_name_tool's syntax, the `wheel`/`zip`/`conda`/`cache` groups)
// throw usage_error. guarded() prints both as
//   error: COMMAND: MESSAGE (run 'COMMAND --help')
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "libpkg/base/error.hpp"

namespace pkgtool {

// `text` on one line: runs of whitespace (newlines included) become one
// space, and leading/trailing whitespace goes.
std::string one_line(std::string_view text);

// Throws the usage error of `command` ("pkgtool wheel", "check_binary"):
// libpkg::Error with Errc::usage, the command as its file and `message` on
// one line followed by the hint "(run 'COMMAND --help')".
[[noreturn]] void usage_error(const std::string& command,
                              const std::string& message);

// "unknown option '--x'" for an argument that looks like an option,
// "unexpected argument 'x'" otherwise.
std::string unexpected_argument(const std::string& arg);

// Parses `args` into `app`. Returns false when --help was printed (the
// generated help, then `usage` when not empty; the command should exit 0).
// A parse error is usage_error(command, ...): an argument CLI11 could not
// place is named first ("unknown option '--bogus'", even when CLI11 would
// have complained about a missing required argument), else CLI11's message.
bool parse_cli(CLI::App& app, const std::vector<std::string>& args,
               const std::string& command, const std::string& usage);

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
