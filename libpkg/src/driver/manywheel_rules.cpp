// SPDX-License-Identifier: BSD-3-Clause
#include "driver/manywheel_rules.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "libpkg/base/error.hpp"
#include "libpkg/cuda/table_files.hpp"

namespace fs = std::filesystem;

namespace libpkg::driver::detail {
namespace {

const config::CudaTable& table_of(const ManywheelOptions& o) {
  const config::Accelerator& accel = o.common.config.accelerator;
  const std::string what = "CUDA " + accel.version();
  const std::string hint =
      "give a table file that lists the libraries to bundle (--cuda-table "
      "FILE, in the format of data/cuda/cuda.json)";
  const config::CudaTable* table = nullptr;
  try {
    table = &cuda_tables(o.common).find(accel);
  } catch (const Error& e) {
    if (e.code() != Errc::not_found) throw;
    throw Error(Errc::not_found, what, e.message() + "; " + hint);
  }
  if (!table->libraries)
    throw Error(
        Errc::not_found, what,
        "no list of libraries to bundle is known for this version; " + hint);
  return *table;
}

bool enabled(const ManywheelOptions& o, const config::CudaLibrary& lib) {
  return lib.condition.empty() || std::find(o.enable.begin(), o.enable.end(),
                                            lib.condition) != o.enable.end();
}

void check_conditions(const ManywheelOptions& o,
                      const config::CudaTable* table) {
  std::set<std::string> known;
  if (table)
    for (const auto& lib : table->bundled())
      if (!lib.condition.empty()) known.insert(lib.condition);
  for (const auto& c : o.enable) {
    if (known.count(c)) continue;
    throw Error(
        Errc::usage, c,
        table ? fmt::format("no library of the CUDA {} table has this "
                            "condition (conditions: {})",
                            table->version,
                            known.empty()
                                ? std::string("none")
                                : fmt::format("{}", fmt::join(known, ", ")))
              : fmt::format("conditions select libraries of the per-CUDA "
                            "table; a {} build has none",
                            o.common.config.accelerator.tag()));
  }
}

}  // namespace

BundleRules bundle_rules(const ManywheelOptions& o) {
  BundleRules r;
  r.keep_names = bundle::default_keep_names();
  for (const auto& k : o.keep_names) r.keep_names.push_back(k);
  if (o.common.config.accelerator.kind == config::AcceleratorKind::cuda)
    r.table = &table_of(o);
  check_conditions(o, r.table);
  if (!r.table) {
    if (o.pypi_cuda)
      throw Error(Errc::usage, o.common.config.accelerator.tag(),
                  "pypi-CUDA mode needs a CUDA build");
    return r;
  }
  const config::CudaTable& t = *r.table;
  const std::string origin = "CUDA " + t.version + " table";
  const std::string& arch = o.common.config.arch;
  for (const auto& p : t.keep_name_patterns) r.keep_names.push_back(p);
  std::vector<std::string> bundled, provided, skipped;
  std::vector<config::CudaLibrary> wanted;
  for (const auto& lib : t.bundled_for(arch)) {
    if (!enabled(o, lib)) {
      skipped.push_back(
          fmt::format("{} (needs --enable {})", lib.soname, lib.condition));
      continue;
    }
    // pypi-CUDA wheels depend on nvidia-* wheels for the unconditional
    // CUDA libraries; conditional ones (cusparseLt) and the architecture's
    // own additions (libgfortran, ACL, NVPL) are still bundled.
    if (o.pypi_cuda && lib.condition.empty() && lib.arch.empty()) {
      // The name rule: "libnvrtc-builtins.so" stands for its versioned
      // SONAMEs too.
      for (const auto& name : {lib.soname, lib.soname + ".*"}) {
        r.exclude.push_back(name);
        r.allow_external.push_back(name);
      }
      r.exclude.push_back(lib.path);
      provided.push_back(lib.soname);
      continue;
    }
    wanted.push_back(lib);
  }
  const cuda::TableFiles files = cuda::find_table_files(
      t, wanted, o.common.cuda_roots, cuda::elf_machine_of(arch));
  for (const auto& f : files.found) {
    const std::string path = f.path.string();
    r.include.push_back(path);
    r.include_rules.push_back({path, origin, /*rename=*/true});
    const bool keep = f.entry.keep_name || t.keeps_name(f.soname);
    if (keep) r.keep_names.push_back(f.soname);
    bundled.push_back(fmt::format(
        "{}{}{}", f.soname, keep ? " (keeps its name)" : "",
        f.from_fallback ? fmt::format(" from {}", path) : std::string()));
  }
  if (t.torch_cuda_arch_list || !t.arch_lists.empty())
    r.build_env.push_back("TORCH_CUDA_ARCH_LIST=" + t.arch_list(arch));
  if (!t.nvcc_flags.empty())
    r.build_env.push_back("TORCH_NVCC_FLAGS=" + t.nvcc_flags);
  for (const auto& [k, v] : t.build_env) r.build_env.push_back(k + "=" + v);
  if (!r.build_env.empty())
    r.plan.push_back(fmt::format("{}: build with {} ({})", origin,
                                 fmt::join(r.build_env, " "), arch));
  for (const auto& [a, policy] : t.platforms)
    if (a == arch && o.plat == "auto") {
      r.plat = policy;
      r.plan.push_back(fmt::format("{}: target {} on {} ({})", origin, policy,
                                   arch, t.platforms_source));
    }
  for (const auto& [lib, tried] : files.absent_optional)
    skipped.push_back(fmt::format("{} (optional, not present: {})",
                                  lib.file_name(), fmt::join(tried, ", ")));
  if (o.pypi_cuda) {
    for (const auto& glob : t.pypi_provides) {
      r.exclude.push_back(glob);
      r.allow_external.push_back(glob);
    }
    if (!t.pypi_provides.empty())
      r.plan.push_back(fmt::format(
          "pypi-CUDA: also from nvidia-* wheels: {} ({})",
          fmt::join(t.pypi_provides, ", "), t.pypi_provides_source));
    r.pypi_rpath = t.pypi_rpath;
    if (r.pypi_rpath.empty()) t.pypi_rpath_string();  // Errc::not_found
    r.plan.push_back(
        fmt::format("pypi-CUDA: {} from nvidia-* wheels, not bundled: {}",
                    origin, fmt::join(provided, ", ")));
  }
  if (!bundled.empty())
    r.plan.push_back(
        fmt::format("{}: bundle {}", origin, fmt::join(bundled, ", ")));
  if (!skipped.empty())
    r.plan.push_back(
        fmt::format("{}: skipped {}", origin, fmt::join(skipped, ", ")));
  return r;
}

std::vector<std::string> install_root_dirs(
    const std::vector<std::string>& entries, const std::string& lib_dir) {
  std::vector<std::string> out;
  for (const auto& entry : entries) {
    if (entry.starts_with("/")) {
      out.push_back(entry);
      continue;
    }
    std::string rest;
    for (std::string_view var : {"${ORIGIN}", "$ORIGIN"})
      if (entry.starts_with(var)) {
        rest = entry.substr(var.size());
        break;
      }
    const bool origin =
        entry.starts_with("$ORIGIN") || entry.starts_with("${ORIGIN}");
    if (!origin || (!rest.empty() && rest.front() != '/'))
      throw Error(Errc::usage, entry,
                  "a pypi RPATH entry must be absolute or start with "
                  "$ORIGIN/");
    fs::path dir =
        (fs::path(lib_dir) / fs::path(rest).relative_path()).lexically_normal();
    std::string d = dir.generic_string();
    while (d.size() > 1 && d.ends_with("/")) d.pop_back();
    if (d.starts_with("..") || d == ".")
      throw Error(Errc::usage, entry,
                  fmt::format("written for files of {}, this entry leaves "
                              "the install root (site-packages)",
                              lib_dir));
    out.push_back(d);
  }
  return out;
}

}  // namespace libpkg::driver::detail
