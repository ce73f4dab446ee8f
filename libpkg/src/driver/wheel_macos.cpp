// SPDX-License-Identifier: BSD-3-Clause
// run_wheel_macos: input wheel → macOS repair plan (one OpenMP runtime,
// the old script's name with WHEEL agreeing) → one streaming write →
// check_binary.
#include "libpkg/driver/wheel_macos.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "driver/common_repair.hpp"
#include "driver/macos_rules.hpp"
#include "driver/manywheel_build.hpp"
#include "libpkg/base/error.hpp"
#include "libpkg/bundle/macos_repair.hpp"
#include "libpkg/config/names.hpp"
#include "libpkg/wheel/macos_tag.hpp"
#include "libpkg/wheel/name.hpp"

namespace fs = std::filesystem;

namespace libpkg::driver {

bool is_openmp_runtime(const std::string& leaf) {
  return leaf == "libomp.dylib" || leaf == "libiomp5.dylib" ||
         leaf == "libgomp.1.dylib" || leaf == "libgomp.dylib";
}

namespace {

void log(const WheelMacosOptions& o, const std::string& line) {
  if (o.common.log) o.common.log(line);
}

// The built wheel, or the one the build command writes (the manywheel
// driver's input step: same contract); nullopt on a dry run with a build
// command, which is not run.
std::optional<fs::path> input_wheel(const WheelMacosOptions& o, Summary& s,
                                    const wheel::MacosVersion& target) {
  ManywheelOptions in;
  in.wheel = o.wheel;
  in.build_command = o.build_command;
  in.build_timeout_seconds = o.build_timeout_seconds;
  in.source_dir = o.source_dir;
  in.dist_dir = o.dist_dir;
  return detail::input_wheel(in, "wheel_macos", o.common.dry_run, s.plan,
                             {"MACOSX_DEPLOYMENT_TARGET=" + target.str()});
}

// The wheel must be for the configuration's python (its abi tag may be
// anything: the output's is `none`, as the old script named it).
void check_python(const fs::path& wheel, const config::BuildConfig& c) {
  if (!c.python) return;
  wheel::WheelName name = wheel::WheelName::parse(wheel.filename().string());
  const auto& py = name.python_tags;
  if (std::find(py.begin(), py.end(), c.python->python_tag()) == py.end())
    throw Error(Errc::usage, wheel.string(),
                fmt::format("the wheel is for {}, but the configuration's "
                            "python is {} ({})",
                            name.python_tag(), c.python->str(),
                            c.python->python_tag()));
}

}  // namespace

Summary run_wheel_macos(const WheelMacosOptions& o) {
  Stopwatch clock;
  Summary s;
  s.driver = "wheel_macos";
  s.config = o.common.config;
  s.dry_run = o.common.dry_run;
  const config::BuildConfig& c = o.common.config;
  if (c.type != config::PackageType::wheel_macos)
    throw Error(Errc::usage, c.build_environment(),
                "the wheel_macos driver builds wheel_macos configurations");
  wheel::MacosVersion target =
      detail::macos_deployment_target(o.deployment_target, c.arch);
  std::optional<fs::path> wheel = input_wheel(o, s, target);
  s.plan.push_back(
      fmt::format("deployment target {} ({}), arch {}", target.str(),
                  o.deployment_target ? "MACOSX_DEPLOYMENT_TARGET"
                                      : "default 10.15; arm64 at least 11.0",
                  c.arch));
  if (!wheel) {
    s.seconds = clock.seconds();
    s.record_cache(o.common);
    return s;
  }
  check_python(*wheel, c);

  bundle::MacosRepairOptions ro;
  ro.dyld_library_path = o.library_path;
  ro.exclude = o.exclude;
  ro.require_archs = {c.arch};
  ro.target = target;
  ro.threads = o.common.threads;
  ro.pool = o.common.pool;
  ro.cache = o.common.cache;  // the grafts' content hashes
  log(o, fmt::format("analysing {}", wheel->filename().string()));
  bundle::MacosRepairPlan plan = bundle::plan_macos_repair(*wheel, ro);
  detail::check_one_openmp(plan.wheel.string(), plan.binaries, plan.grafts,
                           "<package>/lib (torch/lib/libomp.dylib)");
  // The old script's name: ABI tag `none` (builder-scripts.md §4), now
  // with WHEEL's Tag lines rewritten to agree (apply retags from plan.name).
  plan.name.abi_tags = {"none"};
  plan.output_name =
      wheel::with_platform_tags(plan.name, plan.platform_tags).format();
  std::string expected = config::wheel_name(c).format();
  if (plan.output_name != expected)
    plan.notes.push_back(fmt::format(
        "output {} differs from the configuration's name {} (the wheel's "
        "version, python or tag)",
        plan.output_name, expected));
  add_lines(s.plan, plan.to_text());
  s.plan.push_back("output: " + plan.output_name);
  s.plan_json = plan.to_json();
  s.notes = plan.notes;
  if (o.common.dry_run) {
    s.seconds = clock.seconds();
    s.record_cache(o.common);
    return s;
  }

  detail::write_and_check_wheel(
      s, o.common, *wheel, plan.output_name, plan.grafts.size(),
      [&](const bundle::ApplyOptions& ap) {
        return bundle::apply_macos_repair(plan, o.common.out_dir, ap);
      },
      o.common, check_expectation(c, false));
  s.seconds = clock.seconds();
  s.record_cache(o.common);
  return s;
}

}  // namespace libpkg::driver
