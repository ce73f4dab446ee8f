// SPDX-License-Identifier: BSD-3-Clause
#include "driver_cli.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <memory>

#include "cli_parse.hpp"
#include "config_flags.hpp"
#include "libpkg/base/error.hpp"
#include "libpkg/deps/resolve.hpp"
#include "progress.hpp"

namespace driver_cli {
namespace {

namespace cfg = libpkg::config;

std::optional<std::string> env(const std::string& name) {
  const char* v = std::getenv(name.c_str());
  if (!v || !*v) return std::nullopt;
  return std::string(v);
}

// A byte progress line for the drivers' long writes (pkgtool::Progress draws
// it on the terminal); a new total starts a new line.
std::function<void(libpkg::u64, libpkg::u64)> terminal_progress() {
  struct State {
    std::unique_ptr<pkgtool::Progress> bar;
    libpkg::u64 total = 0, done = 0;
  };
  auto state = std::make_shared<State>();
  return [state](libpkg::u64 done, libpkg::u64 total) {
    if (!state->bar || total != state->total || done < state->done) {
      state->bar = std::make_unique<pkgtool::Progress>("writing", total);
      state->total = total;
      state->done = 0;
    }
    state->bar->advance(done - state->done);
    state->done = done;
    if (done >= total) state->bar.reset();
  };
}

}  // namespace

void add_wheel_input_flags(CLI::App& app, WheelInputFlags& f) {
  app.add_option("--wheel", f.wheel, "the built wheel to repair");
  app.add_option("--build-command", f.build_command,
                 "shell command that builds the wheel (run in --source)");
  app.add_option("--source", f.source, "source directory of --build-command");
  app.add_option("--build-timeout", f.build_timeout,
                 "stop the build command and everything it started after "
                 "SECONDS (default: no limit)");
  app.add_option("--dist-dir", f.dist_dir,
                 "where the build command writes its wheel (default "
                 "<source>/dist)");
}

void add_common_flags(CLI::App& app, CommonFlags& f) {
  auto& o = f.overrides;
  app.add_option("--build-env", f.build_environment,
                 "\"<type> [<python>] <accelerator> [<devtoolset>]\" "
                 "(default: BUILD_ENVIRONMENT, else DESIRED_* variables)");
  pkgtool::add_config_override_flags(app, o, /*type_and_os=*/false);
  app.add_flag("--debug", f.debug, "debug build");
  app.add_flag("--no-env", f.no_env,
               "ignore the environment (BUILD_ENVIRONMENT, DESIRED_*, ...)");
  app.add_option("--cuda-table", f.cuda_table,
                 "per-CUDA table file replacing/adding versions");
  app.add_option("--cuda-root", f.options.cuda_roots,
                 "directory the CUDA table's libraries are looked for in "
                 "(repeatable, in order; default /usr/local/cuda)");
  app.add_option("-o,--out", f.options.out_dir, "output directory (dist)");
  app.add_flag("--dry-run", f.options.dry_run, "print the plan, write nothing");
  f.cache.add_to(app);
  app.add_flag("--json", f.json, "JSON summary (schema libpkg-driver/1)");
  app.add_flag("-v,--verbose", f.verbose, "progress lines and check notes");
  app.add_option("-j,--jobs", f.options.threads, "threads (default: cores)");
  app.add_option("--level", f.options.zip_level, "deflate level 0-9 (6)")
      ->check(CLI::Range(0, 9));
  app.add_flag("--no-check", f.no_check, "do not run check_binary");
  app.add_flag("--no-runtime", f.no_runtime,
               "check_binary without import, link and gpu");
  app.add_option("--check-python", f.options.check.python,
                 "interpreter for the import check (default $PYTHON or "
                 "python3)");
  app.add_option("--client", f.client, "C++ client source for the link check");
  app.add_option("--link-lib", f.options.check.link_libraries,
                 "-l name for the link check (repeatable)");
  app.add_option("--allow-external", f.options.check.allow_external,
                 "external library check_binary accepts (glob, repeatable)");
  app.add_option("--abi-library", f.abi_libraries,
                 "census library glob (default libtorch_cpu.so*, "
                 "libtorch.so*)");
  app.add_option("--abi-config", f.abi_configs,
                 "file to read _GLIBCXX_USE_CXX11_ABI from "
                 "(default TorchConfig.cmake)");
  app.add_option("--min-symbols", f.min_symbols, "census threshold");
  f.options.check.python = env("PYTHON").value_or("python3");
  f.options.check.cxx = env("CXX").value_or("c++");
  f.options.check.cc = env("CC").value_or("cc");
}

void resolve(CommonFlags& f, cfg::PackageType type,
             std::optional<cfg::PythonVersion> default_python) {
  auto getenv = [&f](const std::string& name) -> std::optional<std::string> {
    return f.no_env ? std::nullopt : env(name);
  };
  // The string names the job; the environment's version and name variables
  // still apply, and its job variables must agree with the string
  // (config::from_build_environment): PYTORCH_BUILD_VERSION set by CI is
  // never silently dropped because --build-env was given.
  cfg::BuildConfig c;
  if (!f.build_environment.empty()) {
    c = cfg::from_build_environment(f.build_environment, getenv, "--build-env");
  } else if (auto text = getenv("BUILD_ENVIRONMENT")) {
    c = cfg::from_build_environment(*text, getenv, "BUILD_ENVIRONMENT");
  } else if (getenv("PACKAGE_TYPE") || getenv("DESIRED_PYTHON") ||
             getenv("DESIRED_CUDA") || getenv("BUILD_PYTHONLESS")) {
    c = cfg::from_environment(getenv);
  } else {
    c.type = type;
    // The macOS wheel has no other OS (BuildConfig defaults to linux).
    if (type == cfg::PackageType::wheel_macos) c.os = "macos";
    // apply_overrides gives Linux libtorch its default variant (a macOS
    // zip, --macos, has none).
    if (type == cfg::PackageType::libtorch) c.python.reset();
  }
  if (!c.python && !f.overrides.python && default_python &&
      c.type != cfg::PackageType::libtorch)
    c.python = default_python;
  if (c.type != type)
    throw libpkg::Error(
        libpkg::Errc::usage, "configuration",
        fmt::format("the build configuration is for {} ('{}'), not {}",
                    cfg::package_type_name(c.type), c.build_environment(),
                    cfg::package_type_name(type)));
  if (f.debug) f.overrides.debug = true;
  f.options.config = cfg::apply_overrides(c, f.overrides);

  if (auto epoch = env("SOURCE_DATE_EPOCH")) {
    char* end = nullptr;
    long long v = std::strtoll(epoch->c_str(), &end, 10);
    if (*end != '\0' || v < 0)
      throw libpkg::Error(
          libpkg::Errc::usage, "SOURCE_DATE_EPOCH",
          fmt::format("'{}' is not a non-negative integer", *epoch));
    f.options.timestamp = v;
  }
  if (!f.options.dry_run) f.options.cache = f.cache.open();
  if (f.cuda_table) {
    f.tables = cfg::CudaTables::builtin().overlaid(
        cfg::CudaTables::load(*f.cuda_table));
    f.options.cuda_tables = &f.tables;
  }
  f.pool = std::make_unique<libpkg::ThreadPool>(f.options.threads);
  f.options.pool = f.pool.get();
  auto& check = f.options.check;
  f.options.run_checks = !f.no_check;
  check.runtime = !f.no_runtime;
  if (f.client) check.client = *f.client;
  if (!f.abi_libraries.empty()) check.abi_libraries = f.abi_libraries;
  if (!f.abi_configs.empty()) check.abi_configs = f.abi_configs;
  if (f.min_symbols) {
    check.min_cxx11_symbols = *f.min_symbols;
    check.min_pre_cxx11_symbols = *f.min_symbols;
  }
  // Progress goes to stderr with -v, and always on a terminal; CI logs and
  // pipes stay clean otherwise.
  const bool tty = isatty(STDERR_FILENO) != 0;
  if (f.verbose || tty) {
    auto line = [](const std::string& s) {
      std::fprintf(stderr, "libpkg: %s\n", s.c_str());
    };
    f.options.log = line;
    check.log = line;
  }
  if (tty) f.options.progress = terminal_progress();
}

void add_macos_flags(CLI::App& app, MacosFlags& flags,
                     std::vector<std::string>& exclude) {
  app.add_option("--deployment-target", flags.deployment_target,
                 "macOS deployment target: what the binaries are checked "
                 "against, and the floor and ceiling of a wheel tag "
                 "(default MACOSX_DEPLOYMENT_TARGET, else 10.15; arm64 is "
                 "at least 11.0)");
  app.add_option("--lib-path", flags.lib_paths,
                 "macOS: directory searched first for dylibs by leaf name "
                 "(after DYLD_LIBRARY_PATH; repeatable)");
  app.add_option("--exclude", exclude,
                 "macOS: glob of a library another package provides (not "
                 "bundled)");
}

MacosEnvironment macos_environment(const CommonFlags& flags,
                                   const MacosFlags& macos) {
  MacosEnvironment out;
  if (!macos.deployment_target.empty())
    out.deployment_target = macos.deployment_target;
  else if (!flags.no_env)
    out.deployment_target = env("MACOSX_DEPLOYMENT_TARGET");
  if (auto dyld = env("DYLD_LIBRARY_PATH"))
    for (const auto& d : libpkg::deps::split_path_list(*dyld))
      out.library_path.push_back(d);
  for (const auto& d : macos.lib_paths) out.library_path.push_back(d);
  return out;
}

bool parse(CLI::App& app, const std::vector<std::string>& args,
           const std::string& program, const std::string& usage) {
  // pkgtool repair's -L is --lib-sdir (auditwheel, delocate); a driver
  // taking library directories spells that --lib-path only, so an -L meant
  // either way is refused rather than read as the other.
  if (app.get_option_no_throw("--lib-path"))
    for (const auto& a : args)
      if (a.starts_with("-L"))
        pkgtool::usage_error(
            program,
            fmt::format("unknown option '{}' (-L is pkgtool repair's "
                        "--lib-sdir, as in auditwheel and delocate): give "
                        "library directories as --lib-path DIR",
                        a));
  return pkgtool::parse_cli(app, args, program, usage);
}

int finish(const libpkg::driver::Summary& summary, const CommonFlags& f) {
  std::string out =
      f.json ? summary.to_json() + "\n" : summary.to_text(f.verbose);
  std::fputs(out.c_str(), stdout);
  return summary.passed() ? 0 : 1;
}

}  // namespace driver_cli
