// SPDX-License-Identifier: BSD-3-Clause
// find_table_files: see cuda/table_files.hpp.
#include "libpkg/cuda/table_files.hpp"

#include <fmt/format.h>

#include <system_error>

#include "libpkg/base/error.hpp"
#include "libpkg/elf/format.hpp"
#include "libpkg/elf/view.hpp"

namespace fs = std::filesystem;

namespace libpkg::cuda {
namespace {

// "/usr/local/cuda/lib64" under the table's root → "lib64": a table
// written with absolute toolkit paths still follows a stand-in root.
std::string relative_to_root(const std::string& dir, const std::string& root) {
  if (dir == root) return ".";
  if (!root.empty() && dir.starts_with(root + "/"))
    return dir.substr(root.size() + 1);
  return dir;
}

struct Looked {
  std::vector<std::string> tried;  // "path" or "path (why not)"
};

// The file at `p` when it is the library the entry names; else nullopt
// with the reason added to `looked`.
std::optional<TableFile> accept(const config::CudaLibrary& lib,
                                const fs::path& p, unsigned machine,
                                Looked& looked) {
  std::error_code ec;
  const fs::file_status st = fs::status(p, ec);
  if (ec && ec != std::errc::no_such_file_or_directory &&
      ec != std::errc::not_a_directory)
    // A path that cannot even be looked at (EACCES on a directory, ELOOP)
    // is an error, not a place where the library is not.
    throw Error(Errc::io, p.string(), "cannot stat: " + ec.message())
        .with_errno(ec.value());
  if (!fs::is_regular_file(st)) {
    looked.tried.push_back(p.string());
    return std::nullopt;
  }
  try {
    elf::ElfFile f = elf::ElfFile::open(p);
    if (machine && f.machine() != machine) {
      looked.tried.push_back(
          fmt::format("{} (built for {})", p.string(), f.machine_name()));
      return std::nullopt;
    }
    auto so = f.soname();
    std::string soname = so ? std::string(*so) : lib.file_name();
    if (!config::table_name_matches(lib.soname, soname)) {
      looked.tried.push_back(fmt::format("{} (its SONAME {} is not {})",
                                         p.string(), soname, lib.soname));
      return std::nullopt;
    }
    return TableFile{lib, p, soname, false};
  } catch (const Error& e) {
    // Not an ELF file of this kind: passed over, the reason listed. A file
    // that is there but cannot be read is an error: reporting it among the
    // places "looked for" would hide why the table's library is missing.
    if (e.code() == Errc::io) throw;
    looked.tried.push_back(fmt::format("{} ({})", p.string(), e.message()));
    return std::nullopt;
  }
}

}  // namespace

unsigned elf_machine_of(std::string_view arch) {
  if (arch == "x86_64") return elf::EM_X86_64;
  if (arch == "aarch64") return elf::EM_AARCH64;
  if (arch == "i686") return elf::EM_386;
  if (arch == "ppc64le") return elf::EM_PPC64;
  if (arch == "s390x") return elf::EM_S390;
  return 0;
}

std::vector<fs::path> candidate_paths(const config::CudaTable& table,
                                      const config::CudaLibrary& lib,
                                      const std::vector<fs::path>& roots) {
  std::vector<fs::path> rs = roots;
  if (rs.empty()) rs.push_back(table.cuda_root);
  std::vector<std::string> dirs{lib.dir};
  dirs.insert(dirs.end(), lib.fallback_dirs.begin(), lib.fallback_dirs.end());
  const std::string name = lib.file_name();
  std::vector<fs::path> out;
  for (const auto& written : dirs) {
    const std::string dir = relative_to_root(written, table.cuda_root);
    if (dir.empty() || dir.front() != '/') {
      for (const auto& r : rs)
        out.push_back((r / dir / name).lexically_normal());
      continue;
    }
    for (const auto& r : rs)
      if (r != fs::path(table.cuda_root))
        out.push_back(r / fs::path(dir).relative_path() / name);
    out.push_back(fs::path(dir) / name);
  }
  return out;
}

Located locate_table_file(const config::CudaTable& table,
                          const config::CudaLibrary& lib,
                          const std::vector<fs::path>& roots,
                          unsigned elf_machine) {
  Looked looked;
  std::optional<TableFile> hit;
  const auto candidates = candidate_paths(table, lib, roots);
  config::CudaLibrary table_dir_only = lib;
  table_dir_only.fallback_dirs.clear();
  const std::size_t primary =
      candidate_paths(table, table_dir_only, roots).size();
  for (std::size_t i = 0; i < candidates.size() && !hit; ++i) {
    hit = accept(lib, candidates[i], elf_machine, looked);
    if (hit) hit->from_fallback = i >= primary;
  }
  return {std::move(hit), std::move(looked.tried)};
}

TableFiles find_table_files(const config::CudaTable& table,
                            const std::vector<config::CudaLibrary>& libs,
                            const std::vector<fs::path>& roots,
                            unsigned elf_machine) {
  TableFiles out;
  std::vector<std::string> missing;
  for (const auto& lib : libs) {
    Located here = locate_table_file(table, lib, roots, elf_machine);
    if (here.file) {
      out.found.push_back(std::move(*here.file));
    } else if (lib.optional) {
      out.absent_optional.emplace_back(lib, std::move(here.tried));
    } else {
      missing.push_back(fmt::format("{} (looked for {})", lib.file_name(),
                                    fmt::join(here.tried, ", ")));
    }
  }
  if (!missing.empty())
    throw Error(
        Errc::not_found, fmt::format("CUDA {} table", table.version),
        fmt::format("{} {} not on disk: {} (install them, add a "
                    "root with --cuda-root DIR, or give a table "
                    "file: --cuda-table FILE)",
                    missing.size(),
                    missing.size() == 1 ? "library is" : "libraries are",
                    fmt::join(missing, "; ")));
  return out;
}

}  // namespace libpkg::cuda
