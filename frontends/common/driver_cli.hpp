// SPDX-License-Identifier: BSD-3-Clause
// The command line every driver shares: the build configuration (a
// BUILD_ENVIRONMENT string, the old scripts' environment variables, flag
// overrides on top), output directory, dry run, JSON summary, threads, and
// the check_binary options applied to the outputs. Each driver's main adds
// its own flags to the same CLI11 app, calls `resolve`, makes one library
// call and hands the summary to `finish`.
#pragma once

#include <CLI/CLI.hpp>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cache_flags.hpp"
#include "guarded.hpp"
#include "libpkg/base/thread_pool.hpp"
#include "libpkg/config/build.hpp"
#include "libpkg/config/cuda_table.hpp"
#include "libpkg/driver/common.hpp"
#include "libpkg/driver/manywheel.hpp"

namespace driver_cli {

struct CommonFlags {
  libpkg::driver::CommonOptions options;
  // --build-env: a BUILD_ENVIRONMENT string (not a file), with the
  // environment's variables on top (config::from_build_environment).
  std::string build_environment;
  libpkg::config::ConfigOverrides overrides;
  bool debug = false;
  bool json = false;
  bool verbose = false;
  bool no_check = false;
  bool no_runtime = false;
  bool no_env = false;
  std::optional<std::string> cuda_table;
  std::optional<std::string> client;
  std::vector<std::string> abi_libraries, abi_configs;
  std::optional<std::size_t> min_symbols;
  // --cache-dir, --cache-max, --no-cache: options.cache.
  pkgtool::CacheFlags cache;
  // Storage for options.cuda_tables once a table file is loaded.
  libpkg::config::CudaTables tables;
  // Storage for options.pool: the one pool of the whole job, sized by -j.
  std::unique_ptr<libpkg::ThreadPool> pool;
};

// Registers the shared flags on `app`: --build-env, --python, --cuda,
// --abi, --variant, --build-version, --build-number, --version, --cudnn,
// --package-name, --debug, --cuda-table, --cuda-root, -o/--out, --dry-run,
// --json, -j,
// --level, -v, --no-check, --no-runtime, --check-python, --client,
// --link-lib, --allow-external, --abi-library, --abi-config,
// --min-symbols, --no-env, --cache-dir, --cache-max, --no-cache.
void add_common_flags(CLI::App& app, CommonFlags& flags);

// After parsing: the configuration (forced to `type`; Errc::usage if the
// BUILD_ENVIRONMENT or PACKAGE_TYPE names another type), SOURCE_DATE_EPOCH
// as the timestamp, the CUDA table file, check options and the log.
// `default_python` (e.g. read from an input wheel's tags) is used when
// neither the environment nor --python names one.
void resolve(CommonFlags& flags, libpkg::config::PackageType type,
             std::optional<libpkg::config::PythonVersion> default_python = {});

// The input of the drivers that repair a built wheel (manywheel,
// wheel_macos): --wheel FILE, or --build-command CMD run in --source DIR
// (--build-timeout SECONDS, --dist-dir DIR).
struct WheelInputFlags {
  std::string wheel, build_command, source, dist_dir;
  unsigned build_timeout = 0;
};

// Registers --wheel, --build-command, --source, --build-timeout, --dist-dir.
void add_wheel_input_flags(CLI::App& app, WheelInputFlags& flags);

// After parsing: the input into `o` (either driver's options, which name
// the fields alike). Returns the python of the input wheel's tags, the
// default for resolve(); none for a build command.
template <typename Options>
std::optional<libpkg::config::PythonVersion> apply_wheel_input(
    const WheelInputFlags& flags, Options& o) {
  o.build_command = flags.build_command;
  o.build_timeout_seconds = flags.build_timeout;
  o.source_dir = flags.source;
  o.dist_dir = flags.dist_dir;
  if (flags.wheel.empty()) return std::nullopt;
  o.wheel = flags.wheel;
  return libpkg::driver::wheel_python(flags.wheel);
}

// The flags of the macOS drivers (wheel_macos, libtorch --macos):
// --deployment-target X.Y, --lib-path DIR (repeatable) and --exclude GLOB.
// Like every driver, no -L: pkgtool repair's -L is --lib-sdir (auditwheel,
// delocate), so parse() refuses -L pointing to --lib-path.
struct MacosFlags {
  std::string deployment_target;
  std::vector<std::string> lib_paths;
};

// Registers --deployment-target and --lib-path into `flags`, --exclude
// into `exclude` (the driver's options own that list).
void add_macos_flags(CLI::App& app, MacosFlags& flags,
                     std::vector<std::string>& exclude);

// What the macOS drivers take from the environment after their flags:
// --deployment-target, else MACOSX_DEPLOYMENT_TARGET unless --no-env;
// DYLD_LIBRARY_PATH's directories, then --lib-path, searched first by leaf
// name.
struct MacosEnvironment {
  std::optional<std::string> deployment_target;
  std::vector<std::filesystem::path> library_path;
};
MacosEnvironment macos_environment(const CommonFlags& flags,
                                   const MacosFlags& macos);

// Parses `args` into `app` (false: --help was printed, exit 0). Errors are
// libpkg::Error with Errc::usage. A driver with --lib-path refuses -L
// naming --lib-path (-L is --lib-sdir in pkgtool repair), so that -L never
// means another thing here than there.
bool parse(CLI::App& app, const std::vector<std::string>& args,
           const std::string& program, const std::string& usage);

// Prints the summary (text or JSON) and returns the exit code: 0 when every
// check passed, 1 otherwise.
int finish(const libpkg::driver::Summary& summary, const CommonFlags& flags);

// Runs `body`, mapping exceptions to messages and exit codes exactly as
// pkgtool and check_binary do.
using pkgtool::guarded;

}  // namespace driver_cli
