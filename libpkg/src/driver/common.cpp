// SPDX-License-Identifier: BSD-3-Clause
#include "libpkg/driver/common.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sys/utsname.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <system_error>

#include "driver/common_repair.hpp"
#include "libpkg/base/error.hpp"
#include "libpkg/base/subprocess.hpp"

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
                  const std::filesystem::path& path, bool check,
                  std::optional<u64> written) {
  std::error_code ec;
  u64 size = written ? *written : std::filesystem::file_size(path, ec);
  summary.artifacts.push_back({std::move(role), path, ec ? 0 : size, check});
}

namespace {

bool contains(const std::vector<std::string>& list, std::string_view id) {
  return std::find(list.begin(), list.end(), id) != list.end();
}

// What promising an import check needs to know of an interpreter.
struct Interpreter {
  std::string version;    // dotted ("3.11", "3.13t"); "" when it can't run
  bool can_venv = false;  // venv and ensurepip importable (Debian splits
                          // them into python3.X-venv)
};

Interpreter probe_interpreter(const std::string& python) {
  RunOptions ro;
  ro.timeout_seconds = 60;
  RunResult r = run_process(
      {python, "-I", "-c",
       "import sys, sysconfig, importlib.util as u; print('%d.%d%s' % "
       "(sys.version_info[0], sys.version_info[1], 't' if "
       "sysconfig.get_config_var('Py_GIL_DISABLED') else '')); "
       "print(int(all(u.find_spec(m) for m in ('venv', 'ensurepip'))))"},
      ro);
  Interpreter out;
  if (!r.ok()) return out;
  auto nl = r.output.find('\n');
  if (nl == std::string::npos) return out;
  out.version = r.output.substr(0, nl);
  out.can_venv = r.output.compare(nl + 1, 1, "1") == 0;
  return out;
}

// The machine this process runs on, in the configuration's spelling.
std::string host_arch() {
  struct utsname u {};
  if (::uname(&u) != 0) return "";
  std::string m = u.machine;
  return m == "arm64" ? "aarch64" : m;
}

}  // namespace

Promises promised_checks(const config::BuildConfig& config,
                         const check::CheckOptions& options) {
  Promises p;
  p.python = options.python;
  if (!options.runtime) return p;
#ifndef __APPLE__
  // Mach-O binaries load only on macOS: the runtime checks skip here, so
  // promising one would fail every macOS build run on Linux.
  if (config.os == "macos") {
    p.notes.push_back(
        "runtime checks not promised: a macOS build's binaries load only on "
        "macOS, not on this machine");
    return p;
  }
#endif
  auto wanted = [&](std::string_view id) {
    return !contains(options.skip, id) &&
           (options.only.empty() || contains(options.only, id));
  };
  if (config.type == config::PackageType::libtorch && wanted("link"))
    p.require.push_back("link");
  const bool wheel = config.type == config::PackageType::manywheel ||
                     config.type == config::PackageType::wheel_macos;
  if (wheel && wanted("import")) {
    if (!config.python) {
      p.notes.push_back(
          "import not promised: the configuration names no Python version");
      return p;
    }
    // A wheel for another machine can't be installed here: the check skips
    // and nothing was promised.
    if (const std::string host = host_arch();
        config.os == "linux" && !host.empty() && config.arch != host) {
      p.notes.push_back(fmt::format(
          "import not promised: a {} wheel can't be installed on this {} "
          "machine",
          config.arch, host));
      return p;
    }
    const std::string want = config.python->dotted();
    std::vector<std::string> candidates{options.python};
    for (std::string c : {"python" + want, std::string("python3")})
      if (!contains(candidates, c)) candidates.push_back(c);
    for (const std::string& c : candidates) {
      Interpreter found = probe_interpreter(c);
      if (found.version != want) continue;
      if (!found.can_venv) {
        p.notes.push_back(fmt::format(
            "import not promised: {} (Python {}) can't create a venv "
            "(install python{}-venv)",
            c, want, want));
        return p;
      }
      p.python = c;
      p.require.push_back("import");
      return p;
    }
    p.notes.push_back(fmt::format(
        "import not promised: no Python {} interpreter for the wheel's {} tag "
        "({} not found or another version; pass --check-python)",
        want, config.python->abi_tag(), fmt::join(candidates, ", ")));
  }
  return p;
}

void check_artifacts(Summary& summary, const CommonOptions& options,
                     const check::Expectation& expect) {
  if (!options.run_checks || options.dry_run) return;
  check::CheckOptions co = options.check;
  co.expect = expect;
  Promises promises = promised_checks(options.config, co);
  co.python = promises.python;
  for (auto& id : promises.require)
    if (!contains(co.require, id)) co.require.push_back(id);
  if (!promises.require.empty())
    summary.notes.push_back(fmt::format("promised checks (--require): {}",
                                        fmt::join(promises.require, ", ")));
  for (auto& note : promises.notes) summary.notes.push_back(std::move(note));
  if (!co.cuda_tables) co.cuda_tables = options.cuda_tables;
  if (!co.threads) co.threads = options.threads;
  if (!co.pool) co.pool = options.pool;
  for (const auto& a : summary.artifacts) {
    if (!a.check) continue;
    if (options.log)
      options.log(fmt::format("checking {}", a.path.filename().string()));
    summary.checks.push_back(check::run(a.path, co));
  }
}

void Summary::record_cache(const CommonOptions& options) {
  if (options.cache) cache = options.cache->counters();
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
  if (cache)
    out += fmt::format(
        "chunk cache: {} hits, {} misses ({} corrupt), {:.1f} MB not "
        "recompressed\n",
        cache->hits, cache->misses, cache->corrupt,
        static_cast<double>(cache->bytes_saved) / 1e6);
  if (splice && splice->members > 0)
    out += fmt::format(
        "spliced: {} edited member{}, {:.1f} MB of the input's deflate data "
        "re-used\n",
        splice->members, splice->members == 1 ? "" : "s",
        static_cast<double>(splice->reused_bytes) / 1e6);
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
  // Lookups of the chunk cache during the job; null without a cache.
  j["cache"] =
      cache ? nlohmann::ordered_json{{"hits", cache->hits},
                                     {"misses", cache->misses},
                                     {"corrupt", cache->corrupt},
                                     {"bytes_saved", cache->bytes_saved},
                                     {"bytes_stored", cache->bytes_stored},
                                     {"tagged_hits", cache->tagged_hits},
                                     {"memo_hits", cache->memo_hits}}
            : nlohmann::ordered_json(nullptr);
  // Edited members written by splicing; null when no wheel was repaired.
  j["splice"] =
      splice ? nlohmann::ordered_json{{"members", splice->members},
                                      {"reused_bytes", splice->reused_bytes}}
             : nlohmann::ordered_json(nullptr);
  return j.dump(indent);
}

void add_lines(std::vector<std::string>& out, const std::string& text) {
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    if (end > start) out.push_back(text.substr(start, end - start));
    start = end + 1;
  }
}

namespace detail {

void write_and_check_wheel(
    Summary& s, const CommonOptions& o, const std::filesystem::path& input,
    const std::string& output_name, std::size_t grafts,
    const std::function<bundle::RepairResult(const bundle::ApplyOptions&)>&
        write,
    const CommonOptions& checks, const check::Expectation& expect) {
  namespace fs = std::filesystem;
  const fs::path out = o.out_dir / output_name;
  std::error_code ec;
  if (fs::exists(out, ec) && fs::equivalent(out, input, ec))
    throw Error(Errc::usage, out.string(),
                "the repaired wheel would replace the input; choose another "
                "output directory");
  if (o.log)
    o.log(fmt::format("bundling {} librar{}, writing {}", grafts,
                      grafts == 1 ? "y" : "ies", out.string()));
  bundle::ApplyOptions ap;
  ap.level = o.zip_level;
  ap.threads = o.threads;
  ap.pool = o.pool;
  ap.cache = o.cache;
  ap.timestamp = o.timestamp;
  ap.progress = o.progress;
  bundle::RepairResult result = write(ap);
  s.splice = Summary::Splice{result.spliced, result.spliced_reused_bytes};
  add_artifact(s, "wheel", result.path, /*check=*/true, result.size);
  check_artifacts(s, checks, expect);
}

}  // namespace detail

}  // namespace libpkg::driver
