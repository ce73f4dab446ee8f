// SPDX-License-Identifier: BSD-3-Clause
#include "libpkg/driver/common.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <system_error>

namespace libpkg::driver {

const config::CudaTables& cuda_tables(const CommonOptions& options) {
  return options.cuda_tables ? *options.cuda_tables
                             : config::CudaTables::builtin();
}

check::Expectation check_expectation(const config::BuildConfig& config,
                                     bool bundles_cuda_table) {
  check::Expectation e;
  e.package_type = config::package_type_name(config.type);
  e.accelerator = config.accelerator;
  // macOS builds use libc++, which has no dual ABI to check.
  if (config.cxx_abi != abi::CxxAbi::none) e.cxx_abi = config.cxx_abi;
  e.table_libraries = bundles_cuda_table &&
                      config.accelerator.kind == config::AcceleratorKind::cuda;
  return e;
}

bool Summary::passed() const {
  for (const auto& r : checks)
    if (!r.passed()) return false;
  return true;
}

void add_artifact(Summary& summary, std::string role,
                  const std::filesystem::path& path, bool check) {
  std::error_code ec;
  u64 size = std::filesystem::file_size(path, ec);
  summary.artifacts.push_back({std::move(role), path, ec ? 0 : size, check});
}

void check_artifacts(Summary& summary, const CommonOptions& options,
                     const check::Expectation& expect) {
  if (!options.run_checks || options.dry_run) return;
  check::CheckOptions co = options.check;
  co.expect = expect;
  if (!co.cuda_tables) co.cuda_tables = options.cuda_tables;
  if (!co.threads) co.threads = options.threads;
  for (const auto& a : summary.artifacts) {
    if (!a.check) continue;
    if (options.log)
      options.log(fmt::format("checking {}", a.path.filename().string()));
    summary.checks.push_back(check::run(a.path, co));
  }
}

std::string Summary::to_text(bool verbose) const {
  std::string out =
      fmt::format("{}: {} ({}){}\n", driver, config.build_environment(),
                  config.version, dry_run ? ", dry run" : "");
  for (const auto& line : plan) out += fmt::format("  {}\n", line);
  for (const auto& note : notes) out += fmt::format("  note: {}\n", note);
  if (!artifacts.empty()) out += "artifacts:\n";
  for (const auto& a : artifacts)
    out += fmt::format("  {:<16} {} ({} bytes)\n", a.role + ":",
                       a.path.string(), a.size);
  for (const auto& r : checks) {
    out += fmt::format("check_binary {}: {}\n", r.artifact.filename().string(),
                       r.passed() ? "pass" : "FAIL");
    std::string text = r.to_text(verbose);
    std::size_t start = 0;
    while (start < text.size()) {
      std::size_t end = text.find('\n', start);
      if (end == std::string::npos) end = text.size();
      out += "  " + text.substr(start, end - start) + "\n";
      start = end + 1;
    }
  }
  if (!dry_run) out += fmt::format("{:.1f} s\n", seconds);
  return out;
}

std::string Summary::to_json(int indent) const {
  nlohmann::ordered_json j;
  j["schema"] = "libpkg-driver/1";
  j["driver"] = driver;
  j["config"] = {
      {"build_environment", config.build_environment()},
      {"package_type", config::package_type_name(config.type)},
      {"python", config.python ? config.python->str() : ""},
      {"accelerator", config.accelerator.tag()},
      {"cxx_abi", config::cxx_abi_option(config.cxx_abi)},
      {"libtorch_variant", config.variant ? config.variant->name() : ""},
      {"os", config.os},
      {"arch", config.arch},
      {"package_name", config.package_name},
      {"version", config.version},
      {"build_number", config.build_number},
  };
  j["dry_run"] = dry_run;
  j["plan"] = plan;
  j["plan_detail"] = plan_json.empty()
                         ? nlohmann::ordered_json(nullptr)
                         : nlohmann::ordered_json::parse(plan_json);
  j["artifacts"] = nlohmann::ordered_json::array();
  for (const auto& a : artifacts)
    j["artifacts"].push_back({{"role", a.role},
                              {"path", a.path.string()},
                              {"size", a.size},
                              {"checked", a.check}});
  j["checks"] = nlohmann::ordered_json::array();
  for (const auto& r : checks)
    j["checks"].push_back(nlohmann::ordered_json::parse(r.to_json(-1)));
  j["notes"] = notes;
  j["passed"] = passed();
  j["seconds"] = seconds;
  return j.dump(indent);
}

}  // namespace libpkg::driver
