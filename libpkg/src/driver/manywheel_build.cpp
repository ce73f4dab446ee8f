// SPDX-License-Identifier: BSD-3-Clause
#include "driver/manywheel_build.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <map>

#include "libpkg/base/error.hpp"
#include "libpkg/base/fd.hpp"
#include "libpkg/base/subprocess.hpp"

namespace fs = std::filesystem;

namespace libpkg::driver::detail {
namespace {

// *.whl files directly in `dir` with their modification times.
std::map<fs::path, fs::file_time_type> wheels_in(const fs::path& dir) {
  std::map<fs::path, fs::file_time_type> out;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return out;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.path().extension() == ".whl" && e.is_regular_file(ec))
      out[e.path()] = e.last_write_time(ec);
  return out;
}

}  // namespace

fs::path dist_dir(const ManywheelOptions& o) {
  if (o.dist_dir.empty()) return o.source_dir / "dist";
  return o.dist_dir.is_absolute() ? o.dist_dir : o.source_dir / o.dist_dir;
}

fs::path build_wheel(const ManywheelOptions& o,
                     const std::vector<std::string>& env_set) {
  require_directory(o.source_dir, "source directory");
  const fs::path dist = dist_dir(o);
  const auto before = wheels_in(dist);
  if (o.common.log)
    o.common.log(fmt::format("running '{}' in {}", o.build_command,
                             o.source_dir.string()));
  // sh -c COMMAND in the source directory, its output shown live on our
  // stderr (stdout stays the driver's report), in its own process group so
  // that a timeout stops the whole build.
  RunOptions run;
  run.cwd = o.source_dir;
  run.env_set = env_set;
  run.timeout_seconds = o.build_timeout_seconds;
  run.echo_fd = STDERR_FILENO;
  run.max_output = 0;
  run.kill_leftovers = false;  // a compiler cache's server may stay
  const RunResult built = run_process({"/bin/sh", "-c", o.build_command}, run);
  if (!built.ok())
    throw Error(
        Errc::io, o.source_dir.string(),
        fmt::format("the build command '{}' failed: {}", o.build_command,
                    built.describe(o.build_timeout_seconds)));
  std::vector<fs::path> fresh;
  for (const auto& [path, mtime] : wheels_in(dist)) {
    auto it = before.find(path);
    if (it == before.end() || it->second != mtime) fresh.push_back(path);
  }
  if (fresh.empty())
    throw Error(Errc::not_found, dist.string(),
                fmt::format("the build command '{}' wrote no wheel here "
                            "(give the directory it writes to with "
                            "--dist-dir)",
                            o.build_command));
  if (fresh.size() > 1) {
    std::string names;
    for (const auto& p : fresh)
      names += (names.empty() ? "" : ", ") + p.filename().string();
    throw Error(Errc::usage, dist.string(),
                fmt::format("the build command wrote {} wheels ({}); pass "
                            "the one to repair with --wheel",
                            fresh.size(), names));
  }
  return fresh.front();
}

// The input wheel (building it first for a build command); nullopt on a
// dry run with a build command, which is not run.
std::optional<fs::path> input_wheel(const ManywheelOptions& o,
                                    const std::string& driver, bool dry_run,
                                    std::vector<std::string>& plan,
                                    const std::vector<std::string>& env) {
  const bool has_wheel = !o.wheel.empty();
  const bool has_build = !o.build_command.empty();
  if (has_wheel == has_build)
    throw Error(Errc::usage, driver,
                "give either a built wheel (--wheel) or a build command "
                "(--build-command with --source), not both or neither");
  if (has_wheel) {
    // Missing, unreadable or not a regular file: an io error naming the
    // wheel, with its errno (Python: FileNotFoundError when missing).
    Result<Fd> in = try_open_regular(o.wheel);
    if (!in && in.error().sys_errno() == ENOENT)
      throw Error(Errc::io, o.wheel.string(), "wheel not found")
          .with_errno(ENOENT);
    if (!in) throw in.error();
    plan.push_back("input: " + o.wheel.string());
    return o.wheel;
  }
  if (o.source_dir.empty())
    throw Error(Errc::usage, driver,
                "a build command needs its source directory (--source)");
  plan.push_back(fmt::format(
      "build: sh -c '{}' in {}, then repair the "
      "wheel it writes under {}",
      o.build_command, o.source_dir.string(), dist_dir(o).string()));
  if (dry_run) return std::nullopt;
  fs::path wheel = build_wheel(o, env);
  plan.push_back("input: " + wheel.string() + " (built)");
  return wheel;
}

}  // namespace libpkg::driver::detail
