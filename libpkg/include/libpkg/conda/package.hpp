// SPDX-License-Identifier: BSD-3-Clause
// conda packages: pack a staged prefix, extract, transmute between the two
// formats, verify.
//
// `.conda` (v2): a STORED zip holding, in this order, metadata.json
// (`{"conda_pkg_format_version": 2}`), pkg-<stem>.tar.zst (everything outside
// info/) and info-<stem>.tar.zst (info/...). `.tar.bz2` (v1): one tar, info/
// members first, then the rest, each part sorted by path. Tar members are
// files, symlinks and empty directories (non-empty directories are implied,
// like conda-build), with uid/gid 0, no user names and one mtime (the
// timestamp), so the same inputs and timestamp give the same bytes for any
// thread count.
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "libpkg/archive/tar.hpp"
#include "libpkg/base/callbacks.hpp"
#include "libpkg/base/integers.hpp"
#include "libpkg/base/thread_pool_fwd.hpp"
#include "libpkg/conda/info.hpp"
#include "libpkg/conda/metadata.hpp"

namespace libpkg::conda {

/// The two conda package formats: `.conda` (zip of zstd tars) and the older
/// `.tar.bz2`.
enum class PackageFormat { conda, tar_bz2 };
/// The file extension of `format`, with its dot.
const char* package_extension(PackageFormat format);  // ".conda", ".tar.bz2"
/// From the file name; throws Errc::usage for anything else.
PackageFormat format_of(const std::filesystem::path& package);
/// The file name without its extension (`name-version-build`).
std::string stem_of(const std::filesystem::path& package);

/// How pack() builds packages: formats, compression levels, threads, the prefix
/// placeholder and the output directory.
struct PackOptions {
  std::vector<PackageFormat> formats{PackageFormat::conda};
  int zstd_level =
      19;  // zstd 1..22, as modern cph (rattler: 15, cph 2.0.1: 21)
  int bzip2_level = 9;
  unsigned threads = 0;        // 0: one per core (hashing and zstd workers)
  ThreadPool* pool = nullptr;  // the job's pool; null: own `threads`
  // Chunk cache for the zstd frames and bzip2 blocks of large files
  // (archive/tar.hpp: ZstdOptions, Bzip2Options); the bytes are the same
  // with or without it. Null: none.
  std::shared_ptr<archive::ChunkCache> cache;
  i64 timestamp_ms = 0;  // index.json timestamp; tar mtimes use its seconds
  // Build prefix searched for in every file (has_prefix / paths.json);
  // empty disables the search.
  std::string placeholder;
  std::filesystem::path out_dir = ".";
  // Byte progress of the .conda's pkg stream (tar bytes compressed / all),
  // on the calling thread; see archive::ZstdOptions::progress.
  ProgressFn progress;
};

/// What pack() wrote: the output paths, the paths.json rows and the bytes
/// written per output.
struct PackResult {
  std::vector<std::filesystem::path> outputs;  // in options.formats order
  std::vector<PathRecord> paths;               // as in info/paths.json
  // Bytes written per output: the size of a regular file, and what went
  // into a device or FIFO target (which has no size to read back).
  std::vector<u64> sizes;
};

/// Packs the tree at `prefix`. Files under prefix/info/ are shipped in the
/// info part (licenses, recipe, tests) but must not collide with generated
/// files. Throws Errc::usage/io (special files, unreadable files, collisions).
PackResult pack(const std::filesystem::path& prefix, const CondaMetadata& meta,
                const PackOptions& options);

/// Safe extraction of either format into `dest` (see archive::extract_tar),
/// which must be absent or an empty directory. Members are extracted into a
/// hidden sibling that is renamed to `dest` at the end (archive::
/// StagedTarget): after a refusal or a signal `dest` is as before. A deflated
/// component is inflated into an unnamed temporary file, never into memory.
void extract(const std::filesystem::path& package,
             const std::filesystem::path& dest);

/// Compression levels and worker threads for transmute().
struct TransmuteOptions {
  int zstd_level = 19;
  int bzip2_level = 9;
  unsigned threads = 0;
};

/// Rewrites `package` in the other format under `out_dir` with the same
/// members (content, mode, symlinks); tar mtimes become the index.json
/// timestamp. Returns the new file's path.
std::filesystem::path transmute(const std::filesystem::path& package,
                                const std::filesystem::path& out_dir,
                                PackageFormat to,
                                const TransmuteOptions& options = {});

/// One inconsistency verify() found, and the member or info file it concerns.
struct Finding {
  std::string where;  // member or info file concerned
  std::string message;
};

/// Checks a package against its own metadata: index.json (fields, name/
/// version/build vs the file name), paths.json vs the members (missing,
/// extra, type, size, sha256), info/files, metadata.json and member names of
/// a .conda. Malformed archives throw (Errc::format); everything else is a
/// finding. Empty result = package is consistent.
std::vector<Finding> verify(const std::filesystem::path& package);

/// Calls `fn` with a reader over each tar component of either format (the
/// .conda's pkg-*.tar.zst and info-*.tar.zst members, or the .tar.bz2
/// itself; `component` is the member name, "" for .tar.bz2), for readers
/// of the members that don't extract (`pkgtool diff`). Throws
/// Error(Errc::format) when a component lacks its bzip2/zstd magic or a
/// .conda has no such member, and whatever opening the archive throws.
void for_each_component(
    const std::filesystem::path& package,
    const std::function<void(archive::TarReader& reader,
                             const std::string& component)>& fn);

}  // namespace libpkg::conda
