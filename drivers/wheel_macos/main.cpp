// SPDX-License-Identifier: BSD-3-Clause
// wheel_macos: a built macOS wheel (or the command that builds one) → the
// distributable wheel with its outside dylibs bundled into <package>/.dylibs,
// one OpenMP runtime (torch/lib/libomp.dylib), tagged from the binaries'
// minos, named torch-<ver>-cp<XY>-none-macosx_<tag>.whl and checked by
// check_binary. Replaces wheel/build_wheel.sh's delocate-wheel and rename
// (builder-scripts.md §4); all logic is libpkg::driver::run_wheel_macos
// (docs/drivers.md, "wheel_macos").
//
//   wheel_macos (--wheel FILE | --build-command CMD --source DIR
//               [--dist-dir DIR]) [--deployment-target X.Y]
//               [--lib-path DIR]... [--exclude GLOB]... + the shared flags
//
// Exit status: 0 wheel written and checked, 1 a check failed, 2 bad input
// (one line on stderr).
#include <string>
#include <vector>

#include "driver_cli.hpp"
#include "libpkg/base/error.hpp"
#include "libpkg/driver/manywheel.hpp"
#include "libpkg/driver/wheel_macos.hpp"

namespace {

namespace cfg = libpkg::config;

const char* kUsage =
    "usage: wheel_macos (--wheel FILE | --build-command CMD --source DIR "
    "[--dist-dir DIR]) [--deployment-target X.Y] [--lib-path DIR]... [-o DIR] "
    "[--dry-run] [--json] (see --help)";

int run(int argc, char** argv) {
  CLI::App app{
      "Bundle a built macOS wheel's outside dylibs (delocate-wheel), keep "
      "one OpenMP runtime, retag it from the binaries' minos, name it as "
      "the release scripts did and check it."};
  driver_cli::CommonFlags flags;
  driver_cli::add_common_flags(app, flags);
  libpkg::driver::WheelMacosOptions o;
  driver_cli::WheelInputFlags input;
  driver_cli::add_wheel_input_flags(app, input);
  driver_cli::MacosFlags macos;
  driver_cli::add_macos_flags(app, macos, o.exclude);
  std::vector<std::string> args(argv + 1, argv + argc);
  if (!driver_cli::parse(app, args, "wheel_macos", kUsage)) return 0;

  driver_cli::resolve(flags, cfg::PackageType::wheel_macos,
                      driver_cli::apply_wheel_input(input, o));
  o.common = flags.options;
  driver_cli::MacosEnvironment mac =
      driver_cli::macos_environment(flags, macos);
  o.deployment_target = mac.deployment_target;
  o.library_path = mac.library_path;
  return driver_cli::finish(libpkg::driver::run_wheel_macos(o), flags);
}

}  // namespace

int main(int argc, char** argv) {
  return driver_cli::guarded([&] { return run(argc, argv); });
}
