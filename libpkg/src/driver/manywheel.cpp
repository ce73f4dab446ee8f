// SPDX-License-Identifier: BSD-3-Clause
// run_manywheel: input wheel → bundling rules → analysis → repair plan →
// one streaming write → check_binary.
#include "libpkg/driver/manywheel.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "driver/common_repair.hpp"
#include "driver/manywheel_build.hpp"
#include "driver/manywheel_rules.hpp"
#include "libpkg/base/error.hpp"
#include "libpkg/base/result.hpp"
#include "libpkg/bundle/analyze.hpp"
#include "libpkg/bundle/repair.hpp"
#include "libpkg/wheel/name.hpp"

namespace fs = std::filesystem;

namespace libpkg::driver {

std::optional<config::PythonVersion> wheel_python(const fs::path& wheel) {
  // A name that does not parse, or tags that name no single CPython, mean
  // "unknown"; nothing else is swallowed.
  Result<std::optional<config::PythonVersion>> v =
      attempt({Errc::usage, Errc::format},
              [&]() -> std::optional<config::PythonVersion> {
                wheel::WheelName name =
                    wheel::WheelName::parse(wheel.filename().string());
                if (name.python_tags.size() != 1 || name.abi_tags.size() != 1)
                  return std::nullopt;
                return config::PythonVersion::parse(
                    name.python_tags.front() + "-" + name.abi_tags.front());
              });
  return v ? v.value() : std::nullopt;
}

namespace {

// A linux_<arch> wheel must be of the configuration's architecture: the
// table's per-arch libraries and policy depend on it.
void check_arch(const fs::path& wheel, const config::BuildConfig& config) {
  wheel::WheelName name = wheel::WheelName::parse(wheel.filename().string());
  for (const auto& plat : name.platform_tags)
    if (plat.starts_with("linux_") && plat != "linux_" + config.arch)
      throw Error(Errc::usage, wheel.string(),
                  fmt::format("the wheel is for {}, but the configuration's "
                              "architecture is {} (--arch)",
                              plat.substr(6), config.arch));
}

void check_python(const fs::path& wheel, const config::BuildConfig& config) {
  if (!config.python) return;
  wheel::WheelName name = wheel::WheelName::parse(wheel.filename().string());
  const auto& py = name.python_tags;
  const auto& abi = name.abi_tags;
  const std::string want_py = config.python->python_tag();
  const std::string want_abi = config.python->abi_tag();

  if (std::find(py.begin(), py.end(), want_py) != py.end() &&
      std::find(abi.begin(), abi.end(), want_abi) != abi.end())
    return;
  throw Error(Errc::usage, wheel.string(),
              fmt::format("the wheel is for {}-{}, but the configuration's "
                          "python is {} ({}-{})",
                          name.python_tag(), name.abi_tag(),
                          config.python->str(), want_py, want_abi));
}

// The wheel's package directory: the top-level directory named after the
// distribution, else the one top-level directory holding ELF files.
std::string package_dir(const bundle::WheelAnalysis& a) {
  std::string dist = a.name.distribution;
  std::string lower = dist;
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  for (const auto& e : a.zip->entries())
    for (const std::string& d : {dist, lower})
      if (e.name.starts_with(d + "/")) return d;
  std::set<std::string> tops;
  for (const auto& b : a.binaries) {
    auto slash = b.member.find('/');
    if (slash == std::string::npos) continue;
    std::string top = b.member.substr(0, slash);
    if (!top.ends_with(".data") && !top.ends_with(".dist-info"))
      tops.insert(top);
  }
  if (tops.size() == 1) return *tops.begin();
  throw Error(
      Errc::usage, a.wheel.string(),
      fmt::format("cannot tell the package directory for the "
                  "bundled libraries (no {}/; top-level directories "
                  "with ELF files: {}); give --lib-dir",
                  dist,
                  tops.empty() ? std::string("none")
                               : fmt::format("{}", fmt::join(tops, ", "))));
}

void log(const ManywheelOptions& o, const std::string& line) {
  if (o.common.log) o.common.log(line);
}

}  // namespace

Summary run_manywheel(const ManywheelOptions& o) {
  Stopwatch clock;
  Summary s;
  s.driver = "manywheel";
  s.config = o.common.config;
  s.dry_run = o.common.dry_run;
  if (o.common.config.type != config::PackageType::manywheel)
    throw Error(Errc::usage, o.common.config.build_environment(),
                "the manywheel driver builds manywheel configurations");
  std::error_code ec;
  if (!o.wheel.empty() && fs::is_regular_file(o.wheel, ec))
    check_arch(o.wheel, o.common.config);
  // Table problems are reported before a (long) build is started.
  detail::BundleRules rules = detail::bundle_rules(o);
  std::optional<fs::path> wheel = detail::input_wheel(
      o, "manywheel", o.common.dry_run, s.plan, rules.build_env);
  for (const auto& line : rules.plan) s.plan.push_back(line);
  if (!wheel) {
    s.seconds = clock.seconds();
    s.record_cache(o.common);
    return s;
  }
  check_python(*wheel, o.common.config);

  bundle::AnalyzeOptions ao;
  ao.search = o.search;
  ao.include = rules.include;
  for (const auto& i : o.include) ao.include.push_back(i);
  ao.exclude = rules.exclude;
  for (const auto& x : o.exclude) ao.exclude.push_back(x);
  ao.threads = o.common.threads;
  ao.pool = o.common.pool;
  log(o, fmt::format("analysing {}", wheel->filename().string()));
  bundle::WheelAnalysis analysis = bundle::analyze_wheel(*wheel, ao);

  bundle::RepairOptions ro;
  ro.plat = rules.plat.empty() ? o.plat : rules.plat;
  ro.lib_dir = o.lib_dir ? *o.lib_dir : package_dir(analysis) + "/lib";
  ro.keep_names = rules.keep_names;
  ro.include_rules = rules.include_rules;
  ro.rpath_all = true;
  ro.threads = o.common.threads;
  ro.pool = o.common.pool;
  ro.cache = o.common.cache;  // the grafts' content hashes
  ro.rpath_first = detail::install_root_dirs(rules.pypi_rpath, *ro.lib_dir);
  // build_cuda.sh forced DT_RPATH in pypi-CUDA mode so that the nvidia-*
  // wheels win over LD_LIBRARY_PATH; otherwise patchelf wrote DT_RUNPATH.
  ro.rpath_tag = o.pypi_cuda || o.force_rpath ? elf::RpathTag::rpath
                                              : elf::RpathTag::runpath;
  bundle::RepairPlan plan = bundle::plan_repair(analysis, ro);
  add_lines(s.plan, plan.to_text());
  s.plan_json = plan.to_json();
  s.notes = plan.notes;
  if (o.common.dry_run) {
    s.seconds = clock.seconds();
    s.record_cache(o.common);
    return s;
  }

  CommonOptions checks = o.common;
  for (const auto& a : rules.allow_external)
    checks.check.allow_external.push_back(a);
  detail::write_and_check_wheel(
      s, o.common, *wheel, plan.output_name, plan.grafts.size(),
      [&](const bundle::ApplyOptions& ap) {
        return bundle::apply_repair(analysis, plan, o.common.out_dir, ap);
      },
      checks, check_expectation(o.common.config, rules.table && !o.pypi_cuda));
  s.seconds = clock.seconds();
  s.record_cache(o.common);
  return s;
}

}  // namespace libpkg::driver
