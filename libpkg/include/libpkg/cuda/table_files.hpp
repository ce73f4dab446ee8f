// SPDX-License-Identifier: BSD-3-Clause
// Finding a CUDA table's libraries on disk, for every consumer at once.
//
// The old script copied each file with its own `cp` and stopped at the
// first one missing, so a toolkit lacking five libraries took five builds
// to learn it. Here every entry is looked up first (its table directory
// under each CUDA root, then its fallback directories), each found file's
// DT_SONAME is read and held to the table's name rule
// (config::table_name_matches), and what is missing is reported in one
// error naming every file and every place it was looked for.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "libpkg/config/cuda_table.hpp"

namespace libpkg::cuda {

/// One table entry found on disk: where, and under which SONAME.
struct TableFile {
  config::CudaLibrary entry;
  std::filesystem::path path;  // where it was found
  std::string soname;          // its DT_SONAME (the file name if it has none)
  bool from_fallback = false;  // found in a fallback directory
};

/// The table entries found on disk, and the optional ones that are absent with
/// the places looked at.
struct TableFiles {
  std::vector<TableFile> found;
  // Optional entries (ACL, NVPL) not present: the entry and where looked.
  std::vector<std::pair<config::CudaLibrary, std::vector<std::string>>>
      absent_optional;
};

/// The places `lib` is looked for, in order: for each directory (the
/// table's, then its fallbacks) the directory under each root when
/// relative; when absolute, under each root that is not the table's own
/// CUDA root, then as written (a stand-in root can hold /usr/lib64 too).
/// `roots` empty = {table.cuda_root}.
std::vector<std::filesystem::path> candidate_paths(
    const config::CudaTable& table, const config::CudaLibrary& lib,
    const std::vector<std::filesystem::path>& roots);

/// One library: the first candidate path holding it, and every place
/// looked at (with why a file there was passed over).
struct Located {
  std::optional<TableFile> file;
  std::vector<std::string> tried;
};
/// Finds `lib` (see Located) on the first candidate path that holds a regular
/// ELF file of `elf_machine` (0: any) whose SONAME matches; does not throw for
/// a file it cannot read: it is passed over with the reason.
Located locate_table_file(const config::CudaTable& table,
                          const config::CudaLibrary& lib,
                          const std::vector<std::filesystem::path>& roots,
                          unsigned elf_machine = 0);

/// Every library of `libs` (entries of `table`) on disk. A file of the
/// wrong machine (`elf_machine`, e.g. EM_AARCH64; 0 = any) or whose SONAME
/// the name rule does not accept is passed over and said so. Errc::not_found
/// naming the table when any required entry is missing: one message listing
/// each missing file and the paths tried.
TableFiles find_table_files(const config::CudaTable& table,
                            const std::vector<config::CudaLibrary>& libs,
                            const std::vector<std::filesystem::path>& roots,
                            unsigned elf_machine = 0);

/// EM_* for a policy architecture name ("x86_64", "aarch64", …); 0 when
/// unknown.
unsigned elf_machine_of(std::string_view arch);

}  // namespace libpkg::cuda
