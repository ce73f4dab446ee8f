// Per-CUDA-version data (builder-scripts.md §2.5, §8.15, §8.31, §8.64):
// which libraries a wheel bundles, which of them keep their names, the
// pypi-CUDA RPATH list, and build settings. The built-in tables come from
// data/cuda/cuda.json (embedded at build time); a user file in the same
// format can replace or add versions.
//
// Only facts the old scripts state are in the built-in file: versions
// without a documented bundle list (12.6, 12.8, 13.0) have an entry with
// no `libraries`, and no version has a TORCH_CUDA_ARCH_LIST. Asking for
// those is Errc::not_found with a hint to supply a table file.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "libpkg/config/accelerator.hpp"

namespace libpkg::config {

struct CudaLibrary {
  std::string path;    // source path: "/usr/local/cuda/lib64/libcudart.so.12"
  std::string soname;  // expected DT_SONAME (the NEEDED entry to rewrite)
  bool keep_name = false;  // dlopened by name: never hash-renamed
  // Empty: always bundled. "cusparselt": only with USE_CUSPARSELT=1.
  std::string condition;
};

struct CudaTable {
  std::string version;  // "12.4"
  // nullopt: the bundle list for this version is not known.
  std::optional<std::vector<CudaLibrary>> libraries;
  // Name patterns (fnmatch) of libraries that keep their names.
  std::vector<std::string> keep_name_patterns;
  // pypi-CUDA mode: "$ORIGIN/../../nvidia/<x>/lib" entries, in order.
  std::vector<std::string> pypi_rpath;
  std::optional<std::string> torch_cuda_arch_list;
  bool bundle_ptxas = false;  // BUILD_BUNDLE_PTXAS=1
  bool static_cudnn = false;  // USE_STATIC_CUDNN=1 (CUDA ≤ 10.2)
  std::string note;           // provenance

  // The bundle list; Errc::not_found when unknown for this version.
  const std::vector<CudaLibrary>& bundled() const;
  // The arch list; Errc::not_found when unknown.
  const std::string& arch_list() const;
  // pypi_rpath joined with ':' (CUDA_RPATHS of build_cuda.sh).
  std::string pypi_rpath_string() const;
  // Whether a library file name keeps its name (matches a pattern).
  bool keeps_name(std::string_view file_name) const;
};

class CudaTables {
 public:
  // The embedded tables (parsed once; thread-safe).
  static const CudaTables& builtin();
  // A table file (Errc::io if unreadable, Errc::format naming the file and
  // the entry when malformed).
  static CudaTables load(const std::filesystem::path& file);
  static CudaTables parse(std::string_view json_text,
                          const std::string& origin);

  // Entries of `other` replace same-version entries here; new ones are
  // added.
  CudaTables overlaid(const CudaTables& other) const;

  // By major.minor (a patch level is ignored). Errc::usage for a non-CUDA
  // accelerator; Errc::not_found naming the known versions otherwise.
  const CudaTable& find(const Accelerator& accel) const;
  const std::vector<CudaTable>& tables() const { return tables_; }
  std::vector<std::string> versions() const;

 private:
  std::vector<CudaTable> tables_;
};

// CudaTables::builtin().find(accel).
const CudaTable& cuda_table(const Accelerator& accel);

}  // namespace libpkg::config
