// SPDX-License-Identifier: BSD-3-Clause
// `pkgtool config [BUILD_ENVIRONMENT]`: the parsed build configuration and
// its artifact names, from the string or (without one) the old scripts'
// environment variables, with flag overrides on top.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "cli_parse.hpp"
#include "commands.hpp"
#include "config_flags.hpp"
#include "libpkg/base/error.hpp"
#include "libpkg/config/build.hpp"
#include "libpkg/config/cuda_table.hpp"
#include "libpkg/config/matrix.hpp"
#include "libpkg/config/names.hpp"
#include "libpkg/cuda/explain.hpp"

namespace pkgtool {
namespace {

namespace cfg = libpkg::config;

const char* kUsage =
    "usage: pkgtool config [BUILD_ENVIRONMENT] [--json] [--package-type T]\n"
    "                      [--python PY] [--cuda ACCEL] [--abi cxx11|pre-cxx11]"
    "\n"
    "                      [--variant V] [--os OS] [--arch ARCH] [--debug]\n"
    "                      [--build-version V] [--build-number N] "
    "[--version V]\n"
    "                      [--cudnn V] [--package-name N] [--debug-crc HEX]\n"
    "                      [--cuda-table FILE] [--explain] [--cuda-root DIR]\n"
    "                      [--no-env]\n";

libpkg::u32 parse_crc(const std::string& hex) {
  char* end = nullptr;
  unsigned long v = std::strtoul(hex.c_str(), &end, 16);
  if (hex.empty() || *end != '\0' || hex.size() > 8)
    throw libpkg::Error(libpkg::Errc::usage, "--debug-crc",
                        fmt::format("'{}' is not a 32-bit hex CRC", hex));
  return static_cast<libpkg::u32>(v);
}

}  // namespace

int run_config(const std::vector<std::string>& args) {
  CLI::App app{"the parsed build configuration and its artifact names",
               "config"};
  std::string build_env, crc_hex, table_file;
  bool json = false, debug = false, explain = false, no_env = false;
  std::vector<std::filesystem::path> cuda_roots;
  cfg::ConfigOverrides o;
  app.add_option("build_environment", build_env,
                 "\"<type> [<python>] <accelerator> [<devtoolset>]\" "
                 "(default: read the environment)");
  app.add_flag("--json", json, "JSON output");
  add_config_override_flags(app, o, /*type_and_os=*/true);
  app.add_flag("--debug", debug, "debug build");
  app.add_flag("--no-env", no_env,
               "ignore the environment (BUILD_ENVIRONMENT, DESIRED_*, "
               "PYTORCH_BUILD_VERSION, ...)");
  app.add_option("--debug-crc", crc_hex,
                 "debuglink CRC: also print the debug zip names");
  app.add_option("--cuda-table", table_file,
                 "CUDA table file overlaid on the built-in one");
  app.add_flag("--explain", explain,
               "print what the configuration bundles from its CUDA table "
               "and why (each library, where from, name kept or not, and "
               "the rule's source)");
  app.add_option("--cuda-root", cuda_roots,
                 "where --explain looks for the table's libraries "
                 "(repeatable; default /usr/local/cuda)");
  if (!parse_cli(app, args, "pkgtool config", kUsage)) return 0;
  if (debug) o.debug = true;

  // As the drivers: the string names the job, the environment's version
  // and name variables apply on top and its job variables must agree.
  cfg::Getenv getenv = [no_env](const std::string& n) {
    const char* v = no_env ? nullptr : std::getenv(n.c_str());
    return v ? std::optional<std::string>(v) : std::nullopt;
  };
  if (build_env.empty() && no_env)
    usage_error("pkgtool config",
                "--no-env needs the BUILD_ENVIRONMENT argument (nothing "
                "else would describe the job)");
  cfg::BuildConfig c =
      build_env.empty()
          ? cfg::from_environment(getenv)
          : cfg::from_build_environment(build_env, getenv, "the argument");
  c = cfg::apply_overrides(c, o);
  std::optional<libpkg::u32> crc;
  if (!crc_hex.empty()) crc = parse_crc(crc_hex);

  nlohmann::json artifacts = nlohmann::json::object();
  std::string artifacts_error;
  try {
    for (const auto& [role, name] : cfg::artifact_names(c, crc))
      artifacts[role].push_back(name);
  } catch (const libpkg::Error& e) {
    artifacts_error = e.message();
  }
  nlohmann::json cuda;
  cfg::CudaTables tables = cfg::CudaTables::builtin();
  if (!table_file.empty())
    tables = tables.overlaid(cfg::CudaTables::load(table_file));
  if (explain) {
    if (c.accelerator.kind != cfg::AcceleratorKind::cuda)
      throw libpkg::Error(libpkg::Errc::usage, "--explain",
                          fmt::format("'{}' is not a CUDA configuration: "
                                      "nothing comes from a CUDA table",
                                      c.build_environment()));
    const auto lines = libpkg::cuda::explain_bundle(c, tables, cuda_roots);
    if (json) {
      std::printf("%s\n", nlohmann::json(lines).dump(2).c_str());
    } else {
      for (const auto& line : lines) std::printf("%s\n", line.c_str());
    }
    return 0;
  }
  if (c.accelerator.kind == cfg::AcceleratorKind::cuda) {
    try {
      const cfg::CudaTable& t = tables.find(c.accelerator);
      cuda["version"] = t.version;
      cuda["libraries"] = nullptr;
      if (t.libraries) {
        cuda["libraries"] = nlohmann::json::array();
        for (const auto& lib : *t.libraries)
          cuda["libraries"].push_back({{"path", lib.path},
                                       {"arch", lib.arch},
                                       {"optional", lib.optional},
                                       {"source", lib.source},
                                       {"soname", lib.soname},
                                       {"keep_name", lib.keep_name},
                                       {"condition", lib.condition}});
      }
      cuda["pypi_rpath"] = t.pypi_rpath;
      try {
        cuda["torch_cuda_arch_list"] = t.arch_list(c.arch);
      } catch (const libpkg::Error&) {
        cuda["torch_cuda_arch_list"] = nullptr;
      }
      cuda["nvcc_flags"] = t.nvcc_flags;
      cuda["bundle_ptxas"] = t.bundle_ptxas;
    } catch (const libpkg::Error& e) {
      cuda["error"] = e.message();
    }
  }

  nlohmann::json out = {
      {"package_type", cfg::package_type_name(c.type)},
      {"python", c.python ? c.python->str() : ""},
      {"python_tag", c.python ? c.python->python_tag() : ""},
      {"abi_tag", c.python ? c.python->abi_tag() : ""},
      {"build_python", c.build_python ? c.build_python->str() : ""},
      {"accelerator", c.accelerator.tag()},
      {"gpu_arch_type", cfg::accelerator_kind_name(c.accelerator.kind)},
      {"gpu_arch_version", c.accelerator.version()},
      {"cxx_abi", cfg::cxx_abi_option(c.cxx_abi)},
      {"libtorch_variant", c.variant ? c.variant->name() : ""},
      {"os", c.os},
      {"arch", c.arch},
      {"debug", c.debug},
      {"package_name", c.package_name},
      {"version", c.version},
      {"build_number", c.build_number},
      {"version_overridden", c.version_overridden},
      {"package_dir_suffix", cfg::package_dir_suffix(c)},
      {"build_name", cfg::build_name(c)},
      {"build_environment", c.build_environment()},
      {"artifacts", artifacts},
  };
  if (!artifacts_error.empty()) out["artifacts_error"] = artifacts_error;
  if (!cuda.is_null()) out["cuda_table"] = cuda;
  if (json) {
    std::printf("%s\n", out.dump(2).c_str());
    return 0;
  }
  for (const char* key :
       {"package_type", "python", "abi_tag", "build_python", "accelerator",
        "cxx_abi", "libtorch_variant", "os", "arch", "debug", "package_name",
        "version", "build_number", "build_name", "build_environment"}) {
    const auto& v = out[key];
    if (v.is_string() && v.get<std::string>().empty()) continue;
    std::printf(
        "%-18s %s\n", (std::string(key) + ":").c_str(),
        v.is_string() ? v.get<std::string>().c_str() : v.dump().c_str());
  }
  for (const auto& [role, names] : artifacts.items())
    for (const auto& n : names)
      std::printf("%-18s %s\n", (role + ":").c_str(),
                  n.get<std::string>().c_str());
  if (!artifacts_error.empty())
    std::printf("%-18s %s\n", "artifacts:", artifacts_error.c_str());
  return 0;
}

}  // namespace pkgtool
