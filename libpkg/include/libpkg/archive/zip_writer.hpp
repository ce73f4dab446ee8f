// SPDX-License-Identifier: BSD-3-Clause
// Parallel, deterministic zip writer.
//
// Members are written in the order they are added (callers sort). Content is
// deflated on a thread pool with libdeflate; members larger than one chunk
// are split into fixed-size chunks compressed independently and joined into
// one deflate stream, so a single GB-sized library uses every core and memory
// stays bounded whatever the member sizes. Chunk boundaries depend only on
// the member size, so the output is byte-identical for any thread count.
// CRC-32 and SHA-256 (for wheel RECORD / conda paths.json) are computed in the
// same pass. Members copied from another archive keep their compressed bytes
// (no recompression). ZIP64 records are written only where needed (or always
// with force_zip64). The output appears atomically on commit().
//
// Pipeline: add*() queue members; flush()/commit() run on the calling
// thread, which writes members strictly in add order while the pool's T
// workers (ZipWriterOptions::threads) read, CRC and deflate chunks ahead of
// it, and take each member's SHA-256 chunk by chunk when the previous chunk
// is hashed (with the chunk cache, in one pass with the chunk's key); the
// writing thread hashes only the chunks no worker could (docs/archives.md,
// "Same pass"). Memory bound: a chunk job of more than 64 KiB takes one of the
// writer's full-size slots (input buffer of chunk_size, output buffer of
// libdeflate's bound + 6); at most 2 * T such jobs are in flight and the
// writing thread holds one more slot while it writes, so these
// buffers peak at (2T + 1) * (2 * chunk_size + 8 KiB) whatever the member
// sizes and their order (8 MiB chunks: 48 MiB at T = 1, 80 MiB at T = 2).
// Jobs of 64 KiB or less (small members) allocate their own buffers and are
// admitted by count (<= 8 * T + 8 jobs: <= (T + 1) MiB). Add per worker
// about 2 MiB (a libdeflate compressor per level, the joining pass's zlib
// state and scratch, the stack). tests/archive/writer_peak_rss.sh checks
// this bound on 300 MiB members at -j1 and -j2; measured whole-process
// peaks: docs/archives.md. What a queued member holds (its source, name and
// attributes) is kept only until it is written: once kMaxQueued members
// wait, the add*() that queued the last one writes them, so an archive of
// many small files holds per member only its name checks, its central
// directory record and its result (writer_peak_rss: 70 000 files).
//
// Members larger than chunk_size are deflated as independent chunks joined
// into one stream (deflate_chunk.hpp); members not made smaller by deflate
// are rewritten stored (store_if_not_smaller). Local headers carry the final
// CRC and sizes (rewritten in place after the data; no data descriptors);
// ZIP64 policy: see writer_records.hpp.
#pragma once

#include <array>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "libpkg/archive/chunk_cache.hpp"
#include "libpkg/archive/source.hpp"
#include "libpkg/archive/zip_reader.hpp"
#include "libpkg/base/callbacks.hpp"
#include "libpkg/base/integers.hpp"
#include "libpkg/base/thread_pool_fwd.hpp"

namespace libpkg::archive {

/// How a ZipWriter compresses, stamps and schedules members, and the chunk
/// cache it may use.
struct ZipWriterOptions {
  unsigned threads = 0;        // 0: one per core
  ThreadPool* pool = nullptr;  // the job's pool; null: own `threads`
  int level = 6;  // 0 (store) .. 9; libdeflate levels 10-12 accepted
  // Store a member when deflate does not make it smaller.
  bool store_if_not_smaller = true;
  // Timestamp (unix seconds) for every member, clipped to 1980-01-01; e.g.
  // SOURCE_DATE_EPOCH. Unset: each member's own mtime (ZipMemberAttrs).
  std::optional<i64> timestamp;
  bool force_zip64 = false;
  // Chunk size for splitting large members (tests use small values).
  u64 chunk_size = u64{8} << 20;
  // Called from the writing thread with bytes of input consumed so far.
  ProgressFn progress;
  // Deflated chunks of members of at least chunk_size bytes are looked up
  // here before compressing, and stored after (chunk_cache.hpp); the output
  // is the same bytes with or without it. Shared: one cache may serve
  // several writers, its counters add up. Null: no cache.
  std::shared_ptr<ChunkCache> cache;
};

/// A member's permission bits, mtime and (optional) deflate level.
struct ZipMemberAttrs {
  unsigned mode = 0644;   // permission bits; the file type comes from the kind
  i64 mtime = 315532800;  // 1980-01-01T00:00:00Z
  std::optional<int> level;  // overrides ZipWriterOptions::level
};

/// What was written for one member: sizes, CRC-32, method, whether copied raw
/// and its SHA-256.
struct ZipMemberResult {
  std::string name;
  u64 size = 0;  // uncompressed
  u64 compressed_size = 0;
  u32 crc32 = 0;
  u16 method = 0;
  bool copied_raw = false;
  // SHA-256 of the uncompressed content; unset for raw copies (their content
  // was not read) unless the caller supplied it.
  std::optional<std::array<u8, 32>> sha256;
  // Written by splicing an edited member (ContentSource::member_edit()),
  // and how many of its compressed bytes are the input's, re-used.
  bool spliced = false;
  u64 reused = 0;
};

/// The writer described above: add*() queue members, flush() and commit() write
/// them; after a throw the archive is abandoned and the target left untouched.
class ZipWriter {
 public:
  /// Members queued before an add*() writes them (bounds per-member memory).
  static constexpr std::size_t kMaxQueued = 4096;
  /// Creates a temporary file beside `target`; throws Errc::usage for
  /// chunk_size 0 or a level outside 0..12, Errc::io when the temporary file
  /// cannot be created.
  ZipWriter(const std::filesystem::path& target, ZipWriterOptions options = {});
  ~ZipWriter();  // without commit(): the target is left untouched
  ZipWriter(const ZipWriter&) = delete;
  ZipWriter& operator=(const ZipWriter&) = delete;

  /// Queues a regular file member read from `content`; throws Errc::usage for a
  /// null source, a refused or duplicate name, or a writer that failed or
  /// committed. Content errors surface at flush()/commit(), or at the add*()
  /// that fills the queue (kMaxQueued members), which writes it.
  void add(std::string name, SourcePtr content, ZipMemberAttrs attrs = {});
  /// add() of file_source(`path`); also throws what file_source throws.
  void add_file(std::string name, const std::filesystem::path& path,
                ZipMemberAttrs attrs = {});
  /// add() of a copy of `bytes`; throws as add() does.
  void add_bytes(std::string name, std::string_view bytes,
                 ZipMemberAttrs attrs = {});
  /// Queues a directory member (stored, empty); throws Errc::usage as add()
  /// does.
  void add_directory(std::string name, ZipMemberAttrs attrs = {});
  /// Queues a symlink member whose stored content is `target`; throws
  /// Errc::usage as add() does and for a target the extractor would refuse
  /// (empty, NUL byte, too long).
  void add_symlink(std::string name, std::string target,
                   ZipMemberAttrs attrs = {});
  /// Copies `entry` of `source` verbatim (compressed bytes, CRC, sizes,
  /// method) under `name`. `source` must outlive commit(). The bytes come
  /// from the archive `source` validated (its descriptor, shared from here
  /// on, or its bytes for a from_bytes() reader), never from whatever file
  /// sits at its path by commit(). `sha256`, when the caller knows it (a
  /// verified RECORD row), is passed through to the result.
  /// Throws Errc::unsupported for an encrypted entry and Errc::usage as add()
  /// does.
  void add_raw(std::string name, const ZipReader& source, const ZipEntry& entry,
               ZipMemberAttrs attrs,
               std::optional<std::array<u8, 32>> sha256 = std::nullopt);
  /// The sink add_stream()'s `produce` writes the member's bytes through.
  using StreamSink = ByteSinkFn;
  /// A STORED member whose bytes `produce` writes through the sink it is
  /// given, straight into the archive: no temporary file, no second pass
  /// (a .conda's pkg-*.tar.zst is compressed directly into its place). Writes
  /// every member added before, then the member, on the calling thread.
  /// `max_size` bounds what `produce` writes; it decides ZIP64 for the member
  /// (the local header precedes the data) and writing more is an error. CRC-32
  /// is computed on the way; the result carries no SHA-256.
  /// Throws Errc::usage as add() does, and when `produce` writes more than
  /// `max_size`; whatever `produce` throws abandons the archive.
  void add_stream(std::string name, u64 max_size,
                  const std::function<void(const StreamSink&)>& produce,
                  ZipMemberAttrs attrs = {});

  /// Waits until every member added so far is written; results in add order.
  /// Throws Errc::usage on a failed or committed writer, Errc::io when a source
  /// changed or cannot be read or the output cannot be written,
  /// Errc::unsupported when a non-ZIP64 member outgrows 4 GiB.
  const std::vector<ZipMemberResult>& flush();
  /// Writes the central directory and end records and renames the file into
  /// place. Returns the results of all members.
  /// Throws as flush() does, and Errc::io when the rename fails.
  const std::vector<ZipMemberResult>& commit();
  /// commit(), then the finished archive copied to each of `copies` (each
  /// through an AtomicFile, mode 0644) from the descriptor it was written
  /// through, never by reopening the target's path: whatever another process
  /// puts at the target meanwhile is not what gets copied, and a target that
  /// is a device or FIFO (written into) still gives whole copies. Throws as
  /// commit() does, and Errc::io naming a copy that cannot be written.
  const std::vector<ZipMemberResult>& commit(
      const std::vector<std::filesystem::path>& copies);
  /// Bytes of the archive written (after commit: its whole size, also when
  /// the target was a device or FIFO that keeps no size of its own).
  /// Never throws.
  u64 size() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// SOURCE_DATE_EPOCH from the environment, for frontends (the library itself
/// reads no environment). Throws Errc::usage when set but not an integer.
std::optional<i64> source_date_epoch();

}  // namespace libpkg::archive
