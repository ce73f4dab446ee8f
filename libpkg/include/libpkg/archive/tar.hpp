// SPDX-License-Identifier: BSD-3-Clause
// Deterministic tar writing and safe tar reading (libarchive).
//
// Writing: members are written in the order given (callers sort) in pax
// "restricted" format, which is plain ustar unless a member needs a pax
// extended header (names longer than ustar allows, non-ASCII names, sizes of
// 8 GiB and more). That is what Python's tarfile (cph) and rattler produce and
// what every tar reader accepts. Owner and group are 0 with empty names and
// every member gets the same mtime, so the bytes depend only on the entry
// list. Content is streamed from ContentSources in bounded chunks.
//
// Outputs: an uncompressed stream to a sink; `.tar.bz2`, cut into bzip2
// blocks compressed in parallel with libbz2 and joined bit-exactly into one
// standard bzip2 stream (blocks of a large file's data can come from the
// chunk cache); and `.tar.zst`, compressed with libzstd directly so the
// frame header carries the uncompressed size (pledged; computed by a first
// pass that writes headers only) and so compression is multithreaded.
// zstd's multithreaded mode produces the same bytes for every worker count
// >= 1, but not the same as its single-threaded mode (0 workers), so we
// always use at least one worker: the output is independent of `threads`.
//
// Reading: TarReader iterates members of a tar (uncompressed, bzip2, gzip,
// xz or zstd, detected) from a file or from memory (a STORED zip member),
// enforcing TarLimits; extract_tar() writes them under a directory without
// ever writing outside it (see extract_tar).
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "libpkg/archive/source.hpp"
#include "libpkg/base/callbacks.hpp"
#include "libpkg/base/integers.hpp"
#include "libpkg/base/thread_pool_fwd.hpp"

namespace libpkg::archive {

class ChunkCache;

/// The kind of a tar member; the writer writes only file, directory and
/// symlink.
enum class TarKind { file, directory, symlink, hardlink, other };

/// The kind's name ("file", "directory", ...), for messages; never throws.
const char* tar_kind_name(TarKind kind);

/// One member to write.
struct TarEntry {
  std::string path;              // relative, '/'-separated, no trailing '/'
  TarKind kind = TarKind::file;  // file, directory or symlink
  unsigned mode = 0644;          // permission bits (masked to 07777)
  SourcePtr content;             // files only
  std::string link_target;       // symlinks only
};

/// What every written member shares: its mtime.
struct TarWriteOptions {
  i64 mtime = 0;  // unix seconds, for every member
};

/// How write_tar_zst compresses: level, workers, checksum, overlap and
/// progress.
struct ZstdOptions {
  int level = 19;        // 1..22 (levels above 19 use a large window)
  unsigned threads = 1;  // compression workers; 0 is treated as 1
  bool checksum = true;  // XXH64 content checksum in the frame
  // How much of the previous job's input each multithreaded job indexes
  // before compressing its own: zstd's ZSTD_c_overlapLog, 1 (none) .. 9 (a
  // whole window); 0 leaves zstd's default for the level (1/4 window at
  // levels 13-15, up to a whole window at 20+). Re-indexing that overlap
  // costs CPU every job (8 % of the total at level 15 on GB-sized CUDA
  // libraries, bench/RESULTS.md) for matches that reach back across a job
  // boundary, which gain little on large inputs.
  int overlap_log = 0;
  // Called on the compressing thread with the tar bytes handed to zstd so
  // far and the tar's total size: every 4 MiB and once at the end.
  ProgressFn progress;
  // Independent frames instead of one multithreaded frame: the tar is cut
  // into frames of at most zstd_frame_size(level) (a file of 8 MiB or more
  // starts a frame and gets frames of its own, so they depend only on its
  // bytes), each compressed single-threaded on the pool (`pool`, else
  // `threads` workers) and concatenated; the frames of those large files go
  // through `cache`. Same bytes for any thread count and with or without
  // the cache; overlap_log does not apply. Levels 1..19 only
  // (zstd_frames_supported): above, zstd's windows (32-128 MiB) outgrow the
  // frames.
  bool independent_frames = false;
  ThreadPool* pool = nullptr;
  std::shared_ptr<ChunkCache> cache;
};

/// Whether `level` can be written as independent frames (1..19); never
/// throws.
bool zstd_frames_supported(int level);
/// The largest frame of independent_frames at `level`: four of libzstd
/// 1.5's default windows for it (8, 16 or 32 MiB); never throws.
u64 zstd_frame_size(int level);
/// Upper bound of an independent-frames stream of a `tar_bytes` tar of
/// `entries` members at `level`; never throws.
u64 zstd_frames_bound(u64 tar_bytes, u64 entries, int level);

/// Receives consecutive pieces of a tar (or compressed tar) stream.
using TarSink = ByteSinkFn;

/// Exact size in bytes of the uncompressed tar write_tar() produces for these
/// entries (headers, padding and end blocks), without reading any content.
/// Throws Errc::usage for a file entry without content or a kind the writer
/// cannot write.
u64 tar_size(const std::vector<TarEntry>& entries,
             const TarWriteOptions& options = {});

/// Writes the uncompressed tar stream to `sink`. Throws libpkg::Error naming
/// `name` (used in messages) or the content source that failed.
/// Throws Errc::usage for an entry tar_size() refuses, Errc::io when libarchive
/// fails.
void write_tar(const std::vector<TarEntry>& entries,
               const TarWriteOptions& options, const TarSink& sink,
               const std::string& name = "<tar>");

/// How write_tar_bz2 compresses: level, workers and the chunk cache.
struct Bzip2Options {
  int level = 9;               // 1..9 (block size level x 100 kB)
  unsigned threads = 0;        // 0: one per core (when no pool is given)
  ThreadPool* pool = nullptr;  // the job's pool; null: own `threads`
  // Blocks of a large file's data (tar_bz2_write.cpp) are looked up here
  // before compressing and stored after; the output is the same bytes with
  // or without it. Null: none.
  std::shared_ptr<ChunkCache> cache;
};

/// `.tar.bz2` at `target` (atomically): the unblocked tar (headers, data,
/// two zero end blocks, no record padding) as one bzip2 stream whose blocks
/// are compressed in parallel; the bytes depend only on the entries, the
/// mtime and the level, never on the threads or the cache. Returns the
/// bytes written (a device or FIFO target keeps no size to read back).
/// Throws Errc::usage for a level outside 1..9, Errc::io when the target
/// cannot be written or libbz2 fails, and what write_tar() throws; the
/// target is untouched then.
u64 write_tar_bz2(const std::filesystem::path& target,
                  const std::vector<TarEntry>& entries,
                  const TarWriteOptions& options, const Bzip2Options& bzip2);

/// write_tar_bz2() at `level` on one worker per core, without a cache.
/// Throws as write_tar_bz2() does.
u64 write_tar_bz2(const std::filesystem::path& target,
                  const std::vector<TarEntry>& entries,
                  const TarWriteOptions& options, int level = 9);

/// `.tar.zst` at `target` (atomically); returns the uncompressed tar size.
/// Throws as the streaming overload does and Errc::io when the target cannot be
/// written; the target is untouched then.
u64 write_tar_zst(const std::filesystem::path& target,
                  const std::vector<TarEntry>& entries,
                  const TarWriteOptions& options, const ZstdOptions& zstd);

/// The same, streamed into `sink`: at most zstd_bound(tar_bytes) bytes
/// (zstd_frames_bound() with independent_frames).
/// `tar_bytes` must be tar_size(entries, options), which a caller bounding
/// the output has computed already (a mismatch is an error); `name` is used
/// in messages.
/// Throws Errc::usage for a level or overlap_log out of range, Errc::io on a
/// zstd failure or a tar_bytes mismatch, and what write_tar() throws.
void write_tar_zst(const std::vector<TarEntry>& entries,
                   const TarWriteOptions& options, const ZstdOptions& zstd,
                   u64 tar_bytes, const TarSink& sink, const std::string& name);

/// Upper bound of a zstd frame holding `bytes` of input (ZSTD_compressBound).
/// Never throws.
u64 zstd_bound(u64 bytes);

/// Bounds applied while reading untrusted tars.
struct TarLimits {
  u64 max_entries = 1u << 20;
  u64 max_total_size = u64{64} << 30;  // sum of member sizes
  u64 max_entry_size = u64{16} << 30;
  u64 max_name_length = 4096;
};

/// One member as TarReader::next() reads it.
struct TarMember {
  std::string path;  // as stored (extract_tar checks it)
  TarKind kind = TarKind::other;
  unsigned mode = 0;  // permission bits
  u64 size = 0;       // content size (files)
  i64 mtime = 0;
  std::string link_target;  // symlink target, or hardlink target path
};

/// A forward-only reader of a tar from a file, memory or a descriptor,
/// compression detected, TarLimits enforced.
class TarReader {
 public:
  /// Opens `path`; throws Errc::io when it cannot be opened or is not a regular
  /// file and Errc::format when it is not a readable (possibly compressed) tar.
  static TarReader open_file(const std::filesystem::path& path,
                             const TarLimits& limits = {});
  /// `data` must outlive the reader; `name` is used in error messages.
  /// Throws Errc::format when `data` is not a readable tar.
  static TarReader open_memory(std::span<const u8> data, std::string name,
                               const TarLimits& limits = {});
  /// Takes ownership of `fd` (closed with the reader; also on error) and
  /// reads from its start.
  /// Throws Errc::io when `fd` cannot be rewound and Errc::format when it is
  /// not a readable tar.
  static TarReader open_fd(int fd, std::string name,
                           const TarLimits& limits = {});
  /// Move-only: the reader owns its libarchive handle (and a descriptor from
  /// open_fd).
  TarReader(TarReader&&) noexcept;
  /// Move assignment; the handle this reader held is closed.
  TarReader& operator=(TarReader&&) noexcept;
  ~TarReader();

  /// The name errors call the archive; never throws.
  const std::string& name() const;
  /// Advances to the next member; false at the end. Throws Errc::format on
  /// corrupt data or when a limit is exceeded.
  bool next(TarMember& member);
  /// Streams the current member's content to `sink` in pieces of at most
  /// 1 MiB (call at most once per member; unread content is skipped).
  /// Throws Errc::usage without a current member, Errc::format for corrupt or
  /// truncated content or more than declared, and what `sink` throws.
  void read_data(const ByteSinkFn& sink);

 private:
  struct Impl;
  explicit TarReader(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

/// Which link members extract_tar() writes; a refused kind is Errc::format.
struct TarExtractOptions {
  bool allow_symlinks = true;
  bool allow_hardlinks = true;
};

/// What extract_tar() wrote: counts of files, directories, symlinks and
/// hardlinks and the content bytes.
struct TarExtractReport {
  u64 files = 0;
  u64 directories = 0;
  u64 symlinks = 0;
  u64 hardlinks = 0;
  u64 bytes = 0;
};

/// Extracts every remaining member of `reader` under `dir` (created if
/// missing; may already hold files, e.g. from another component of the same
/// package, which are never overwritten). Refused with Errc::format naming
/// the archive and member: absolute names, `..` segments, device nodes, FIFOs,
/// a member whose parent is a symlink, an existing file (O_EXCL), symlink
/// targets that are absolute, not in normal form (`..` only as a prefix) or
/// climb above the target, hardlinks to anything but an already extracted
/// regular file. Every path is opened component by component with
/// O_NOFOLLOW under directory fds, so nothing is ever written outside `dir`;
/// members before the refused one may already have been written. Modes are
/// kept (masked to 0777).
/// Throws Errc::io when `dir` cannot be created or a write fails.
TarExtractReport extract_tar(TarReader& reader,
                             const std::filesystem::path& dir,
                             const TarExtractOptions& options = {});

}  // namespace libpkg::archive
