// SPDX-License-Identifier: BSD-3-Clause
// Assembling and checking libtorch-style C++ zip distributions.
//
// Layout (builder-scripts.md §2.3): one root directory `libtorch/` holding
// lib/, include/, share/, bin/ (kept even when empty), `build-version` (the
// release version) and `build-hash` (the source commit), each one line. The
// zip goes through the parallel, deterministic zip writer; the `-latest`
// copies are byte copies made inside the kernel from the writer's own
// descriptor (ZipWriter::commit(copies)), never by reopening the zip's path.
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "libpkg/archive/chunk_cache.hpp"
#include "libpkg/archive/zip_reader.hpp"
#include "libpkg/base/callbacks.hpp"
#include "libpkg/base/thread_pool_fwd.hpp"
#include "libpkg/cppdist/naming.hpp"

namespace libpkg::cppdist {

/// How pack_libtorch names, compresses and stamps the libtorch zip.
struct LibtorchPackOptions {
  LibtorchName name;
  std::string build_hash;  // e.g. `git rev-parse HEAD` of the source tree
  int level = 6;
  unsigned threads = 0;        // 0: one per core
  ThreadPool* pool = nullptr;  // the job's pool; null: own `threads`
  // Member timestamps (e.g. SOURCE_DATE_EPOCH); unset: the files' mtimes.
  std::optional<i64> timestamp;
  bool write_latest = true;
  // Leave out top-level entries other than the layout directories (e.g. the
  // python/ of a combined install prefix) instead of refusing the tree.
  bool skip_other_entries = false;
  ProgressFn progress;
  // Deflated chunks of large members (archive::ZipWriterOptions::cache).
  std::shared_ptr<archive::ChunkCache> cache;
};

/// What pack_libtorch wrote: the zip, its -latest copies, counts and sizes, and
/// the entries it skipped.
struct LibtorchPackResult {
  std::filesystem::path zip;
  std::vector<std::filesystem::path> latest;
  u64 files = 0;
  u64 bytes = 0;     // uncompressed
  u64 zip_size = 0;  // the writer's own count of the bytes it wrote
  std::vector<u64> latest_sizes;  // bytes copied to each of `latest`
  std::vector<std::filesystem::path> skipped;  // see skip_other_entries
};

// The top-level directories of an install tree that make up the layout.
inline constexpr const char* kLibtorchDirs[] = {"lib", "include", "share",
                                                "bin"};

/// Packs `tree` (an install prefix with lib/ and include/, optionally share/
/// and bin/) into out_dir/zip_name(options.name). Refuses anything else at the
/// top level (unless skip_other_entries), special files, and symlinks that
/// point outside the tree (they would dangle or leak build-machine paths once
/// unzipped).
LibtorchPackResult pack_libtorch(const std::filesystem::path& tree,
                                 const std::filesystem::path& out_dir,
                                 const LibtorchPackOptions& options);

/// One layout problem check_libtorch_zip found, and the member it concerns.
struct LayoutProblem {
  std::string member;  // the member or path concerned ("" for the whole zip)
  std::string message;
};

/// Checks a libtorch zip's layout: every member under `libtorch/`, the four
/// directories present, lib/ not empty, build-version and build-hash one
/// non-empty line each, and build-version equal to the version in the file
/// name when the name follows the naming rules.
std::vector<LayoutProblem> check_libtorch_zip(const archive::ZipReader& zip);

}  // namespace libpkg::cppdist
