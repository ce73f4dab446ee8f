// SPDX-License-Identifier: BSD-3-Clause
#include "cli_parse.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdio>

namespace pkgtool {
namespace {

bool space(char c) { return std::isspace(static_cast<unsigned char>(c)); }

// CLI11's wording for the common mistakes, rephrased the way the
// hand-written parsers say them ("--jobs needs a value", "--jobs: 'x' is not
// a valid value"); anything else is kept as CLI11 wrote it.
std::string rephrase(const CLI::ParseError& e) {
  std::string m = one_line(e.what());
  if (dynamic_cast<const CLI::ConversionError*>(&e)) {
    // "Could not convert: --jobs = abc"
    constexpr std::string_view kPrefix = "Could not convert: ";
    auto eq = m.find(" = ");
    if (m.starts_with(kPrefix) && eq != std::string::npos)
      return fmt::format("{}: '{}' is not a valid value",
                         m.substr(kPrefix.size(), eq - kPrefix.size()),
                         m.substr(eq + 3));
  }
  if (dynamic_cast<const CLI::ArgumentMismatch*>(&e)) {
    // "--cuda: 1 required TEXT missing"
    auto colon = m.find(": ");
    if (colon != std::string::npos && m.ends_with(" missing"))
      return m.substr(0, colon) + " needs a value";
  }
  return m;
}

}  // namespace

std::string one_line(std::string_view text) {
  std::string out;
  bool gap = false;
  for (char c : text) {
    if (space(c)) {
      gap = !out.empty();
      continue;
    }
    if (gap) out += ' ';
    gap = false;
    out += c;
  }
  return out;
}

void usage_error(const std::string& command, const std::string& message) {
  throw libpkg::Error(
      libpkg::Errc::usage, command,
      fmt::format("{} (run '{} --help')", one_line(message), command));
}

std::string unexpected_argument(const std::string& arg) {
  if (arg.size() > 1 && arg[0] == '-')
    return fmt::format("unknown option '{}'", arg);
  return fmt::format("unexpected argument '{}'", arg);
}

bool parse_cli(CLI::App& app, const std::vector<std::string>& args,
               const std::string& command, const std::string& usage) {
  std::vector<std::string> rev(args.rbegin(), args.rend());
  try {
    app.parse(rev);
  } catch (const CLI::CallForHelp&) {
    std::fputs(app.help().c_str(), stdout);
    if (!usage.empty())
      std::printf("\n%s%s", usage.c_str(), usage.ends_with('\n') ? "" : "\n");
    return false;
  } catch (const CLI::ParseError& e) {
    // CLI11 checks required arguments before complaining about the ones it
    // could not place, so `repair --bogus` would say "wheels is required":
    // the unknown option is what the user got wrong.
    const std::vector<std::string> extra = app.remaining();
    if (!extra.empty()) {
      // An unknown option says more than a stray positional next to it.
      auto option = std::find_if(extra.begin(), extra.end(), [](const auto& a) {
        return a.size() > 1 && a[0] == '-';
      });
      usage_error(
          command,
          unexpected_argument(option != extra.end() ? *option : extra.front()));
    }
    usage_error(command, rephrase(e));
  }
  return true;
}

}  // namespace pkgtool
