// SPDX-License-Identifier: BSD-3-Clause
// `pkgtool nightly`: the dispatch over the registered subcommands
// (nightly_subcommand.hpp) and the options they share.
#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>
#include <map>

#include "commands.hpp"
#include "libpkg/base/error.hpp"
#include "libpkg/nightly/control.hpp"
#include "nightly_subcommand.hpp"

namespace pkgtool {
namespace {

struct Registered {
  const char* usage;
  NightlyFn fn;
};

std::map<std::string, Registered>& table() {
  static std::map<std::string, Registered> t;
  return t;
}

}  // namespace

NightlySubcommand::NightlySubcommand(const char* name, const char* usage,
                                     NightlyFn fn) {
  table()[name] = Registered{usage, fn};
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
  if (args.empty() || args[0] == "-h" || args[0] == "--help") {
    std::string text = "usage: pkgtool nightly <subcommand> ...\n";
    for (const auto& [name, r] : table())
      text += fmt::format("  {} {}\n", name, r.usage);
    fmt::print(args.empty() ? stderr : stdout, "{}", text);
    return args.empty() ? 2 : 0;
  }
  auto it = table().find(args[0]);
  if (it == table().end())
    throw libpkg::Error(libpkg::Errc::usage, "nightly",
                        fmt::format("unknown subcommand '{}'", args[0]));
  return it->second.fn({args.begin() + 1, args.end()});
}

}  // namespace pkgtool
