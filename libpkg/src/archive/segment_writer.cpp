// SPDX-License-Identifier: BSD-3-Clause
#include "archive/segment_writer.hpp"

#include <libdeflate.h>

#include <utility>

#include "archive/tar_stream.hpp"
#include "libpkg/archive/chunk_cache.hpp"
#include "libpkg/base/error.hpp"

namespace libpkg::archive {

SegmentWriter::SegmentWriter(SegmentCodec& codec, ThreadPool* pool,
                             unsigned threads, ChunkCache* cache,
                             std::string name, size_t per_worker)
    : codec_(codec),
      pool_(pool, threads),
      cache_(cache),
      name_(std::move(name)),
      max_in_flight_(per_worker * (size_t{pool_.size()} + 1)) {}

SegmentWriter::~SegmentWriter() { drain(); }

SegmentWriter::Result SegmentWriter::compress(const SegmentCodec& codec,
                                              std::vector<u8> input,
                                              ChunkCache* cache,
                                              const std::string& name) {
  Result r;
  r.input = std::move(input);
  const std::span<const u8> in(r.input);
  bool hit = false;
  ChunkCache::Key key{};
  u32 crc = 0;
  if (cache != nullptr) {
    key = ChunkCache::key_for(codec.identity(), in);
    crc = libdeflate_crc32(0, in.data(), in.size());
    hit = cache->load(
        key, in, crc, codec.capacity(in.size()),
        [&codec](std::span<const u8> stored, std::span<const u8> plain) {
          return codec.decodes_to(stored, plain);
        },
        r.stored);
    if (hit) cache->count_saved(in.size());
  }
  if (!hit) {
    codec.compress(in, r.stored, name);
    // The cutter keeps every segment within what the codec writes as one
    // (for bzip2: libbz2's block limit), so this means the library cut
    // differently than documented: never a corrupt archive.
    if (!codec.well_formed(r.stored))
      throw Error(Errc::io, name,
                  "internal error: a " + std::to_string(in.size()) +
                      "-byte segment did not compress to one unit");
    if (cache != nullptr) cache->store(key, crc, r.stored);
  }
  return r;
}

void SegmentWriter::before_data(u64 size) {
  if (size < kOwnSegmentsMin) return;
  cut(false);
  own_ = true;
  own_left_ = size;
}

void SegmentWriter::feed(std::span<const u8> bytes) {
  while (!bytes.empty()) {
    std::span<const u8> piece = bytes;
    if (own_ && piece.size() > own_left_) piece = piece.first(own_left_);
    const size_t n = codec_.fit(piece);
    current_.insert(current_.end(), piece.begin(), piece.begin() + n);
    bytes = bytes.subspan(n);
    if (own_) own_left_ -= n;
    if (n < piece.size()) {
      cut(own_);  // the segment is full
    } else if (own_ && own_left_ == 0) {
      cut(true);  // the file's data ends its last segment
      own_ = false;
    }
  }
}

u64 SegmentWriter::finish() {
  cut(false);
  while (!in_flight_.empty()) retire();
  return codec_.finish();
}

void SegmentWriter::cut(bool cacheable) {
  if (current_.empty()) return;
  while (in_flight_.size() >= max_in_flight_) retire();
  ChunkCache* cache = cacheable ? cache_ : nullptr;
  in_flight_.push_back(
      pool_.submit([&codec = codec_, input = std::move(current_), cache,
                    name = name_]() mutable {
        return compress(codec, std::move(input), cache, name);
      }));
  current_.clear();
  if (!spare_.empty()) {
    current_ = std::move(spare_.back());
    spare_.pop_back();
  }
  codec_.reset();
}

void SegmentWriter::retire() {
  Result r = in_flight_.front().get();
  in_flight_.pop_front();
  codec_.append(r.stored);
  r.input.clear();
  spare_.push_back(std::move(r.input));
}

// The jobs use the codec, the cache and the pool: wait for every one
// before those go (after an error too).
void SegmentWriter::drain() noexcept {
  for (auto& f : in_flight_) {
    try {
      if (f.valid()) f.get();
    } catch (...) {
    }
  }
  in_flight_.clear();
}

u64 write_tar_segments(const std::vector<TarEntry>& entries,
                       const TarWriteOptions& options, SegmentWriter& writer,
                       const std::string& name, u64 blocked_size,
                       const ProgressFn& progress) {
  constexpr u64 kProgressStep = u64{4} << 20;
  u64 fed = 0, reported = 0;
  const u64 total = blocked_size;
  auto feed = [&](std::span<const u8> bytes) {
    writer.feed(bytes);
    fed += bytes.size();
    if (progress && fed - reported >= kProgressStep) {
      reported = fed;
      progress(fed, total);
    }
  };
  write_tar_unblocked(entries, options, feed, name,
                      [&writer](u64 size) { writer.before_data(size); });
  if (blocked_size != 0) {
    // Blocking pads the last record of 10240 bytes only.
    if (fed > blocked_size || blocked_size - fed >= 10240)
      throw Error(Errc::io, name,
                  "tar size changed between passes: expected " +
                      std::to_string(blocked_size) + ", wrote " +
                      std::to_string(fed));
    // libarchive's record padding, which write_tar() ends with.
    static const std::vector<u8> zeros(10240, 0);
    while (fed < blocked_size)
      feed(std::span(zeros).first(static_cast<size_t>(
          std::min<u64>(zeros.size(), blocked_size - fed))));
  }
  if (progress) progress(fed, total);
  return writer.finish();
}

}  // namespace libpkg::archive
