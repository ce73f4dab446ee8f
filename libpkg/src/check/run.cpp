// SPDX-License-Identifier: BSD-3-Clause
// check::run: open the package once, run every selected check over it, in
// report order; the old environment variables as an Expectation.
#include <fmt/format.h>

#include <algorithm>

#include "check/package.hpp"
#include "libpkg/base/error.hpp"
#include "libpkg/base/thread_pool.hpp"

namespace libpkg::check {

const char* artifact_kind_name(ArtifactKind kind) {
  switch (kind) {
    case ArtifactKind::wheel:
      return "wheel";
    case ArtifactKind::conda:
      return "conda";
    case ArtifactKind::libtorch_zip:
      return "libtorch_zip";
    case ArtifactKind::site_packages:
      return "site_packages";
    case ArtifactKind::python_package:
      return "python_package";
    case ArtifactKind::conda_tree:
      return "conda_tree";
    case ArtifactKind::libtorch_tree:
      return "libtorch_tree";
  }
  return "?";
}

const char* status_name(Status status) {
  switch (status) {
    case Status::pass:
      return "pass";
    case Status::fail:
      return "fail";
    case Status::skip:
      return "skip";
  }
  return "?";
}

const std::vector<std::string>& check_ids() {
  static const std::vector<std::string> ids = {"integrity",
                                               "cxx-abi",
                                               "symbol-versions",
                                               "dependencies",
                                               "rpath",
                                               "runtimes",
                                               "accelerator",
                                               "deployment-target",
                                               "code-signature",
                                               "import",
                                               "link",
                                               "link-wrong-abi",
                                               "gpu"};
  return ids;
}

std::size_t Report::count(Status status) const {
  return static_cast<std::size_t>(
      std::count_if(checks.begin(), checks.end(),
                    [&](const CheckResult& c) { return c.status == status; }));
}

const CheckResult* Report::find(std::string_view id) const {
  for (const auto& c : checks)
    if (c.id == id) return &c;
  return nullptr;
}

Expectation expectation_from_env(
    const std::function<std::optional<std::string>(const std::string&)>&
        getenv) {
  auto var = [&](const std::string& name)
      -> std::optional<std::pair<std::string, std::string>> {
    for (const std::string& n : {name, "MATRIX_" + name}) {
      auto v = getenv(n);
      if (v && !v->empty()) return std::pair{n, *v};
    }
    return std::nullopt;
  };
  Expectation e;
  if (auto cuda = var("DESIRED_CUDA")) {
    try {
      e.accelerator = config::parse_accelerator(cuda->second);
    } catch (const Error& err) {
      throw Error(Errc::usage, "", cuda->first + ": " + err.message());
    }
  }
  if (auto devtoolset = var("DESIRED_DEVTOOLSET"))
    e.cxx_abi = config::abi_from_devtoolset(devtoolset->second, e.accelerator);
  else if (e.accelerator &&
           e.accelerator->kind == config::AcceleratorKind::rocm)
    e.cxx_abi = abi::CxxAbi::cxx11;
  if (auto type = var("PACKAGE_TYPE")) e.package_type = type->second;
  return e;
}

namespace {

void validate_ids(const std::vector<std::string>& ids, const char* option) {
  for (const auto& id : ids)
    if (std::find(check_ids().begin(), check_ids().end(), id) ==
        check_ids().end())
      throw Error(Errc::usage, "",
                  fmt::format("{}: unknown check '{}' (checks: {})", option, id,
                              fmt::join(check_ids(), ", ")));
}

bool contains(const std::vector<std::string>& list, const std::string& id) {
  return std::find(list.begin(), list.end(), id) != list.end();
}

bool is_runtime_check(std::string_view id) {
  return id == "import" || id == "link" || id == "link-wrong-abi" ||
         id == "gpu";
}

// Checks that test what only ELF files or a loadable package have: on a
// Mach-O package they are "not applicable", with the reason, never passed.
const char* not_applicable_to_macho(std::string_view id) {
  if (id == "cxx-abi")
    return "not applicable to Mach-O: macOS builds use libc++, which has no "
           "_GLIBCXX_USE_CXX11_ABI dual ABI";
  if (id == "symbol-versions")
    return "not applicable to Mach-O: GLIBC/GLIBCXX symbol versions are "
           "ELF's (deployment-target checks minos against the tag)";
  if (id == "import" || id == "link" || id == "link-wrong-abi")
    return "not applicable: Mach-O binaries load only on macOS, not on this "
           "Linux machine";
  if (id == "gpu")
    return "not applicable: Mach-O binaries load only on macOS (which has no "
           "CUDA)";
  return nullptr;
}

using StaticFn = void (*)(const detail::Package&, const CheckOptions&,
                          CheckResult&);
using MachoPart = std::string (*)(const detail::Package&, CheckResult&);

// A check with an ELF half and a Mach-O half: both run on what the package
// has, one summary, failed when either found a problem.
void run_halves(StaticFn elf, MachoPart macho, const detail::Package& pkg,
                const CheckOptions& options, CheckResult& r) {
  if (pkg.machos.empty()) return elf(pkg, options, r);
  std::string elf_summary;
  if (!pkg.elfs.empty()) {
    elf(pkg, options, r);
    elf_summary = r.summary + "; ";
  }
  r.summary = elf_summary + macho(pkg, r);
  r.status = r.problems.empty() ? Status::pass : Status::fail;
}

}  // namespace

Report run(const std::filesystem::path& artifact, const CheckOptions& given) {
  // One pool for every step of the check (opening, reading, each check),
  // the caller's or one made here when it gives none.
  PoolRef pool(given.pool, given.threads);
  CheckOptions options = given;
  options.pool = pool.get();
  validate_ids(options.only, "--only");
  validate_ids(options.skip, "--skip");
  validate_ids(options.require, "--require");
  auto log = [&](const std::string& line) {
    if (options.log) options.log(line);
  };
  log(fmt::format("opening {}", artifact.string()));
  const detail::Package pkg = detail::open_package(artifact, options);
  log(fmt::format("{}: {} files, {} ELF files, {} Mach-O files",
                  artifact_kind_name(pkg.kind), pkg.files.size(),
                  pkg.elfs.size(), pkg.machos.size()));

  Report report;
  report.artifact = artifact;
  report.kind = pkg.kind;
  for (const auto& id : check_ids()) report.checks.push_back({id});
  auto result = [&](const char* id) -> CheckResult& {
    for (auto& c : report.checks)
      if (c.id == id) return c;
    throw std::logic_error(id);
  };
  auto wanted = [&](const std::string& id) -> const char* {
    if (!options.only.empty() && !contains(options.only, id))
      return "not selected (--only)";
    if (contains(options.skip, id)) return "skipped (--skip)";
    if (!options.runtime && is_runtime_check(id))
      return "runtime checks disabled (--no-runtime)";
    return nullptr;
  };
  struct Static {
    const char* id;
    StaticFn fn;
    MachoPart macho = nullptr;  // the Mach-O half, if any
  };
  const Static static_checks[] = {
      {"integrity", detail::check_integrity},
      {"cxx-abi", detail::check_cxx_abi},
      {"symbol-versions", detail::check_symbol_versions},
      {"dependencies", detail::check_dependencies,
       detail::check_macho_dependencies},
      {"rpath", detail::check_rpath, detail::check_macho_rpath},
      {"runtimes", detail::check_runtimes, detail::check_macho_runtimes},
      {"accelerator", detail::check_accelerator},
      {"deployment-target", detail::check_deployment_target},
      {"code-signature", detail::check_code_signature},
      {"import", detail::check_import},
  };
  // The ELF-only static checks have nothing to look at in a Mach-O only
  // package; the runtime ones (import, link, gpu) can't load a package that
  // carries any Mach-O binary here — a stray ELF file beside them (a Linux
  // helper tool in a macOS libtorch zip) must not make the link check
  // compile a host client against dylibs and pass without linking them.
  const bool macho_only = detail::macho_only(pkg);
  const bool loads_macho =
      std::any_of(pkg.machos.begin(), pkg.machos.end(),
                  [](const detail::MachoEntry& m) { return m.loadable; });
  auto not_applicable = [&](std::string_view id) -> const char* {
    const char* why = not_applicable_to_macho(id);
    return why && (is_runtime_check(id) ? loads_macho : macho_only) ? why
                                                                    : nullptr;
  };
  for (const auto& [id, fn, macho] : static_checks) {
    CheckResult& r = result(id);
    if (const char* why = wanted(id)) {
      r.summary = why;
      continue;
    }
    if (const char* why = not_applicable(id)) {
      r.summary = why;
      continue;
    }
    // Importing runs the package's code (.pth files, __init__): not when
    // its files already failed their RECORD / paths.json hashes.
    if (std::string_view(id) == "import" &&
        result("integrity").status == Status::fail) {
      r.summary =
          "not run: the integrity check failed (importing would run "
          "unverified code)";
      continue;
    }
    log(fmt::format("check {}", id));
    if (macho)
      run_halves(fn, macho, pkg, options, r);
    else
      fn(pkg, options, r);
  }
  CheckResult& link = result("link");
  CheckResult& wrong = result("link-wrong-abi");
  const char* why_link = wanted("link");
  const char* why_wrong = wanted("link-wrong-abi");
  // Set unless --only/--skip/--no-runtime already said why.
  if (!why_link) why_link = not_applicable("link");
  if (!why_wrong) why_wrong = not_applicable("link-wrong-abi");
  if (!why_link || !why_wrong) {
    log("check link");
    CheckResult link_out{"link"}, wrong_out{"link-wrong-abi"};
    detail::check_link(pkg, options, link_out, wrong_out);
    if (!why_link) link = std::move(link_out);
    if (!why_wrong) wrong = std::move(wrong_out);
  }
  if (why_link) link.summary = why_link;
  if (why_wrong) wrong.summary = why_wrong;
  const auto& accel = options.expect.accelerator;
  if (const char* why = wanted("gpu")) {
    result("gpu").summary = why;
  } else if (const char* why_gpu = not_applicable("gpu")) {
    result("gpu").summary = why_gpu;
  } else if (accel && accel->kind != config::AcceleratorKind::cuda) {
    // A CUDA runtime in a CPU build is the accelerator check's finding;
    // running it would only repeat it.
    result("gpu").summary =
        fmt::format("not a CUDA build (expected {})", accel->tag());
  } else {
    log("check gpu");
    detail::check_gpu(pkg, options, result("gpu"));
  }
  for (const auto& id : options.require) {
    CheckResult& r = result(id.c_str());
    if (r.status != Status::skip) continue;
    r.status = Status::fail;
    r.problems.push_back(
        {"", fmt::format("required (--require {}) but skipped: {}", id,
                         r.summary)});
    r.summary = "required, but " + r.summary;
  }
  return report;
}

}  // namespace libpkg::check
