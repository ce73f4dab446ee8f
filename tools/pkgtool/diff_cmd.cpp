// SPDX-License-Identifier: BSD-3-Clause
// `pkgtool diff OLD NEW [--json]`: members added/removed/changed between two
// wheels, conda packages or zips, with ELF NEEDED and symbol-version
// changes. Exit 0 when the members are the same, 1 when they differ (as
// diff(1)), 2 for bad input.
#include <CLI/CLI.hpp>
#include <cstdio>

#include "cli_parse.hpp"
#include "commands.hpp"
#include "libpkg/nightly/diff_archive.hpp"

namespace pkgtool {

int run_diff(const std::vector<std::string>& args) {
  CLI::App app{"differences between two wheels, conda packages or zips",
               "diff"};
  std::string old_path, new_path;
  bool json = false;
  app.add_option("old", old_path, "the older package")->required();
  app.add_option("new", new_path, "the newer package")->required();
  app.add_flag("--json", json, "libpkg-diff/1 JSON");
  if (!parse_cli(app, args, "pkgtool diff",
                 "usage: pkgtool diff OLD NEW [--json]"))
    return 0;
  auto d = libpkg::nightly::diff_archives(old_path, new_path);
  std::fputs(json ? (d.to_json() + "\n").c_str() : d.to_text().c_str(), stdout);
  return d.identical() ? 0 : 1;
}

}  // namespace pkgtool
