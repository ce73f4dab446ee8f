// SPDX-License-Identifier: BSD-3-Clause
// libtorch: an install tree (or a built wheel) → the libtorch zip set of one
// variant (zip, -latest copy, optional debug zip), checked by check_binary.
// Replaces libtorch/build.sh + manywheel/build_libtorch.sh's packaging half
// (builder-scripts.md §2.3, §2.4); all logic is libpkg::driver::run_libtorch.
//
//   libtorch (--tree DIR | --wheel FILE) (--build-hash H | --source DIR)
//            [--debug-split [--debug-library GLOB]...] [--include LIB]...
//            [--skip-other] [--no-latest] [--keep-names]
//            [--macos [--lib-path DIR]... [--exclude GLOB]...
//             [--deployment-target X.Y]]
//            + the shared driver flags (--variant, --cuda, --abi, ...)
//
// Exit status: 0 zips written and checked, 1 a check failed, 2 bad input
// (one line on stderr).
#include <string>
#include <vector>

#include "driver_cli.hpp"
#include "libpkg/base/error.hpp"
#include "libpkg/driver/libtorch.hpp"

namespace {

namespace cfg = libpkg::config;
using libpkg::Errc;
using libpkg::Error;

const char* kUsage =
    "usage: libtorch (--tree DIR | --wheel FILE) (--build-hash H | --source "
    "DIR) [--variant V] [--cuda C] [--abi A] [--debug-split] [-o DIR] "
    "[--dry-run] [--json] (see --help)";

int run(int argc, char** argv) {
  CLI::App app{
      "Package an install tree (lib/ include/ share/ bin/) or a built "
      "wheel's <pkg>/ as a libtorch zip: external libraries bundled for "
      "with-deps variants, RUNPATH $ORIGIN, build-version/build-hash, "
      "-latest copy, optional debug zip; then check_binary on the zip."};
  driver_cli::CommonFlags flags;
  driver_cli::add_common_flags(app, flags);
  libpkg::driver::LibtorchDriverOptions options;
  std::string tree, wheel, build_hash, source;
  std::vector<std::string> debug_libraries;
  bool no_latest = false;
  app.add_option("--tree", tree,
                 "install tree with lib/ include/ [share/ bin/]");
  app.add_option("--wheel", wheel,
                 "built wheel; its <pkg>/{lib,include,share,bin} are used");
  app.add_option("--build-hash", build_hash,
                 "source commit for libtorch/build-hash");
  app.add_option("--source", source,
                 "source checkout: build-hash = git rev-parse HEAD");
  app.add_flag("--debug-split", options.debug_split,
               "split debug info into a debug-libtorch-...-<crc>.zip");
  app.add_option("--debug-library", debug_libraries,
                 "library glob to split (repeatable; default "
                 "libtorch_cpu.so; the first names the debug zip)");
  app.add_option("--include", options.include,
                 "extra library to bundle, path or soname (repeatable)");
  app.add_flag("--skip-other", options.skip_other_entries,
               "leave out top-level entries other than lib include share "
               "bin (e.g. python/)");
  app.add_flag("--no-latest", no_latest, "do not write the -latest copy");
  app.add_flag("--keep-names", options.keep_names,
               "bundle libraries under their own names (no -<sha8>)");
  bool macos = false;
  driver_cli::MacosFlags mac_flags;
  app.add_flag("--macos", macos,
               "the macOS zip (libtorch-macos-<arch>-<ver>.zip): Mach-O "
               "files bundled as the macOS wheel repair does, the one "
               "OpenMP runtime from lib/ (the wheel's torch/lib)");
  driver_cli::add_macos_flags(app, mac_flags, options.exclude);
  std::vector<std::string> args(argv + 1, argv + argc);
  if (!driver_cli::parse(app, args, "libtorch", kUsage)) return 0;
  if (macos) flags.overrides.os = "macos";

  if (tree.empty() == wheel.empty())
    throw Error(Errc::usage, "libtorch",
                "give exactly one of --tree DIR and --wheel FILE");
  if (!tree.empty()) options.tree = tree;
  if (!wheel.empty()) options.wheel = wheel;
  if (!build_hash.empty()) options.build_hash = build_hash;
  if (!source.empty()) options.source = source;
  if (!debug_libraries.empty()) options.debug_libraries = debug_libraries;
  options.write_latest = !no_latest;
  driver_cli::resolve(flags, cfg::PackageType::libtorch);
  options.common = flags.options;
  if (options.common.config.os == "macos") {
    driver_cli::MacosEnvironment mac =
        driver_cli::macos_environment(flags, mac_flags);
    options.deployment_target = mac.deployment_target;
    options.library_path = mac.library_path;
  } else if (!mac_flags.deployment_target.empty() ||
             !mac_flags.lib_paths.empty() || !options.exclude.empty()) {
    throw Error(Errc::usage, "libtorch",
                "--deployment-target, --lib-path and --exclude apply to the "
                "macOS zip (--macos)");
  }
  return driver_cli::finish(libpkg::driver::run_libtorch(options), flags);
}

}  // namespace

int main(int argc, char** argv) {
  return driver_cli::guarded([&] { return run(argc, argv); });
}
