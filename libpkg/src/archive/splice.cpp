// SPDX-License-Identifier: BSD-3-Clause
#include "archive/splice.hpp"

#include <fmt/format.h>
#include <libdeflate.h>
#include <zlib.h>

#include <chrono>
#include <deque>
#include <future>
#include <optional>

#include "archive/bit_sink.hpp"
#include "archive/cached_deflate.hpp"
#include "archive/reader_central.hpp"
#include "archive/reader_inflate.hpp"
#include "libpkg/base/error.hpp"
#include "libpkg/base/sha256.hpp"
#include "libpkg/base/thread_pool.hpp"

namespace libpkg::archive {
namespace {

using Mode = reader::MemberInflater::Mode;

constexpr u64 kWindow = 32 * 1024;  // deflate's back-reference reach
constexpr std::size_t kScanPiece = 256 * 1024;
constexpr std::size_t kFlushBits = 1 << 20;  // copied bytes held at most
// Block mode assumes a change every half chunk size so that the output has
// restart points about that far apart (its chunks then fit the chunk size
// and a later splice of it goes by chunks); never closer than this, which
// leaves most blocks to copy even with the tests' small chunks.
constexpr u64 kMinPeriod = 256 * 1024;

u32 crc_of(std::span<const u8> bytes) {
  return libdeflate_crc32(0, bytes.data(), bytes.size());
}

u32 crc_join(u32 first, u32 second, u64 second_len) {
  return static_cast<u32>(
      crc32_combine(first, second, static_cast<z_off_t>(second_len)));
}

[[noreturn]] void fail(const SpliceInput& in, const std::string& what) {
  throw Error(
      Errc::format, in.archive,
      fmt::format("{}: {}", reader::printable_name(in.entry->name), what),
      in.entry->data_offset);
}

void check_crc(const SpliceInput& in, u32 crc) {
  if (crc != in.entry->crc32)
    fail(in, fmt::format("CRC-32 mismatch: computed {:08x}, archive says "
                         "{:08x}",
                         crc, in.entry->crc32));
}

// The new content's CRC-32 and SHA-256, in order.
struct ContentHash {
  Sha256 sha;
  u32 crc = 0;
  void add(std::span<const u8> bytes) {
    sha.update(bytes);
    crc = crc_join(crc, crc_of(bytes), bytes.size());
  }
};

// deflate_chunk() through the cache when the writer would use it there.
void deflate_piece(const SpliceEnv& env, std::span<const u8> input, bool final,
                   const std::string& name, std::vector<u8>& out) {
  if (env.cache != nullptr)
    cached_deflate_chunk(*env.cache, *env.compressors, env.level, input,
                         crc_of(input), final, name, out);
  else
    deflate_chunk(*env.compressors, env.level, input, final, name, out);
}

// Waits for every future still pending (jobs refer to the caller's frame)
// when an error leaves early.
template <typename Queue>
struct DrainOnExit {
  Queue& queue;
  ~DrainOnExit() {
    for (auto& item : queue) {
      try {
        if (item.valid()) item.wait();
      } catch (...) {
      }
    }
  }
};

// --- by chunks ------------------------------------------------------------

bool chunks_fit(const ZipEntry& e, u64 chunk_size) {
  const auto& p = e.restart_points;
  if (p.empty() || !e.restart_error.empty()) return false;
  u64 prev = 0;
  for (const RestartPoint& r : p) {
    if (r.uncompressed - prev > chunk_size) return false;
    prev = r.uncompressed;
  }
  return e.uncompressed_size - prev <= chunk_size;
}

class ChunkSplicer {
 public:
  ChunkSplicer(const SpliceInput& in, const SpliceEnv& env,
               const ByteSink& write)
      : in_(in), env_(env), write_(write), edits_(*in.edits) {}

  SpliceResult run() {
    plan();
    std::deque<std::future<Done>> in_flight;
    DrainOnExit<std::deque<std::future<Done>>> guard{in_flight};
    for (std::size_t k = 0; k < tasks_.size(); ++k) {
      if (in_flight.size() >= std::max<std::size_t>(1, env_.window)) {
        finish(in_flight.front().get());
        in_flight.pop_front();
      }
      in_flight.push_back(
          submit(k));  // NOLINT: the guard waits for it on error
    }
    while (!in_flight.empty()) {
      finish(in_flight.front().get());
      in_flight.pop_front();
    }
    check_crc(in_, original_crc_);
    result_.crc32 = hash_.crc;
    result_.sha256 = hash_.sha.finish();
    result_.by_chunks = true;
    return std::move(result_);
  }

 private:
  struct Task {
    std::optional<std::size_t> decode;  // input chunk inflated (verified)
    bool copy = false;  // unchanged: its compressed bytes are the output
    u64 out_at = 0, out_len = 0;  // the new content this task produces
    bool final = false;
  };
  struct Done {
    std::size_t task = 0;
    ChunkBuffers buffers;  // input: new content; output: its deflate data
    u32 original_crc = 0;
    u64 original_len = 0;
  };

  u64 u(std::size_t i) const {
    const auto& p = in_.entry->restart_points;
    return i == 0 ? 0 : i <= p.size() ? p[i - 1].uncompressed : size();
  }
  u64 c(std::size_t i) const {
    const auto& p = in_.entry->restart_points;
    return i == 0 ? 0 : i <= p.size() ? p[i - 1].compressed : in_.raw.size();
  }
  u64 size() const { return in_.entry->uncompressed_size; }
  std::size_t chunks() const { return in_.entry->restart_points.size() + 1; }

  // Chunks before `tail` map one to one onto the output; from `tail` on
  // (a member that grows: its last chunk, which carries BFINAL; one that
  // shrinks: the chunk where it now ends) the new content is cut afresh
  // into pieces of the chunk size. Chunks past a shrunk end are still
  // inflated: the whole input is verified.
  void plan() {
    const u64 out_size = edits_.output_size();
    const std::size_t n = chunks();
    std::size_t tail = n;
    if (out_size > size()) {
      tail = n - 1;
    } else if (out_size < size()) {
      tail = 0;
      while (tail + 1 < n && u(tail + 1) < out_size) ++tail;
    }
    for (std::size_t i = 0; i < tail; ++i) {
      Task t;
      t.decode = i;
      t.out_at = u(i);
      t.out_len = u(i + 1) - u(i);
      t.copy = !edits_.changes(u(i), u(i + 1));
      t.final = i + 1 == n;
      tasks_.push_back(t);
    }
    if (tail == n) return;
    const u64 cut = env_.chunk_size;
    u64 at = u(tail);
    do {
      Task t;
      if (at == u(tail)) t.decode = tail;
      t.out_at = at;
      t.out_len = std::min(cut, out_size - at);
      at += t.out_len;
      t.final = at == out_size;
      tasks_.push_back(t);
    } while (at < out_size);
    for (std::size_t i = tail + 1; i < n; ++i) {
      Task t;
      t.decode = i;  // verified, nothing written
      tasks_.push_back(t);
    }
  }

  std::future<Done> submit(std::size_t k) {
    return env_.pool->submit([this, k] { return work(k); });
  }

  // On a worker: inflate (and verify) the input chunk, lay the edit over
  // it and deflate it unless it is copied.
  Done work(std::size_t k) const {
    const Task& t = tasks_[k];
    Done d;
    d.task = k;
    d.buffers = env_.slots->take();
    std::vector<u8>& content = d.buffers.input;
    u64 have = 0;
    if (t.decode) {
      const std::size_t i = *t.decode;
      content.resize(static_cast<std::size_t>(u(i + 1) - u(i)));
      reader::MemberInflater inflater(in_.archive, *in_.entry, in_.raw, false,
                                      Mode::checked, i);
      while (have < content.size()) {
        const std::size_t got =
            inflater.next(std::span<u8>(content).subspan(have));
        if (got == 0) break;
        have += got;
      }
      if (i + 1 == chunks()) inflater.next({});  // the end of the stream
      d.original_crc = crc_of(content);
      d.original_len = content.size();
    }
    if (t.copy) return d;  // content unchanged, nothing to compress
    const std::size_t keep =
        static_cast<std::size_t>(std::min<u64>(have, t.out_len));
    content.resize(static_cast<std::size_t>(t.out_len));
    if (keep < content.size())
      edits_.tail(t.out_at + keep, std::span<u8>(content).subspan(keep));
    edits_.patch(t.out_at, content);
    if (t.out_len > 0 || t.final)
      deflate_piece(env_, content, t.final, in_.entry->name, d.buffers.output);
    return d;
  }

  // On the writing thread, in order: hash, write, record the point.
  void finish(Done d) {
    const Task& t = tasks_[d.task];
    original_crc_ = crc_join(original_crc_, d.original_crc, d.original_len);
    const bool writes = t.out_len > 0 || t.final;
    if (writes) {
      std::span<const u8> content(d.buffers.input.data(),
                                  static_cast<std::size_t>(t.out_len));
      hash_.add(content);
      if (t.out_at > 0 && t.out_len > 0)
        result_.restart_points.push_back({t.out_at, result_.compressed_size});
      std::span<const u8> data;
      if (t.copy) {
        data = in_.raw.subspan(c(*t.decode), c(*t.decode + 1) - c(*t.decode));
        result_.reused += data.size();
      } else {
        data = d.buffers.output;
      }
      write_(data);
      result_.compressed_size += data.size();
      if (env_.progress) env_.progress(t.out_len);
    }
    if (t.decode && in_.release_input)
      reader::release_consumed(in_.raw.data(), released_, c(*t.decode + 1));
    env_.slots->give(std::move(d.buffers));
  }

  const SpliceInput& in_;
  const SpliceEnv& env_;
  const ByteSink& write_;
  const EditMap& edits_;
  std::vector<Task> tasks_;
  ContentHash hash_;
  u32 original_crc_ = 0;
  u64 released_ = 0;  // input dropped from the mapping (release_consumed)
  SpliceResult result_;
};

// --- by blocks ------------------------------------------------------------

class BlockSplicer {
 public:
  BlockSplicer(const SpliceInput& in, const SpliceEnv& env,
               const ByteSink& write)
      : in_(in),
        env_(env),
        write_(write),
        edits_(*in.edits),
        period_(std::max<u64>(env.chunk_size / 2, kMinPeriod)),
        max_fresh_(std::max<std::size_t>(1, env.window - 1)) {}

  SpliceResult run() {
    DrainOnExit<std::deque<Segment>> guard{queue_};
    reader::MemberInflater inflater(in_.archive, *in_.entry, in_.raw,
                                    in_.release_input, Mode::blocks);
    pending_ = env_.slots->take();
    std::vector<u8> scan(kScanPiece);
    start_block(0, 0);
    for (;;) {
      const auto piece = inflater.next_piece(scan);
      if (piece.got > 0)
        bytes(inflater.produced() - piece.got,
              std::span<const u8>(scan).first(piece.got));
      if (piece.boundary) {
        end_block(piece.bit, inflater.produced(), piece.final_block);
        if (!piece.final_block) start_block(piece.bit, inflater.produced());
      }
      if (piece.done) break;
    }
    env_.slots->give(std::move(pending_));
    finish_stream();
    result_.crc32 = hash_.crc;
    result_.sha256 = hash_.sha.finish();
    result_.restart_points = points();
    return std::move(result_);
  }

 private:
  // What goes to the output, in order: bytes ready, or a fresh piece
  // being deflated on the pool.
  struct Segment {
    std::vector<u8> bytes;
    std::future<ChunkBuffers> fresh;
    bool is_fresh = false;
    std::optional<u64> point;  // a candidate restart point starts here
    std::size_t run = 0;
    bool valid() const { return fresh.valid(); }
    void wait() const { fresh.wait(); }
  };
  struct Run {
    u64 begin = 0, end = 0;
    bool to_end = false;  // runs to the end of the member
  };

  // A change, real or assumed, in [b, e)? The assumed ones cover 32 KiB
  // from every multiple of `period_`, so the fresh span made there (a
  // restart point) is at least a window long whatever kind of blocks
  // follow it.
  bool touched(u64 b, u64 e) const {
    if (edits_.changes(b, e)) return true;
    if (edits_.output_size() <= period_ || b >= e) return false;
    const u64 k = b / period_;
    if (k >= 1 && b < k * period_ + kWindow) return true;
    const u64 next = (k + 1) * period_;
    return next < e && next < edits_.output_size();
  }

  void start_block(u64 bit, u64 at) {
    b0_ = bit;
    u0_ = at;
    dirty_ = false;
    const auto bit_at = [&](u64 i) {
      return (in_.raw[static_cast<std::size_t>(i / 8)] >> (i % 8)) & 1;
    };
    if ((bit + 2) / 8 >= in_.raw.size())
      fail(in_, "compressed data ends inside a block header");
    stored_ = bit_at(bit + 1) == 0 && bit_at(bit + 2) == 0;
    // A stored block refers to nothing before it; a Huffman block may
    // reach 32 KiB back.
    lo_ = stored_ ? at : at < kWindow ? 0 : at - kWindow;
  }

  // Decoded bytes of the current block, at member offset `at`.
  void bytes(u64 at, std::span<const u8> original) {
    hash(at, original);
    if (!dirty_ && (touched(lo_, at + original.size()) ||
                    pending_.input.size() + original.size() > env_.chunk_size))
      become_dirty();
    if (dirty_)
      fresh(at, original);
    else
      pending_.input.insert(pending_.input.end(), original.begin(),
                            original.end());
  }

  void hash(u64 at, std::span<const u8> original) {
    if (!edits_.changes(at, at + original.size())) {
      hash_.add(original);
    } else {
      edits_.edited(at, original, scratch_);
      hash_.add(scratch_);
    }
    if (env_.progress) env_.progress(original.size());
  }

  void become_dirty() {
    dirty_ = true;
    if (!in_run_) start_run(u0_);
    // Unchanged so far: the pending bytes are already the new content.
    fresh(u0_, pending_.input);
    pending_.input.clear();
  }

  void end_block(u64 bit, u64 at, bool final) {
    // An empty block checks its window here; the input's last block is
    // rewritten when the member shrinks (the new end needs a final block).
    if (!dirty_ && ((lo_ < at && touched(lo_, at)) ||
                    (final && edits_.output_size() < edits_.input_size())))
      become_dirty();
    if (!dirty_) copy_block(bit, final);
    pending_.input.clear();
    last_final_copied_ = !dirty_ && final;
  }

  void copy_block(u64 bit, bool final) {
    if (in_run_) end_run(false);
    // The input's final block stays final unless new content follows.
    const bool keep_final =
        final && edits_.output_size() == edits_.input_size();
    if (stored_) {
      if (bit % 8 != 0) fail(in_, "stored block does not end on a byte");
      bits_.put_stored_block(in_.raw, b0_, bit, keep_final);
    } else {
      bits_.copy_bits(in_.raw, b0_, bit, final && !keep_final);
    }
    result_.reused += (bit - b0_) / 8;
    release_behind(bit / 8);
    if (bits_.ready() >= kFlushBits) flush_bits();
  }

  // The inflater drops the input pages it consumed from the mapping;
  // copying a block faults them in again. Dropped here up to `end`
  // (reader::release_consumed keeps the bookkeeping).
  void release_behind(u64 end) {
    if (in_.release_input)
      reader::release_consumed(in_.raw.data(), released_, end);
  }

  void start_run(u64 at) {
    bits_.align_with_empty_stored_block();
    flush_bits();
    in_run_ = true;
    runs_.push_back({at, at, false});
    piece_ = env_.slots->take();
    piece_at_ = at;
  }

  // New content at `at` (contiguous with what the run has) into the run.
  void fresh(u64 at, std::span<const u8> original) {
    if (at >= edits_.output_size() || original.empty()) return;
    std::span<const u8> content = original;
    if (edits_.changes(at, at + original.size())) {
      edits_.edited(at, original, scratch_);
      content = scratch_;
    }
    put_fresh(content);
  }

  void put_fresh(std::span<const u8> content) {
    while (!content.empty()) {
      if (piece_.input.size() == env_.chunk_size) {
        submit_piece(false);
        piece_ = env_.slots->take();
      }
      const std::size_t n = static_cast<std::size_t>(
          std::min<u64>(content.size(), env_.chunk_size - piece_.input.size()));
      piece_.input.insert(piece_.input.end(), content.begin(),
                          content.begin() + n);
      content = content.subspan(n);
    }
  }

  void end_run(bool final) {
    runs_.back().end = piece_at_ + piece_.input.size();
    runs_.back().to_end = final;
    if (piece_.input.empty() && !final)
      env_.slots->give(std::move(piece_));
    else
      submit_piece(final);
    in_run_ = false;
  }

  void submit_piece(bool final) {
    Segment s;
    s.is_fresh = true;
    if (piece_at_ > 0 && !piece_.input.empty()) s.point = piece_at_;
    s.run = runs_.size() - 1;
    piece_at_ += piece_.input.size();
    s.fresh = env_.pool->submit([env = &env_, buffers = std::move(piece_),
                                 final, name = &in_.entry->name]() mutable {
      deflate_piece(*env, buffers.input, final, *name, buffers.output);
      return std::move(buffers);
    });
    queue_.push_back(std::move(s));
    ++fresh_in_flight_;
    pump(false);
  }

  // Complete bytes of the copied blocks to the output (`end`: the last,
  // padded, at the stream's end).
  void flush_bits(bool end = false) {
    std::vector<u8> b = end ? bits_.take_all() : bits_.take();
    if (b.empty()) return;
    if (queue_.empty()) {
      put(b);
      return;
    }
    queued_bytes_ += b.size();
    Segment s;
    s.bytes = std::move(b);
    queue_.push_back(std::move(s));
    pump(false);
  }

  void put(std::span<const u8> data) {
    write_(data);
    result_.compressed_size += data.size();
  }

  // Writes what is ready at the front; waits while too much is queued
  // (or for everything, with `all`).
  void pump(bool all) {
    while (!queue_.empty()) {
      Segment& s = queue_.front();
      if (s.is_fresh) {
        const bool must = all || fresh_in_flight_ > max_fresh_ ||
                          queued_bytes_ > env_.chunk_size;
        if (!must && s.fresh.wait_for(std::chrono::seconds(0)) !=
                         std::future_status::ready)
          return;
        ChunkBuffers b = s.fresh.get();
        --fresh_in_flight_;
        if (s.point)
          candidates_.push_back({{*s.point, result_.compressed_size}, s.run});
        put(b.output);
        env_.slots->give(std::move(b));
      } else {
        queued_bytes_ -= s.bytes.size();
        put(s.bytes);
      }
      queue_.pop_front();
    }
  }

  void finish_stream() {
    const u64 in_size = edits_.input_size(), out_size = edits_.output_size();
    if (out_size > in_size) {
      if (!in_run_) start_run(in_size);
      std::vector<u8> tail(static_cast<std::size_t>(
          std::min<u64>(out_size - in_size, kScanPiece)));
      for (u64 at = in_size; at < out_size;) {
        std::span<u8> piece =
            std::span<u8>(tail).first(static_cast<std::size_t>(
                std::min<u64>(tail.size(), out_size - at)));
        edits_.tail(at, piece);
        hash_.add(piece);
        if (env_.progress) env_.progress(piece.size());
        put_fresh(piece);
        at += piece.size();
      }
    }
    if (in_run_)
      end_run(true);
    else if (!last_final_copied_)
      throw Error(Errc::io, in_.entry->name,
                  "internal: spliced stream has no final block");
    flush_bits(/*end=*/true);
    pump(true);
  }

  std::vector<RestartPoint> points() const {
    std::vector<RestartPoint> out;
    for (const auto& [point, run] : candidates_) {
      const Run& r = runs_[run];
      // A decoder starting here must not need anything before it: the
      // blocks copied after the run reach at most 32 KiB back.
      if (r.to_end || r.end - point.uncompressed >= kWindow)
        out.push_back(point);
    }
    return out;
  }

  const SpliceInput& in_;
  const SpliceEnv& env_;
  const ByteSink& write_;
  const EditMap& edits_;
  const u64 period_;
  const std::size_t max_fresh_;

  // The block being decoded.
  u64 b0_ = 0, u0_ = 0, lo_ = 0;
  bool stored_ = false, dirty_ = false, last_final_copied_ = false;
  ChunkBuffers pending_;  // its bytes while it may still be copied

  // The output.
  BitSink bits_;
  std::deque<Segment> queue_;
  std::size_t fresh_in_flight_ = 0;
  u64 queued_bytes_ = 0;
  bool in_run_ = false;
  ChunkBuffers piece_;
  u64 piece_at_ = 0;
  std::vector<Run> runs_;
  std::vector<std::pair<RestartPoint, std::size_t>> candidates_;

  ContentHash hash_;
  std::vector<u8> scratch_;
  u64 released_ = 0;  // input bytes dropped from the mapping after copies
  SpliceResult result_;
};

}  // namespace

SpliceResult splice_member(const SpliceInput& in, const SpliceEnv& env,
                           const ByteSink& write) {
  if (!in.entry->restart_error.empty())
    fail(in, "restart-point index: " + in.entry->restart_error);
  if (chunks_fit(*in.entry, env.chunk_size))
    return ChunkSplicer(in, env, write).run();
  return BlockSplicer(in, env, write).run();
}

StoredEdit store_edited_member(const SpliceInput& in, const ByteSink& write) {
  const EditMap& edits = *in.edits;
  ContentHash hash;
  std::vector<u8> buf(kScanPiece), edited;
  auto put = [&](std::span<const u8> bytes) {
    hash.add(bytes);
    write(bytes);
  };
  if (in.entry->method == 0) {
    for (u64 at = 0; at < edits.end_of_original(); at += buf.size()) {
      const u64 n = std::min<u64>(buf.size(), edits.end_of_original() - at);
      edits.edited(at, in.raw.subspan(at, n), edited);
      put(edited);
    }
  } else {
    reader::MemberInflater inflater(in.archive, *in.entry, in.raw,
                                    in.release_input);
    while (std::size_t got = inflater.next(buf)) {
      const u64 at = inflater.produced() - got;
      if (at < edits.output_size()) {
        edits.edited(at, std::span<const u8>(buf).first(got), edited);
        put(edited);
      }
    }
  }
  for (u64 at = edits.input_size(); at < edits.output_size();) {
    std::span<u8> piece = std::span<u8>(buf).first(static_cast<std::size_t>(
        std::min<u64>(buf.size(), edits.output_size() - at)));
    edits.tail(at, piece);
    put(piece);
    at += piece.size();
  }
  return {hash.crc, hash.sha.finish()};
}

}  // namespace libpkg::archive
