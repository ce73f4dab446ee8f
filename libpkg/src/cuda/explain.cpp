// SPDX-License-Identifier: BSD-3-Clause
// explain_bundle: see cuda/explain.hpp.
#include "libpkg/cuda/explain.hpp"

#include <fmt/format.h>

#include "libpkg/base/error.hpp"
#include "libpkg/cuda/table_files.hpp"

namespace libpkg::cuda {
namespace {

std::string sourced(const std::string& text, const std::string& source) {
  return source.empty() ? text : fmt::format("{}  [{}]", text, source);
}

std::string naming(const config::CudaTable& t, const config::CudaLibrary& lib,
                   const std::string& soname) {
  std::string rule = lib.keep_rule;
  if (rule.empty() && t.keeps_name(soname)) rule = "matching " + soname;
  if (rule.empty()) return "renamed (sha256 prefix inserted)";
  return fmt::format(
      "keeps its name (rule {}{})", rule,
      t.keep_names_source.empty() ? std::string() : ": " + t.keep_names_source);
}

}  // namespace

std::vector<std::string> explain_bundle(
    const config::BuildConfig& c, const config::CudaTables& tables,
    const std::vector<std::filesystem::path>& roots) {
  const config::CudaTable& t = tables.find(c.accelerator);
  const bool libtorch = c.type == config::PackageType::libtorch;
  std::vector<std::string> out;
  out.push_back(sourced(fmt::format("CUDA {} table, {} {}", t.version,
                                    config::package_type_name(c.type), c.arch),
                        t.note));
  try {
    out.push_back(
        sourced("TORCH_CUDA_ARCH_LIST=" + t.arch_list(c.arch, libtorch),
                t.arch_list_source));
  } catch (const Error& e) {
    out.push_back("TORCH_CUDA_ARCH_LIST: " + e.message());
  }
  if (!t.nvcc_flags.empty()) out.push_back("TORCH_NVCC_FLAGS=" + t.nvcc_flags);
  for (const auto& [k, v] : t.build_env)
    out.push_back(fmt::format("{}={}", k, v));
  if (!t.libraries) {
    out.push_back("bundle: no list of libraries is known for this version");
  } else {
    const unsigned machine = elf_machine_of(c.arch);
    const auto libs = t.bundled_for(c.arch);
    std::vector<std::string> searched;
    for (const auto& r : roots) searched.push_back(r.string());
    if (searched.empty()) searched.push_back(t.cuda_root);
    out.push_back(fmt::format("bundle ({} entries, searched under {}):",
                              libs.size(), fmt::join(searched, ", ")));
    for (const auto& lib : libs) {
      std::string when;
      if (!lib.condition.empty())
        when = fmt::format(" only with --enable {};", lib.condition);
      if (lib.optional) when += " when present;";
      Located found = locate_table_file(t, lib, roots, machine);
      std::string where;
      if (found.file) {
        where = fmt::format(
            "from {}{}", found.file->path.string(),
            found.file->from_fallback
                ? fmt::format(" (fallback: the table says {})", lib.dir)
                : std::string());
        if (found.file->soname != lib.soname)
          where += fmt::format(", SONAME {}", found.file->soname);
      } else {
        where = fmt::format("NOT ON DISK (looked for {})",
                            fmt::join(found.tried, ", "));
      }
      const std::string soname = found.file ? found.file->soname : lib.soname;
      out.push_back(sourced(fmt::format("  {}:{} {}; {}", lib.file_name(), when,
                                        naming(t, lib, soname), where),
                            lib.source));
    }
  }
  if (!t.pypi_rpath.empty())
    out.push_back(sourced(
        fmt::format("PyPI-CUDA mode (--pypi-cuda): nothing above but the "
                    "conditional and {} additions is bundled; DT_RPATH {}",
                    c.arch, t.pypi_rpath_string()),
        t.pypi_rpath_source));
  if (!t.pypi_provides.empty())
    out.push_back(sourced(
        fmt::format("PyPI-CUDA mode: also provided by nvidia-* wheels, not "
                    "bundled: {}",
                    fmt::join(t.pypi_provides, ", ")),
        t.pypi_provides_source));
  return out;
}

}  // namespace libpkg::cuda
