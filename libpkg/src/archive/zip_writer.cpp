// SPDX-License-Identifier: BSD-3-Clause
#include "libpkg/archive/zip_writer.hpp"

#include <fmt/format.h>
#include <libdeflate.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <future>
#include <mutex>
#include <set>
#include <utility>

#include "archive/cached_deflate.hpp"
#include "archive/deflate_chunk.hpp"
#include "archive/edit_map.hpp"
#include "archive/member_memo.hpp"
#include "archive/sha256_stream.hpp"
#include "archive/splice.hpp"
#include "archive/writer_names.hpp"
#include "archive/writer_records.hpp"
#include "archive/zip_format.hpp"
#include "libpkg/base/atomic_file.hpp"
#include "libpkg/base/error.hpp"
#include "libpkg/base/fd.hpp"
#include "libpkg/base/overlay.hpp"
#include "libpkg/base/sha256.hpp"
#include "libpkg/base/thread_pool.hpp"

namespace libpkg::archive {
namespace {

using zipfmt::kMax32;

constexpr u16 kMethodStored = 0;
constexpr u16 kMethodDeflated = 8;
// Deflate flag bits 1-2 (compression option) may be copied from a raw entry;
// everything else (encryption, data descriptor, ...) is ours to set.
constexpr u16 kFlagDeflateOptions = 0x0006;

// The SHA-256 of a content member (its RECORD hash), taken chunk by chunk
// in member order by whichever thread reaches the next chunk first: the
// chunk's job on a worker, right after reading it and together with the
// chunk's cache key (one pass, two interleaved streams: sha256_stream.hpp),
// or, when that job came too early (the previous chunk not hashed yet) or
// its second try at its end too, the writing thread. The only wait: a job
// about to hash its chunk's key while the previous chunk is the next to hash
// and its job is running (reading it, or hashing it) waits until that job
// has hashed it or ended: a bounded wait on a running job, which waits
// only on its own predecessor, never on a later chunk. Without it, two
// workers started together rarely paired key and digest (measured: 2 % of
// the hashing fused); waiting only while the previous chunk was being
// hashed, not yet while it was being read, left about half the chunks of a
// warm repair unfused (their keys hashed alone, their digests by the
// writing thread: 0.5 s of CPU; bench/RESULTS.md). A job that cannot take
// the stream leaves the chunk to its second try or to the writing thread,
// which gets every chunk in order.
class MemberHash {
 public:
  // A job of chunk `index` runs from begin() to end() (a Running guard).
  void begin(u64 index) {
    std::lock_guard lock(mutex_);
    running_.insert(index);
  }
  void end(u64 index) {
    {
      std::lock_guard lock(mutex_);
      running_.erase(index);
    }
    done_.notify_all();
  }
  class Running {
   public:
    Running(MemberHash& h, u64 index) : h_(h), index_(index) {
      h_.begin(index_);
    }
    ~Running() { h_.end(index_); }
    Running(const Running&) = delete;
    Running& operator=(const Running&) = delete;

   private:
    MemberHash& h_;
    u64 index_;
  };
  // The stream, when chunk `index` is the next to hash and no thread is at
  // it; give_back() after hashing the chunk. With `wait_for_previous`,
  // first waits while chunk `index` - 1 is the next to hash and its job is
  // running or a thread is hashing it.
  Sha256Stream* take(u64 index, bool wait_for_previous = false) {
    std::unique_lock lock(mutex_);
    if (wait_for_previous)
      done_.wait(lock, [&] {
        return hashed_ + 1 != index ||
               (!busy_ && running_.count(index - 1) == 0);
      });
    if (busy_ || hashed_ != index) return nullptr;
    busy_ = true;
    return &stream_;
  }
  void give_back() {
    {
      std::lock_guard lock(mutex_);
      ++hashed_;
      busy_ = false;
    }
    done_.notify_all();
  }
  // Hashes chunk `index` unless a job did; on the writing thread, in order.
  // Jobs of later chunks (done, or running) may have hashed past it.
  void hash_in_order(u64 index, std::span<const u8> chunk,
                     const std::string& name) {
    if (Sha256Stream* s = take(index)) {
      s->update(chunk);
      give_back();
    }
    std::lock_guard lock(mutex_);
    if (hashed_ <= index)
      throw Error(Errc::io, name, "internal error: member hashed out of order");
  }
  // After the writing thread's hash_in_order() of the last chunk: every
  // job of the member is done, nobody holds the stream.
  Sha256::Digest finish() { return stream_.finish(); }

 private:
  std::mutex mutex_;
  std::condition_variable done_;  // give_back() happened
  u64 hashed_ = 0;                // chunks hashed so far
  bool busy_ = false;             // a thread is hashing chunk hashed_
  std::set<u64> running_;         // chunks whose jobs are running
  Sha256Stream stream_;
};

struct Member {
  enum class Kind { content, raw };
  Kind kind = Kind::content;
  MemberRecord record;  // name, flags, time, external_attr filled at add()
  int level = 0;        // 0: stored
  SourcePtr source;     // Kind::content
  u64 size = 0;         // uncompressed
  // Kind::raw: the source archive's descriptor (kept from add_raw on, so
  // the bytes copied are the ones the reader validated), or for a reader
  // over bytes the reader itself (it outlives commit(), see add_raw).
  std::shared_ptr<const int> raw_fd;
  const ZipReader* raw_reader = nullptr;
  ZipEntry raw_entry;
  std::optional<std::array<u8, 32>> sha256;
  // Kind::content from an edited member (ContentSource::member_edit()):
  // written by splice_member() on the writing thread, not by chunk jobs.
  bool splice = false;
  // Kind::content written by chunk jobs: its SHA-256 (set by produce()),
  // unless it is written from its memo.
  std::shared_ptr<MemberHash> digest;
  // Kind::content through the cache from a source with an identity: where
  // its memo is kept (member_memo.hpp) and, when one was found, the memo.
  std::optional<ChunkCache::Key> memo_key;
  std::shared_ptr<const MemberMemo> memo;
};

// What a worker hands back for one chunk of a member: the input bytes (the
// writing thread hashes them in order, and writes them as they are for a
// stored member), their CRC-32 and, when deflating, the compressed bytes.
struct ChunkResult {
  ChunkBuffers buffers;  // input (unless a memo spared reading it), output
  u64 length = 0;        // of the chunk's input
  u32 crc32 = 0;
  bool slot = false;  // buffers belong to a ChunkSlots slot
  ChunkFacts facts;   // for the member's memo
  // A cache miss the writer stores once the archive is committed: its
  // output's CRC-32, computed on the worker (ChunkCache::store_packed()).
  bool store_later = false;
  u32 stored_crc32 = 0;
  const std::vector<u8>& input() const { return buffers.input; }
  const std::vector<u8>& deflated() const { return buffers.output; }
};

// Jobs of at most this many input bytes (a wheel's thousands of small
// files) allocate their own small buffers (below glibc's mmap threshold, so
// the allocator reuses them) instead of taking a full-size slot: they are
// admitted by count (window_jobs), full-size ones by slot (window_slots).
constexpr u64 kSmallJob = 64 * 1024;

u64 chunk_count(u64 size, u64 chunk_size) {
  return size == 0 ? 1 : (size + chunk_size - 1) / chunk_size;
}

// A member gets ZIP64 sizes when its data could reach 4 GiB. Compressed data
// may exceed the input by deflate's stored-block overhead (5 bytes per
// 64 KiB) plus 6 bytes per joined chunk, far below the 1/16 + 1 MiB margin.
bool needs_zip64_sizes(u64 size) {
  return size >= kMax32 || size + size / 16 + (u64{1} << 20) >= kMax32;
}

u32 crc32_of(std::span<const u8> bytes) {
  return libdeflate_crc32(0, bytes.data(), bytes.size());
}

u32 crc32_join(u32 first, u32 second, u64 second_len) {
  return static_cast<u32>(
      crc32_combine(first, second, static_cast<z_off_t>(second_len)));
}

}  // namespace

struct ZipWriter::Impl {
  ZipWriterOptions options;
  AtomicFile out;
  // Declared before the pool: the workers borrow compressors until joined.
  CompressorPool compressors;
  ChunkSlots slots;
  PoolRef pool;
  std::vector<Member> pending;
  std::vector<ZipMemberResult> results;
  std::vector<u8> central;
  // Cache misses whose bytes are in the output, stored after the commit.
  std::vector<ChunkCache::PackedChunk> packed;
  MemberNames names;
  u64 pos = 0;  // end of the data written so far
  u64 entries = 0;
  u64 total_bytes = 0;
  u64 done_bytes = 0;
  bool failed = false;
  bool committed = false;

  // In-flight chunk jobs, oldest first, and where the producer stands.
  std::deque<std::future<ChunkResult>> in_flight;
  size_t in_flight_slots = 0;  // jobs in flight holding a full-size slot
  size_t produce_member = 0;
  u64 produce_chunk = 0;
  size_t writing = 0;  // the member the writing thread is at

  Impl(const std::filesystem::path& target, ZipWriterOptions opts)
      : options(std::move(opts)),
        out(AtomicFile::create(target)),
        slots(options.chunk_size),
        pool(options.pool, options.threads) {
    if (options.chunk_size == 0)
      throw Error(Errc::usage, target.string(), "chunk size must be > 0");
    check_level(options.level, target.string());
  }

  static void check_level(int level, const std::string& name) {
    if (level < 0 || level > 12)
      throw Error(Errc::usage, name,
                  fmt::format("compression level {} outside 0..12", level));
  }

  void check_usable() const {
    if (failed)
      throw Error(Errc::usage, out.target().string(),
                  "zip writer already failed; the archive is abandoned");
    if (committed)
      throw Error(Errc::usage, out.target().string(),
                  "zip writer already committed");
  }

  void queue(Member m, bool directory) {
    check_usable();
    names.add(m.record.name, directory);
    if (needs_utf8_flag(m.record.name)) m.record.flags |= zipfmt::kFlagUtf8;
    total_bytes += m.size;
    pending.push_back(std::move(m));
    // Written in batches: what a member holds until it is written (its
    // source, name, attributes) is bounded, not kept for every member of
    // the archive until commit().
    if (pending.size() >= ZipWriter::kMaxQueued) flush();
  }

  Member content_member(std::string name, SourcePtr source,
                        const ZipMemberAttrs& attrs, u32 file_type,
                        unsigned perms) {
    Member m;
    m.record.name = std::move(name);
    m.record.time =
        zipfmt::to_dos_time(options.timestamp.value_or(attrs.mtime));
    m.record.external_attr = (file_type | (perms & 07777)) << 16;
    m.level = attrs.level.value_or(options.level);
    check_level(m.level, m.record.name);
    m.size = source->size();
    m.splice = splices(source->member_edit(), m.size);
    m.source = std::move(source);
    return m;
  }

  // An edited member of a deflated input is spliced when it spans a chunk
  // or more; a smaller one is compressed again from its source (one read).
  bool splices(const MemberEdit* edit, u64 size) const {
    return edit != nullptr && edit->entry.method == kMethodDeflated &&
           std::max(size, edit->entry.uncompressed_size) >= options.chunk_size;
  }

  // --- producer: keeps the pool busy within the memory window ------------

  // At most 2 full-size chunk jobs per worker in flight (a worker finishing
  // its chunk finds the next one ready), and the writing thread holds one
  // more slot while it hashes and writes: 2T + 1 slots of chunk_size input
  // plus deflate_chunk_capacity(chunk_size) output. Small jobs are bounded
  // by count so that many tiny members do not queue without limit either.
  size_t window_slots() const { return 2 * size_t{pool.size()}; }
  size_t window_jobs() const { return 8 * size_t{pool.size()} + 8; }

  // Only members of at least one chunk go through the cache: what a
  // nightly compresses again and again is the grafted libraries, tens of
  // MiB to GiB each, while a wheel's thousands of small files would cost an
  // entry (a file, its metadata) each for little CPU (docs/archives.md has
  // the measurement).
  bool cached(const Member& m) const {
    return options.cache != nullptr && m.level > 0 &&
           m.size >= options.chunk_size;
  }

  void produce() {
    while (produce_member < pending.size()) {
      Member& m = pending[produce_member];
      if (m.kind == Member::Kind::raw) {
        ++produce_member;
        continue;
      }
      // A spliced member uses the whole window itself: nothing after it is
      // started until the writing thread is past it.
      if (m.splice) {
        if (produce_member >= writing) return;
        ++produce_member;
        continue;
      }
      const u64 chunks = chunk_count(m.size, options.chunk_size);
      const u64 offset = produce_chunk * options.chunk_size;
      const u64 len = std::min(options.chunk_size, m.size - offset);
      const bool slot = len > kSmallJob;
      if (!in_flight.empty() && (in_flight.size() >= window_jobs() ||
                                 (slot && in_flight_slots >= window_slots())))
        return;
      const bool final = produce_chunk + 1 == chunks;
      ChunkCache* cache = cached(m) ? options.cache.get() : nullptr;
      if (produce_chunk == 0) start_member(m, cache, chunks);
      in_flight.push_back(pool.submit(
          [source = m.source, digest = m.digest, memo = m.memo,
           index = produce_chunk, offset, len, final, slot, level = m.level,
           cache, borrowed = &compressors, recycled = &slots]() -> ChunkResult {
            ChunkResult r;
            r.slot = slot;
            r.length = len;
            // Sized: resize() below then zero-fills nothing (read overwrites).
            if (slot) r.buffers = recycled->take(true);
            if (memo) {
              run_memo_chunk_job(*source, memo->chunks[index], offset, final,
                                 level, *cache, *borrowed, r);
              return r;
            }
            const MemberHash::Running running(*digest, index);
            std::vector<u8>& input = r.buffers.input;
            input.resize(len);
            source->read(offset, input);
            r.crc32 = crc32_of(input);
            r.facts = run_chunk_job(*digest, index, input, r.crc32, final,
                                    level, cache, *borrowed, source->name(),
                                    r.buffers.output, r.store_later);
            if (r.store_later) r.stored_crc32 = crc32_of(r.buffers.output);
            return r;
          }));
      if (slot) ++in_flight_slots;
      if (final) {
        ++produce_member;
        produce_chunk = 0;
      } else {
        ++produce_chunk;
      }
    }
  }

  // Before the first chunk of content member `m` is queued: its memo, when
  // it goes through the cache and its source has an identity that still
  // holds; else the stream its chunks' jobs hash it with.
  void start_member(Member& m, ChunkCache* cache, u64 chunks) {
    if (cache != nullptr) {
      if (const auto identity = m.source->content_identity()) {
        m.memo_key =
            member_memo_key(*identity, m.size, m.level, options.chunk_size);
        if (m.source->still_identified()) {
          if (auto memo = load_member_memo(*cache, *m.memo_key, m.size, chunks))
            m.memo = std::make_shared<const MemberMemo>(std::move(*memo));
        }
      }
    }
    if (!m.memo) m.digest = std::make_shared<MemberHash>();
  }

  // A chunk job following the member's memo (member_memo.hpp): an own
  // tagged entry is copied without reading the chunk; otherwise the chunk is
  // read, checked against the memo's CRC-32 and written as without a memo.
  static void run_memo_chunk_job(const ContentSource& source,
                                 const ChunkFacts& facts, u64 offset,
                                 bool final, int level, ChunkCache& cache,
                                 CompressorPool& compressors, ChunkResult& r) {
    r.crc32 = facts.crc32;
    r.facts = facts;
    std::vector<u8>& out = r.buffers.output;
    if (!facts.stored &&
        cache.load_tagged(facts.key, facts.crc32,
                          deflate_chunk_capacity(r.length), out)) {
      cache.count_saved(r.length);
      return;
    }
    std::vector<u8>& input = r.buffers.input;
    input.resize(r.length);
    source.read(offset, input);
    if (crc32_of(input) != facts.crc32)
      throw Error(Errc::io, source.name(),
                  "content changed while it was being archived");
    if (facts.stored) {
      store_chunk(input, final, out);
    } else if (cached_deflate_chunk(cache, compressors, level, input,
                                    facts.crc32, final, source.name(), out,
                                    nullptr,
                                    StoreMiss::later) == CacheUse::miss) {
      r.store_later = true;
      r.stored_crc32 = crc32_of(out);
    }
  }

  // A chunk job's work after reading its input: the member's digest (see
  // MemberHash) and, for a deflated member, the compressed bytes; the
  // chunk's cache key and its digest in one pass when it can take the
  // member's stream then. Returns the chunk's facts for the member's memo;
  // `missed`: a cache miss, for the writer to store after the commit.
  static ChunkFacts run_chunk_job(MemberHash& digest, u64 index,
                                  std::span<const u8> input, u32 crc,
                                  bool final, int level, ChunkCache* cache,
                                  CompressorPool& compressors,
                                  const std::string& name, std::vector<u8>& out,
                                  bool& missed) {
    ChunkFacts facts;
    facts.crc32 = crc;
    bool hashed = false;
    auto hash = [&] {
      if (hashed) return;
      if (Sha256Stream* s = digest.take(index)) {
        s->update(input);
        digest.give_back();
        hashed = true;
      }
    };
    if (level == 0) {
      hash();
      return facts;
    }
    if (cache == nullptr) {
      hash();
      deflate_chunk(compressors, level, input, final, name, out);
    } else if (Sha256Stream* s = digest.take(index, true)) {
      // The key in one pass with the digest: nearly free, so the cache is
      // looked up before the incompressible test.
      Sha256Stream key_stream;
      key_stream.update(ChunkCache::key_prefix(input.size(), level, final));
      Sha256Stream::update_both(key_stream, *s, input);
      digest.give_back();
      hashed = true;
      facts.key = key_stream.finish();
      const CacheUse use = cached_deflate_chunk_keyed(
          *cache, compressors, level, input, crc, final, name, facts.key, out,
          StoreMiss::later);
      facts.stored = use == CacheUse::bypassed;
      missed = use == CacheUse::miss;
    } else {
      const CacheUse use =
          cached_deflate_chunk(*cache, compressors, level, input, crc, final,
                               name, out, &facts.key, StoreMiss::later);
      facts.stored = use == CacheUse::bypassed;
      missed = use == CacheUse::miss;
    }
    hash();  // a second try: the previous chunk may be hashed by now
    return facts;
  }

  ChunkResult next_chunk() {
    produce();  // make sure the chunk we wait for has been submitted
    ChunkResult r = in_flight.front().get();
    in_flight.pop_front();
    if (r.slot) --in_flight_slots;
    produce();  // refill before this thread spends time hashing and writing
    return r;
  }

  void recycle(ChunkResult& r) {
    if (r.slot) slots.give(std::move(r.buffers));
    r = ChunkResult{};
  }

  void drain() noexcept {
    for (auto& f : in_flight) {
      try {
        f.get();
      } catch (...) {
      }
    }
    in_flight.clear();
    in_flight_slots = 0;
  }

  // --- consumer: the calling thread writes members strictly in order -----

  void write_at(u64 offset, std::span<const u8> bytes) {
    out.pwrite(offset, bytes);
  }

  void report_progress(u64 bytes) {
    done_bytes += bytes;
    if (options.progress) options.progress(done_bytes, total_bytes);
  }

  void finish_member(const MemberRecord& rec, u64 header_at, bool copied_raw,
                     std::optional<std::array<u8, 32>> sha256) {
    write_at(header_at, encode_local_header(rec));
    append_central_header(rec, central);
    ++entries;
    ZipMemberResult res;
    res.name = rec.name;
    res.size = rec.uncompressed_size;
    res.compressed_size = rec.compressed_size;
    res.crc32 = rec.crc32;
    res.method = rec.method;
    res.copied_raw = copied_raw;
    res.sha256 = sha256;
    results.push_back(std::move(res));
  }

  void write_content_member(const Member& m) {
    MemberRecord rec = m.record;
    rec.local_header_offset = pos;
    rec.method = m.level > 0 ? kMethodDeflated : kMethodStored;
    rec.uncompressed_size = m.size;
    rec.zip64_sizes = options.force_zip64 || needs_zip64_sizes(m.size);
    const u64 header_at = pos;
    pos += encode_local_header(rec).size();  // placeholder, rewritten below
    const u64 data_at = pos;

    u32 crc = 0;
    u64 compressed = 0;
    const u64 chunks = chunk_count(m.size, options.chunk_size);
    // The memo this member's facts make, when it has none yet.
    std::optional<MemberMemo> learnt;
    ChunkResult last;
    for (u64 i = 0; i < chunks; ++i) {
      recycle(last);  // before waiting: frees a window slot's memory
      last = next_chunk();
      // Its first chunk was queued, so start_member() has run.
      if (i == 0 && m.memo_key && !m.memo)
        learnt.emplace().chunks.reserve(chunks);
      // Every chunk after the first starts a fresh, byte-aligned part of
      // the stream that refers to nothing before it: a restart point.
      if (i > 0 && m.level > 0)
        rec.restart_points.push_back({i * options.chunk_size, compressed});
      if (!m.memo) m.digest->hash_in_order(i, last.input(), m.source->name());
      if (learnt) learnt->chunks.push_back(last.facts);
      crc = crc32_join(crc, last.crc32, last.length);
      std::span<const u8> data = m.level > 0 ? last.deflated() : last.input();
      if (last.store_later)
        packed.push_back(
            {last.facts.key, last.crc32, pos, data.size(), last.stored_crc32});
      write_at(pos, data);
      pos += data.size();
      compressed += data.size();
      report_progress(last.length);
    }
    rec.crc32 = crc;
    rec.compressed_size = compressed;
    if (m.level > 0 && options.store_if_not_smaller && compressed >= m.size) {
      // The one chunk's input, when it was read (a memo may have spared it).
      const std::vector<u8>* whole =
          chunks == 1 && last.input().size() == m.size ? &last.input()
                                                       : nullptr;
      if (whole == nullptr) recycle(last);  // its slot serves the re-read
      rewrite_stored(m, data_at, whole, crc);
      rec.method = kMethodStored;
      rec.compressed_size = m.size;
      rec.restart_points.clear();  // stored members are read in place
      rec.flags = static_cast<u16>(rec.flags & ~kFlagDeflateOptions);
    }
    if (!rec.zip64_sizes &&
        (rec.compressed_size >= kMax32 || rec.uncompressed_size >= kMax32))
      throw Error(Errc::unsupported, m.source->name(),
                  "compressed data outgrew the 4 GiB limit of a non-ZIP64 "
                  "local header");
    recycle(last);
    finish_member(rec, header_at, false, member_digest(m, std::move(learnt)));
  }

  // The SHA-256 of content member `m`, just written: its memo's (when the
  // file is still the one it describes, else the archive is refused), or
  // the one its chunks were hashed to, then memoized in `learnt` if the
  // file did not change while it was read.
  Sha256::Digest member_digest(const Member& m,
                               std::optional<MemberMemo> learnt) {
    if (m.memo) {
      if (!m.source->still_identified())
        throw Error(Errc::io, m.source->name(),
                    "content changed while it was being archived");
      options.cache->count_memo_hit();
      return m.memo->sha256;
    }
    const Sha256::Digest digest = m.digest->finish();
    if (learnt && m.source->still_identified()) {
      learnt->sha256 = digest;
      store_member_memo(*options.cache, *m.memo_key, m.size, *learnt);
    }
    return digest;
  }

  // Deflate did not shrink the member: its data becomes the input itself.
  // Truncating back keeps the output independent of what was tried first.
  // A multi-chunk member is read again from its source in bounded pieces and
  // must produce the same CRC as the first pass.
  void rewrite_stored(const Member& m, u64 data_at,
                      const std::vector<u8>* whole_input, u32 expected_crc) {
    truncate_at(data_at);
    if (whole_input != nullptr) {
      write_at(pos, *whole_input);
      pos += whole_input->size();
      return;
    }
    // The writing thread's own slot (the caller recycled its last chunk).
    ChunkBuffers held = slots.take();
    std::vector<u8>& buf = held.input;
    buf.resize(static_cast<size_t>(std::min<u64>(options.chunk_size, m.size)));
    u32 crc = 0;
    for (u64 offset = 0; offset < m.size;) {
      const u64 len = std::min<u64>(buf.size(), m.size - offset);
      std::span<u8> piece(buf.data(), static_cast<size_t>(len));
      m.source->read(offset, piece);
      crc = crc32_join(crc, crc32_of(piece), len);
      write_at(pos, piece);
      pos += len;
      offset += len;
    }
    slots.give(std::move(held));
    if (crc != expected_crc)
      throw Error(Errc::io, m.source->name(),
                  "content changed while it was being archived");
  }

  // Drops what was written from `at` on. The cache misses among it are
  // stored from the bytes first, as plain entries: the next archive with
  // that member will deflate it again only to find it does not shrink.
  void truncate_at(u64 at) {
    const auto gone = std::partition(
        packed.begin(), packed.end(),
        [at](const ChunkCache::PackedChunk& c) { return c.offset < at; });
    if (gone != packed.end()) {
      options.cache->store_read_back(out.fd(), {gone, packed.end()});
      packed.erase(gone, packed.end());
    }
    out.truncate(at);
    pos = at;
  }

  void write_raw_member(const Member& m) {
    const ZipEntry& e = m.raw_entry;
    MemberRecord rec = m.record;
    rec.local_header_offset = pos;
    rec.method = e.method;
    rec.flags = static_cast<u16>(rec.flags | (e.flags & kFlagDeflateOptions));
    rec.crc32 = e.crc32;
    rec.compressed_size = e.compressed_size;
    rec.uncompressed_size = e.uncompressed_size;
    // The same compressed bytes: the input's index (if any) still describes
    // them. Carried over as unverified as it came (docs/archives.md).
    rec.restart_points = e.restart_points;
    rec.zip64_sizes = options.force_zip64 || e.compressed_size >= kMax32 ||
                      e.uncompressed_size >= kMax32;
    const u64 header_at = pos;
    pos += encode_local_header(rec).size();
    if (m.raw_fd)
      out.copy_from(*m.raw_fd, e.data_offset, e.compressed_size, pos);
    else
      write_at(pos, m.raw_reader->raw(e));
    pos += e.compressed_size;
    report_progress(e.uncompressed_size);
    finish_member(rec, header_at, true, m.sha256);
  }

  // An edited member of another archive: its deflate data re-used where
  // the edit leaves it valid (splice.hpp), the rest deflated on the pool.
  // In flight meanwhile: nothing else (produce() stops at it), so the
  // splice's window of slots is the writer's.
  void write_spliced_member(const Member& m) {
    const MemberEdit& edit = *m.source->member_edit();
    MemberRecord rec = m.record;
    rec.local_header_offset = pos;
    rec.uncompressed_size = m.size;
    // Re-used blocks keep their size: bound the data by the input's too.
    rec.zip64_sizes = options.force_zip64 || needs_zip64_sizes(m.size) ||
                      needs_zip64_sizes(edit.entry.compressed_size);
    const u64 header_at = pos;
    pos += encode_local_header(rec).size();  // rewritten by finish_member
    const u64 data_at = pos;
    const EditMap edits(edit.overlay->patches(), edit.overlay->input_size(),
                        edit.overlay->size());
    SpliceInput in;
    in.archive = edit.zip->name();
    in.entry = &edit.entry;
    in.raw = edit.zip->raw(edit.entry);
    in.release_input = edit.zip->descriptor() != nullptr;
    in.edits = &edits;
    const ByteSink sink = [this](std::span<const u8> bytes) {
      write_at(pos, bytes);
      pos += bytes.size();
    };
    auto store = [&] {
      truncate_at(data_at);
      const StoredEdit r = store_edited_member(in, sink);
      rec.method = kMethodStored;
      rec.crc32 = r.crc32;
      rec.restart_points.clear();
      return r.sha256;
    };
    std::array<u8, 32> sha{};
    u64 reused = 0;
    if (m.level == 0) {
      sha = store();
    } else {
      SpliceEnv env;
      env.pool = pool.get();
      env.compressors = &compressors;
      env.slots = &slots;
      env.window = window_slots();
      env.cache = cached(m) ? options.cache.get() : nullptr;
      env.level = m.level;
      env.chunk_size = options.chunk_size;
      env.progress = [this](u64 n) { report_progress(n); };
      SpliceResult r = splice_member(in, env, sink);
      if (options.store_if_not_smaller && pos - data_at >= m.size) {
        sha = store();
      } else {
        rec.method = kMethodDeflated;
        rec.crc32 = r.crc32;
        rec.restart_points = std::move(r.restart_points);
        sha = r.sha256;
        reused = r.reused;
      }
    }
    rec.compressed_size = pos - data_at;
    if (!rec.zip64_sizes &&
        (rec.compressed_size >= kMax32 || rec.uncompressed_size >= kMax32))
      throw Error(Errc::unsupported, m.source->name(),
                  "compressed data outgrew the 4 GiB limit of a non-ZIP64 "
                  "local header");
    finish_member(rec, header_at, false, sha);
    results.back().spliced = true;
    results.back().reused = reused;
  }

  // The member goes to the file as `produce` writes it; see add_stream().
  void write_stream_member(
      MemberRecord rec, u64 max_size,
      const std::function<void(const ZipWriter::StreamSink&)>& produce) {
    flush();
    try {
      rec.local_header_offset = pos;
      rec.method = kMethodStored;
      rec.zip64_sizes = options.force_zip64 || max_size >= kMax32;
      const u64 header_at = pos;
      pos += encode_local_header(rec).size();  // rewritten by finish_member
      u32 crc = 0;
      u64 size = 0;
      ZipWriter::StreamSink sink = [&](std::span<const u8> bytes) {
        if (bytes.size() > max_size - size)
          throw Error(Errc::usage, rec.name,
                      fmt::format("streamed member exceeds its announced "
                                  "maximum of {} bytes",
                                  max_size));
        write_at(pos, bytes);
        pos += bytes.size();
        size += bytes.size();
        crc = libdeflate_crc32(crc, bytes.data(), bytes.size());
      };
      produce(sink);
      rec.crc32 = crc;
      rec.compressed_size = size;
      rec.uncompressed_size = size;
      finish_member(rec, header_at, false, std::nullopt);
    } catch (...) {
      failed = true;
      throw;
    }
  }

  void flush() {
    check_usable();
    try {
      for (writing = 0; writing < pending.size(); ++writing) {
        const Member& m = pending[writing];
        if (m.kind == Member::Kind::raw)
          write_raw_member(m);
        else if (m.splice)
          write_spliced_member(m);
        else
          write_content_member(m);
      }
    } catch (...) {
      failed = true;
      drain();
      throw;
    }
    pending.clear();
    produce_member = 0;
    produce_chunk = 0;
    writing = 0;
  }

  void commit(const std::vector<std::filesystem::path>& copies = {}) {
    flush();
    const u64 cd_offset = pos;
    write_at(pos, central);
    pos += central.size();
    std::vector<u8> end = encode_end_records(entries, cd_offset, central.size(),
                                             options.force_zip64);
    write_at(pos, end);
    pos += end.size();
    out.truncate(pos);
    // The bytes just written, held open across the rename: the copies and
    // the cache's pack come from them, not from whatever the target's path
    // names by then.
    Fd written;
    if (!copies.empty() || !packed.empty()) {
      written = Fd(::dup(out.fd()));
      if (!written) throw_errno(out.target().string(), "cannot dup");
    }
    out.commit();
    committed = true;
    for (const auto& copy : copies) {
      AtomicFile c = AtomicFile::create(copy, 0644);
      c.copy_from(written.get(), 0, pos, 0);
      c.commit();
    }
    // The misses, stored only now that the archive holding their bytes is
    // in place (a failed archive stores nothing).
    if (!packed.empty()) options.cache->store_packed(written.get(), packed);
    // Keeps the cache under its cap. Never fails the archive, which is in
    // place already: prune skips what it cannot list or remove.
    if (options.cache) options.cache->prune_if_stored();
  }
};

ZipWriter::ZipWriter(const std::filesystem::path& target,
                     ZipWriterOptions options)
    : impl_(std::make_unique<Impl>(target, std::move(options))) {}

ZipWriter::~ZipWriter() {
  if (impl_) impl_->drain();
}

void ZipWriter::add(std::string name, SourcePtr content, ZipMemberAttrs attrs) {
  if (!content)
    throw Error(Errc::usage, name, "zip member without a content source");
  impl_->queue(impl_->content_member(std::move(name), std::move(content), attrs,
                                     S_IFREG, attrs.mode),
               false);
}

void ZipWriter::add_file(std::string name, const std::filesystem::path& path,
                         ZipMemberAttrs attrs) {
  add(std::move(name), file_source(path), attrs);
}

void ZipWriter::add_bytes(std::string name, std::string_view bytes,
                          ZipMemberAttrs attrs) {
  std::string label = name;
  add(std::move(name), bytes_source(bytes, std::move(label)), attrs);
}

void ZipWriter::add_directory(std::string name, ZipMemberAttrs attrs) {
  attrs.level = 0;
  std::string label = name;
  Member m = impl_->content_member(std::move(name),
                                   bytes_source(std::string_view(), label),
                                   attrs, S_IFDIR, attrs.mode);
  m.record.external_attr |= 0x10;  // MS-DOS directory attribute
  impl_->queue(std::move(m), true);
}

void ZipWriter::add_symlink(std::string name, std::string target,
                            ZipMemberAttrs attrs) {
  // The link target is the member's content, stored, as Info-ZIP does.
  // A target the extractor would refuse is refused here (fuzz_zip_roundtrip).
  check_symlink_target(name, target);
  attrs.level = 0;
  std::string label = name;
  impl_->queue(impl_->content_member(std::move(name),
                                     bytes_source(target, std::move(label)),
                                     attrs, S_IFLNK, 0777),
               false);
}

void ZipWriter::add_raw(std::string name, const ZipReader& source,
                        const ZipEntry& entry, ZipMemberAttrs attrs,
                        std::optional<std::array<u8, 32>> sha256) {
  if ((entry.flags & zipfmt::kFlagEncrypted) != 0)
    throw Error(
        Errc::unsupported, source.name(),
        fmt::format("{}: encrypted members cannot be copied", entry.name));
  Member m;
  m.kind = Member::Kind::raw;
  m.record.name = std::move(name);
  m.record.time =
      zipfmt::to_dos_time(impl_->options.timestamp.value_or(attrs.mtime));
  // The entry's file type (from unix external attributes, or a trailing
  // '/'), decided here rather than via ZipEntry helpers so that copying
  // needs nothing but the entry's fields.
  const unsigned entry_mode = (entry.version_made_by >> 8) == zipfmt::kHostUnix
                                  ? entry.external_attr >> 16
                                  : 0;
  const bool directory =
      (!entry.name.empty() && entry.name.back() == '/') || S_ISDIR(entry_mode);
  const u32 type = S_ISLNK(entry_mode) ? S_IFLNK
                   : directory         ? S_IFDIR
                                       : S_IFREG;
  const unsigned perms = type == S_IFLNK ? 0777 : attrs.mode;
  m.record.external_attr =
      ((type | (perms & 07777)) << 16) | (directory ? 0x10u : 0u);
  m.size = entry.uncompressed_size;
  m.raw_fd = source.descriptor();
  m.raw_reader = &source;
  m.raw_entry = entry;
  m.sha256 = sha256;
  impl_->queue(std::move(m), directory);
}

void ZipWriter::add_stream(
    std::string name, u64 max_size,
    const std::function<void(const StreamSink&)>& produce,
    ZipMemberAttrs attrs) {
  Impl& w = *impl_;
  w.check_usable();
  w.names.add(name, false);
  MemberRecord rec;
  if (needs_utf8_flag(name)) rec.flags |= zipfmt::kFlagUtf8;
  rec.name = std::move(name);
  rec.time = zipfmt::to_dos_time(w.options.timestamp.value_or(attrs.mtime));
  rec.external_attr = (S_IFREG | (attrs.mode & 07777)) << 16;
  w.write_stream_member(std::move(rec), max_size, produce);
}

const std::vector<ZipMemberResult>& ZipWriter::flush() {
  impl_->flush();
  return impl_->results;
}

const std::vector<ZipMemberResult>& ZipWriter::commit() {
  impl_->commit();
  return impl_->results;
}

const std::vector<ZipMemberResult>& ZipWriter::commit(
    const std::vector<std::filesystem::path>& copies) {
  impl_->commit(copies);
  return impl_->results;
}

u64 ZipWriter::size() const { return impl_->pos; }

std::optional<i64> source_date_epoch() {
  const char* value = std::getenv("SOURCE_DATE_EPOCH");
  if (value == nullptr) return std::nullopt;
  std::string_view text(value);
  if (text.empty() || text.size() > 18 ||
      text.find_first_not_of("0123456789") != std::string_view::npos)
    throw Error(Errc::usage, "SOURCE_DATE_EPOCH",
                fmt::format("not a number of seconds: '{}'", text));
  i64 seconds = 0;
  for (char c : text) seconds = seconds * 10 + (c - '0');
  return seconds;
}

}  // namespace libpkg::archive
