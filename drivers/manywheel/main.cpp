// SPDX-License-Identifier: BSD-3-Clause
// manywheel: a built Linux wheel (or the command that builds one) → the
// distributable wheel with its CUDA/OpenMP libraries bundled, retagged and
// checked by check_binary. Replaces manywheel/build_common.sh +
// build_cuda.sh (builder-scripts.md §2.4, §2.5); all logic is
// libpkg::driver::run_manywheel (docs/drivers.md, "manywheel").
//
//   manywheel (--wheel FILE | --build-command CMD --source DIR
//             [--dist-dir DIR]) [--lib-dir DIR] [--pypi-cuda]
//             [--include LIB]... [--keep-name GLOB]... [--exclude GLOB]...
//             [--enable COND]... [--plat TAG] [--force-rpath]
//             [--lib-path DIR]... + the shared driver flags
//
// Exit status: 0 wheel written and checked, 1 a check failed, 2 bad input
// (one line on stderr).
#include <cstdlib>
#include <string>
#include <vector>

#include "driver_cli.hpp"
#include "libpkg/base/error.hpp"
#include "libpkg/driver/manywheel.hpp"

namespace {

namespace cfg = libpkg::config;
using libpkg::Errc;
using libpkg::Error;

const char* kUsage =
    "usage: manywheel (--wheel FILE | --build-command CMD --source DIR "
    "[--dist-dir DIR]) [--pypi-cuda] [--cuda-table FILE] [-o DIR] "
    "[--dry-run] [--json] (see --help)";

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

int run(int argc, char** argv) {
  CLI::App app{
      "Bundle a built Linux wheel's CUDA/OpenMP libraries (per-CUDA "
      "table), rewrite NEEDED and RPATH, retag it to manylinux and check "
      "it."};
  driver_cli::CommonFlags flags;
  driver_cli::add_common_flags(app, flags);
  libpkg::driver::ManywheelOptions o;
  driver_cli::WheelInputFlags input;
  driver_cli::add_wheel_input_flags(app, input);
  std::string lib_dir;
  std::vector<std::string> lib_paths;
  app.add_option("--lib-dir", lib_dir,
                 "directory inside the wheel for bundled libraries "
                 "(default <package>/lib)");
  app.add_flag("--pypi-cuda", o.pypi_cuda,
               "CUDA libraries come from nvidia-* wheels: don't bundle "
               "them, DT_RPATH to them (default: set when "
               "PYTORCH_EXTRA_INSTALL_REQUIREMENTS is)");
  app.add_flag("--force-rpath", o.force_rpath,
               "DT_RPATH instead of DT_RUNPATH (FORCE_RPATH)");
  app.add_option("--include", o.include,
                 "also bundle this library, keeping its name (path or "
                 "soname; repeatable)");
  app.add_option("--keep-name", o.keep_names,
                 "soname glob of bundled libraries that keep their name");
  app.add_option("--exclude", o.exclude,
                 "soname or path glob of a library provided elsewhere");
  app.add_option("--enable", o.enable,
                 "table condition to enable, e.g. cusparselt (default: "
                 "cusparselt when USE_CUSPARSELT=1)");
  app.add_option("--plat", o.plat,
                 "auto (default), a manylinux tag or policy, or linux");
  app.add_option("--lib-path", lib_paths,
                 "extra directory to find libraries in (after "
                 "LD_LIBRARY_PATH)");
  std::vector<std::string> args(argv + 1, argv + argc);
  if (!driver_cli::parse(app, args, "manywheel", kUsage)) return 0;

  if (!lib_dir.empty()) o.lib_dir = lib_dir;
  // The python default comes from the input wheel's tag.
  driver_cli::resolve(flags, cfg::PackageType::manywheel,
                      driver_cli::apply_wheel_input(input, o));
  o.common = flags.options;
  // The old scripts' switches (builder-scripts.md §2.2), unless --no-env.
  if (!flags.no_env)
    libpkg::driver::apply_environment_switches(
        o, [](const std::string& name) -> std::optional<std::string> {
          const char* v = std::getenv(name.c_str());
          if (!v) return std::nullopt;
          return std::string(v);
        });
  std::string ld = env("LD_LIBRARY_PATH");
  // Split as glibc splits LD_LIBRARY_PATH (":" and ";").
  o.search.ld_library_path = libpkg::deps::split_ld_library_path(ld);
  o.search.extra_paths = lib_paths;
  return driver_cli::finish(libpkg::driver::run_manywheel(o), flags);
}

}  // namespace

int main(int argc, char** argv) {
  return driver_cli::guarded([&] { return run(argc, argv); });
}
