// SPDX-License-Identifier: BSD-3-Clause
// Per-CUDA-version data (builder-scripts.md §2.5, §8.15, §8.31, §8.64):
// which libraries a wheel bundles, which of them keep their names, the
// pypi-CUDA RPATH list, and build settings. The built-in tables come from
// data/cuda/cuda.json (embedded at build time); a user file in the same
// format can replace or add versions.
//
// Versions up to 12.4 come from builder-scripts.md; 12.6, 12.8, 12.9 and
// 13.0 from cuda-current.md (PyTorch's current build_cuda.sh), with the
// directory each library comes from, the aarch64 additions, the PyPI-CUDA
// RPATH list, TORCH_CUDA_ARCH_LIST per architecture and the nvcc flags.
// A fact a version lacks is Errc::not_found with a hint to supply a table
// file.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "libpkg/config/accelerator.hpp"

namespace libpkg::config {

/// One library of a CUDA bundle list: where it is found and how it is bundled.
struct CudaLibrary {
  // Source path under the table's CUDA root (or the absolute path):
  // "/usr/local/cuda/lib64/libcudart.so.12".
  std::string path;
  // The name the table gives: the file name. Usually the DT_SONAME, but it
  // may be a link name whose SONAME is longer ("libnvrtc-builtins.so" →
  // "libnvrtc-builtins.so.13.0"); table_name_matches is the one rule.
  std::string soname;
  bool keep_name = false;  // dlopened by name: never hash-renamed
  // Empty: always bundled. "cusparselt": only with USE_CUSPARSELT=1.
  std::string condition;
  // The directory as the table writes it: relative ("lib64",
  // "extras/CUPTI/lib64") to a CUDA root, or absolute ("/usr/lib64").
  std::string dir;
  // Tried after `dir` (toolkits that keep CUPTI in lib64).
  std::vector<std::string> fallback_dirs;
  bool optional = false;  // bundled when present (ACL, NVPL)
  std::string arch;       // "" = every architecture, else "aarch64", …
  std::string source;     // the rule's provenance
  std::string keep_rule;  // the keep-name pattern that matched, if any

  /// The file name ("libnvrtc-builtins.so").
  std::string file_name() const;
};

/// The one name rule of the tables: `table_name` (a table entry's file
/// name) names a library whose DT_SONAME is `soname` when they are equal or
/// the SONAME is the name plus a version suffix ("libnvrtc-builtins.so" and
/// "libnvrtc-builtins.so.13.0"; not "libnvrtc-builtins.alt.so.13.0"). The
/// drivers, the keep-name rules and check_binary --expect-table all use it.
bool table_name_matches(std::string_view table_name, std::string_view soname);

/// Everything the tables say about one CUDA version: the bundle list,
/// name-keeping rules, pypi-CUDA settings, arch lists and build settings.
struct CudaTable {
  std::string version;  // "12.4"
  // nullopt: the bundle list for this version is not known.
  std::optional<std::vector<CudaLibrary>> libraries;
  // Name patterns (fnmatch) of libraries that keep their names.
  std::vector<std::string> keep_name_patterns;
  // pypi-CUDA mode: "$ORIGIN/../../nvidia/<x>/lib" entries, in order.
  std::vector<std::string> pypi_rpath;
  std::string pypi_rpath_source;
  // Other libraries (fnmatch globs) the nvidia-* wheels provide in
  // pypi-CUDA mode (libnccl.so.*): excluded from bundling there.
  std::vector<std::string> pypi_provides;
  std::string pypi_provides_source;
  // A single list (old tables) applies to every architecture.
  std::optional<std::string> torch_cuda_arch_list;
  // Per architecture ("x86_64", "aarch64"); libtorch overrides (12.9).
  std::vector<std::pair<std::string, std::string>> arch_lists;
  std::vector<std::pair<std::string, std::string>> libtorch_arch_lists;
  std::string arch_list_source;
  std::string nvcc_flags;  // TORCH_NVCC_FLAGS
  // Other build settings (USE_CUPTI_SO=1, …), sorted by name.
  std::vector<std::pair<std::string, std::string>> build_env;
  std::string cuda_root = "/usr/local/cuda";
  // The manylinux policy a CUDA wheel of an architecture targets when the
  // driver is left on "auto" (aarch64: manylinux_2_28_aarch64).
  std::vector<std::pair<std::string, std::string>> platforms;
  std::string platforms_source;
  std::string keep_names_source;
  bool bundle_ptxas = false;  // BUILD_BUNDLE_PTXAS=1
  bool static_cudnn = false;  // USE_STATIC_CUDNN=1 (CUDA ≤ 10.2)
  std::string note;           // provenance

  /// The bundle list (every architecture's entries); Errc::not_found when
  /// unknown for this version.
  const std::vector<CudaLibrary>& bundled() const;
  /// The entries for one architecture ("x86_64", "aarch64"; "" = x86_64).
  std::vector<CudaLibrary> bundled_for(std::string_view arch) const;
  /// The arch list; Errc::not_found when unknown.
  const std::string& arch_list() const;
  /// TORCH_CUDA_ARCH_LIST for an architecture (and the libtorch override
  /// when `libtorch`); Errc::not_found naming the architectures known.
  const std::string& arch_list(std::string_view arch,
                               bool libtorch = false) const;
  /// pypi_rpath joined with ':' (CUDA_RPATHS of build_cuda.sh).
  std::string pypi_rpath_string() const;
  /// Whether a library file name keeps its name (matches a pattern).
  bool keeps_name(std::string_view file_name) const;
};

/// The CUDA tables, one per version.
class CudaTables {
 public:
  /// The embedded tables (parsed once; thread-safe).
  static const CudaTables& builtin();
  /// A table file (Errc::io if unreadable, Errc::format naming the file and
  /// the entry when malformed).
  static CudaTables load(const std::filesystem::path& file);
  /// Tables from JSON text (`origin` names it in errors); throws Errc::format
  /// naming `origin` and the entry when malformed.
  static CudaTables parse(std::string_view json_text,
                          const std::string& origin);

  /// Entries of `other` replace same-version entries here; new ones are
  /// added.
  CudaTables overlaid(const CudaTables& other) const;

  /// By major.minor (a patch level is ignored). Errc::usage for a non-CUDA
  /// accelerator; Errc::not_found naming the known versions otherwise.
  const CudaTable& find(const Accelerator& accel) const;
  /// Every table, in file order.
  const std::vector<CudaTable>& tables() const { return tables_; }
  /// The versions of the tables ("12.4", ...), in file order.
  std::vector<std::string> versions() const;

 private:
  std::vector<CudaTable> tables_;
};

/// CudaTables::builtin().find(accel).
const CudaTable& cuda_table(const Accelerator& accel);

}  // namespace libpkg::config
