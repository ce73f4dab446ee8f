// SPDX-License-Identifier: BSD-3-Clause
// `pkgtool wheel fuse A.whl B.whl -w DIR [--prefer a|b] [-z LEVEL] [-j N]`:
// delocate-merge over libpkg::wheel::fuse (libpkg/wheel/fuse.hpp).
#include <fmt/format.h>

#include "cli_parse.hpp"
#include "commands.hpp"
#include "libpkg/base/error.hpp"
#include "libpkg/wheel/fuse.hpp"

namespace pkgtool {

namespace {

const char* kFuseUsage =
    "usage: pkgtool wheel fuse A.whl B.whl -w DIR [--prefer a|b] [-z LEVEL] "
    "[-j N]\n";

[[noreturn]] void fuse_usage(const std::string& message) {
  usage_error("pkgtool wheel fuse", message);
}

}  // namespace

int run_wheel_fuse(const std::vector<std::string>& args) {
  std::vector<std::string> wheels;
  libpkg::wheel::FuseOptions opt;
  bool have_dir = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&]() -> const std::string& {
      if (++i == args.size()) fuse_usage(a + " expects a value");
      return args[i];
    };
    if (a == "-h" || a == "--help") {
      fmt::print("{}", kFuseUsage);
      return 0;
    } else if (a == "-w" || a == "--wheel-dir") {
      opt.out_dir = value();
      have_dir = true;
    } else if (a == "--prefer") {
      const std::string& side = value();
      if (side == "a")
        opt.prefer = libpkg::wheel::FusePrefer::a;
      else if (side == "b")
        opt.prefer = libpkg::wheel::FusePrefer::b;
      else
        fuse_usage("--prefer expects a or b, got '" + side + "'");
    } else if (a == "-z") {
      opt.level = static_cast<int>(parse_unsigned(a, value(), 12));
    } else if (a == "-j") {
      opt.threads = parse_unsigned(a, value(), 1024);
    } else if (a.size() > 1 && a[0] == '-') {
      fuse_usage(unexpected_argument(a));
    } else {
      wheels.push_back(a);
    }
  }
  if (wheels.size() != 2) fuse_usage("fuse needs exactly two wheels");
  if (!have_dir) fuse_usage("fuse needs -w DIR");
  auto result = libpkg::wheel::fuse(wheels[0], wheels[1], opt);
  for (const auto& m : result.fused) fmt::print("fused: {}\n", m);
  for (const auto& m : result.preferred)
    fmt::print("preferred ({}): {}\n",
               opt.prefer == libpkg::wheel::FusePrefer::a ? "a" : "b", m);
  fmt::print("{}\n", result.path.string());
  return 0;
}

}  // namespace pkgtool
