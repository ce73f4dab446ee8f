// SPDX-License-Identifier: BSD-3-Clause
// A tar stream cut into segments that are compressed independently on the
// pool and joined in order: the bzip2 blocks of a .tar.bz2 and the zstd
// frames of a .conda's pkg-*.tar.zst. Private to the archive layer.
//
// Segment rule (both codecs; the codec's identity carries a rules version):
// the data of a file of at least kOwnSegmentsMin bytes starts a new segment
// and is cut into segments of its own, the last one ending with the file;
// everything else (headers, padding, smaller files, the end blocks) fills
// segments in stream order. The codec says how many bytes still fit the
// current segment. So a large file's segments depend only on its bytes: a
// CUDA library grafted into every configuration of a nightly gives the same
// segments each time, and those go through the chunk cache (looked up
// before compressing, stored after, a hit checked by decoding it). The
// bytes depend only on the tar and the codec, never on the thread count or
// the cache.
#pragma once

#include <deque>
#include <future>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "libpkg/archive/tar.hpp"
#include "libpkg/base/callbacks.hpp"
#include "libpkg/base/thread_pool.hpp"

namespace libpkg::archive {

// Files this large get segments of their own. Each such file costs up to
// two partly filled segments (the one before it, its last one); from 8 MiB
// on (the zip writer's cache threshold too) that is a small fraction of the
// file (docs/archives.md has the measurements).
inline constexpr u64 kOwnSegmentsMin = u64{8} << 20;

// What a compression format does to one segment.
class SegmentCodec {
 public:
  virtual ~SegmentCodec() = default;
  // How many leading bytes of `bytes` still fit the current segment; fewer
  // than all means it is full. Called on the writing thread.
  virtual size_t fit(std::span<const u8> bytes) = 0;
  // Starts a new, empty segment (writing thread).
  virtual void reset() = 0;
  // Compresses one segment into `out` (any thread; throws libpkg::Error).
  virtual void compress(std::span<const u8> input, std::vector<u8>& out,
                        const std::string& name) const = 0;
  // Whether `stored` is one well-formed compressed segment (any thread).
  virtual bool well_formed(std::span<const u8> stored) const = 0;
  // Whether `stored` decodes to exactly `input`: the check of a cache hit
  // (any thread).
  virtual bool decodes_to(std::span<const u8> stored,
                          std::span<const u8> input) const = 0;
  // The most bytes compress() can write for `input` bytes.
  virtual u64 capacity(u64 input) const = 0;
  // Names the encoder in cache keys (codec, library version, a fingerprint
  // of its output, rules version, level).
  virtual std::string identity() const = 0;
  // Appends a compressed segment to the output, in stream order (writing
  // thread).
  virtual void append(std::span<const u8> stored) = 0;
  // Ends the stream; returns the bytes written.
  virtual u64 finish() = 0;
};

class ChunkCache;

// Feeds a tar stream through `codec`; see the rule above. At most
// per_worker x (T + 1) segments (T workers) are being compressed or wait
// to be appended.
class SegmentWriter {
 public:
  SegmentWriter(SegmentCodec& codec, ThreadPool* pool, unsigned threads,
                ChunkCache* cache, std::string name, size_t per_worker = 2);
  ~SegmentWriter();
  SegmentWriter(const SegmentWriter&) = delete;
  SegmentWriter& operator=(const SegmentWriter&) = delete;

  // The next `size` bytes are one file's data.
  void before_data(u64 size);
  // The next bytes of the tar stream.
  void feed(std::span<const u8> bytes);
  // Compresses what is left and ends the stream; returns the bytes written.
  u64 finish();

 private:
  struct Result {
    std::vector<u8> input;  // handed back for the next segment
    std::vector<u8> stored;
  };
  static Result compress(const SegmentCodec& codec, std::vector<u8> input,
                         ChunkCache* cache, const std::string& name);
  void cut(bool cacheable);
  void retire();
  void drain() noexcept;

  SegmentCodec& codec_;
  PoolRef pool_;
  ChunkCache* cache_;
  std::string name_;
  size_t max_in_flight_;
  std::vector<u8> current_;
  std::vector<std::vector<u8>> spare_;
  std::deque<std::future<Result>> in_flight_;
  bool own_ = false;  // current_ holds a large file's data
  u64 own_left_ = 0;  // bytes of that data still to come
};

// Writes `entries` as the unblocked tar (write_tar_unblocked) through
// `writer`, then, when `blocked_size` is set (tar_size(): libarchive's
// default blocking), zeros up to that size, so the tar is byte for byte
// the one write_tar() makes; a stream longer than that is an error.
// `progress`, when set, gets the tar bytes fed so far and the total every
// 4 MiB and at the end. Returns writer.finish().
u64 write_tar_segments(const std::vector<TarEntry>& entries,
                       const TarWriteOptions& options, SegmentWriter& writer,
                       const std::string& name, u64 blocked_size = 0,
                       const ProgressFn& progress = {});

}  // namespace libpkg::archive
