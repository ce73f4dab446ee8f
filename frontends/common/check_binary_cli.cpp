// SPDX-License-Identifier: BSD-3-Clause
#include "check_binary_cli.hpp"

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <exception>

#include "cli_parse.hpp"
#include "guarded.hpp"
#include "libpkg/base/error.hpp"
#include "libpkg/check/check.hpp"
#include "libpkg/config/accelerator.hpp"
#include "libpkg/config/cuda_table.hpp"

namespace check_binary {
namespace {

const char* kUsage =
    "usage: check_binary ARTIFACT [options]\n"
    "  ARTIFACT: a wheel, a conda package (.conda/.tar.bz2), a libtorch zip,\n"
    "  or an installed tree (site-packages, a package directory in it, a\n"
    "  conda prefix, an unpacked libtorch). Exit 0: all checks pass; 1: a\n"
    "  check failed; 2: bad input or usage.";

std::optional<std::string> env(const std::string& name) {
  const char* v = std::getenv(name.c_str());
  if (!v) return std::nullopt;
  return std::string(v);
}

std::string env_or(const char* name, const char* fallback) {
  auto v = env(name);
  return v && !v->empty() ? *v : fallback;
}

int run(const std::vector<std::string>& args, const std::string& program) {
  using namespace libpkg;
  CLI::App app{"check_binary: smoke-test a package before it ships", program};
  std::string artifact;
  bool json = false, verbose = false, no_env = false, no_runtime = false;
  std::optional<std::string> package_type, cuda, abi, platform, policy_file;
  std::optional<std::size_t> min_symbols;
  check::CheckOptions options;
  options.python = env_or("PYTHON", "python3");
  options.cxx = env_or("CXX", "c++");
  options.cc = env_or("CC", "cc");
  std::vector<std::string> abi_libraries, abi_configs;
  std::string client;

  app.add_option("artifact", artifact, "package or installed tree")->required();
  app.add_flag("--json", json, "JSON report (schema libpkg-check/1)");
  app.add_flag("-v,--verbose", verbose, "notes and progress too");
  app.add_option("--package-type", package_type,
                 "manywheel, conda, libtorch or wheel_macos "
                 "(env PACKAGE_TYPE)");
  app.add_option("--cuda", cuda,
                 "expected accelerator: cpu, cu124, 12.4, rocm6.1, xpu "
                 "(env DESIRED_CUDA)");
  app.add_option("--abi", abi,
                 "expected C++ ABI: cxx11 or pre-cxx11 (env "
                 "DESIRED_DEVTOOLSET)");
  app.add_option("--platform", platform,
                 "target instead of the wheel's tag: symbol versions "
                 "(manylinux2014, manylinux_2_28_x86_64) or, for Mach-O, "
                 "minos and architectures (macosx_11_0_arm64)");
  app.add_option("--policy-file", policy_file,
                 "platform policies in auditwheel's JSON format");
  app.add_option("--expect-lib", options.expect.libraries,
                 "library the accelerator build must carry or need (glob)");
  bool expect_table = false;
  std::optional<std::string> cuda_table;
  app.add_flag("--expect-table", expect_table,
               "CUDA builds must carry or need the per-CUDA table's "
               "libraries (data/cuda)");
  app.add_option("--cuda-table", cuda_table,
                 "per-CUDA table file replacing/adding versions");
  app.add_option("--allow-external", options.allow_external,
                 "external library to accept (soname or path glob)");
  app.add_option("--abi-library", abi_libraries,
                 "census library file-name glob (default libtorch_cpu.so*, "
                 "libtorch.so*)");
  app.add_option("--abi-config", abi_configs,
                 "file to read _GLIBCXX_USE_CXX11_ABI from (default "
                 "TorchConfig.cmake)");
  app.add_option("--min-symbols", min_symbols,
                 "census threshold for both ABIs (default 100 cxx11, 1000 "
                 "pre-cxx11)");
  app.add_option("--only", options.only, "run only this check (repeatable)");
  app.add_option("--skip", options.skip, "skip this check (repeatable)");
  app.add_option("--require", options.require,
                 "fail when this check is skipped (repeatable; e.g. "
                 "--require import --require link)")
      ->delimiter(',');
  app.add_flag("--no-runtime", no_runtime,
               "skip import, link, link-wrong-abi and gpu");
  app.add_option("--python", options.python,
                 "interpreter for the import check (default $PYTHON or "
                 "python3)");
  app.add_option("--import", options.import_modules,
                 "module to import (repeatable; default: the package's "
                 "top-level modules)");
  app.add_option("--cxx", options.cxx, "C++ compiler for the link check");
  app.add_option("--cc", options.cc, "C compiler for the GPU probe");
  app.add_option("--client", client, "C++ client source for the link check");
  app.add_option("--link-lib", options.link_libraries,
                 "-l name for the link check (repeatable)");
  app.add_option("--timeout", options.timeout_seconds,
                 "seconds allowed for each runtime step");
  app.add_flag("--no-env", no_env,
               "ignore DESIRED_CUDA, DESIRED_DEVTOOLSET and PACKAGE_TYPE");
  app.add_option("-j,--jobs", options.threads, "threads (default: cores)");
  if (!pkgtool::parse_cli(app, args, program, kUsage)) return 0;

  if (!no_env)
    options.expect = [&] {
      check::Expectation e = check::expectation_from_env(env);
      e.libraries = options.expect.libraries;
      return e;
    }();
  if (package_type) options.expect.package_type = *package_type;
  if (cuda) {
    options.expect.accelerator = config::parse_accelerator(*cuda);
    // ROCm builds use the new ABI (unless the ABI is given as well).
    if (options.expect.accelerator->kind == config::AcceleratorKind::rocm &&
        !abi)
      options.expect.cxx_abi = abi::CxxAbi::cxx11;
  }
  if (abi) options.expect.cxx_abi = config::parse_cxx_abi(*abi);
  if (platform) options.expect.platform = *platform;
  deps::PolicySet loaded;
  if (policy_file) {
    loaded = deps::PolicySet::load(*policy_file);
    options.policies = &loaded;
  }
  options.expect.table_libraries = expect_table;
  config::CudaTables tables;
  if (cuda_table) {
    tables = config::CudaTables::builtin().overlaid(
        config::CudaTables::load(*cuda_table));
    options.cuda_tables = &tables;
  }
  if (!abi_libraries.empty()) options.abi_libraries = abi_libraries;
  if (!abi_configs.empty()) options.abi_configs = abi_configs;
  if (min_symbols) {
    options.min_cxx11_symbols = *min_symbols;
    options.min_pre_cxx11_symbols = *min_symbols;
  }
  if (!client.empty()) options.client = client;
  options.runtime = !no_runtime;
  if (verbose)
    options.log = [](const std::string& line) {
      std::fprintf(stderr, "check_binary: %s\n", line.c_str());
    };

  check::Report report = check::run(artifact, options);
  std::string out = json ? report.to_json() + "\n" : report.to_text(verbose);
  std::fputs(out.c_str(), stdout);
  return report.passed() ? 0 : 1;
}

}  // namespace

int main(const std::vector<std::string>& args, const std::string& program) {
  return pkgtool::guarded([&] { return run(args, program); });
}

}  // namespace check_binary
