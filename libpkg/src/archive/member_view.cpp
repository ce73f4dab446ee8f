// SPDX-License-Identifier: BSD-3-Clause
#include "libpkg/archive/member_view.hpp"

#include <fmt/format.h>
#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <optional>
#include <utility>
#include <vector>

#include "archive/reader_central.hpp"
#include "archive/reader_inflate.hpp"
#include "libpkg/base/error.hpp"
#include "libpkg/base/sha256.hpp"

namespace libpkg::archive {
namespace {

// Stored: the compressed bytes are the bytes.
class StoredMember final : public MemberView {
 public:
  StoredMember(std::shared_ptr<const ZipReader> zip, const ZipEntry& entry)
      : zip_(std::move(zip)), raw_(zip_->raw(entry)) {
    if (raw_.size() != entry.uncompressed_size)
      throw Error(Errc::format, zip_->name(),
                  fmt::format("{}: stored member has {} bytes but declares {}",
                              reader::printable_name(entry.name), raw_.size(),
                              entry.uncompressed_size),
                  entry.data_offset);
  }
  ByteView view(std::string name) const override {
    return ByteView(raw_, std::move(name));
  }
  u64 inflated() const override { return 0; }
  u64 decoded() const override { return 0; }
  std::optional<std::array<u8, 32>> digest() const override {
    return std::nullopt;
  }

 private:
  std::shared_ptr<const ZipReader> zip_;
  std::span<const u8> raw_;
};

// Deflated: an anonymous mapping of the declared size, inflated into on
// demand. Untouched pages of a MAP_NORESERVE mapping cost neither memory
// nor commit charge, and the view's pointers never move.
//
// Deflate can only be decoded front to back, and an ELF file's dynamic
// section sits behind its code (80 % into a CUDA library). So the bytes
// before a requested range are inflated but kept only when they are near
// the filled prefix (the headers and the string, symbol and version tables
// at the front form one dense prefix); a far range is reached by inflating
// through the gap into a small scratch buffer and kept as an island. A
// later request that falls into a gap is filled by a second inflater from
// the last resume point before it (reader::ResumePoint, left by the first
// every 8 MiB). Memory is then the prefix, the islands, the scratch buffer
// and 32 KiB per resume point (4 MiB per GB of member); the compressed
// input already consumed is released from the archive's mapping as the
// inflater moves on (file-backed readers).
//
// A member with restart points (ZipEntry::restart_points) is entered at the
// last point at or before the range asked for instead: the gap before it is
// never inflated. What that verifies is in reader_inflate.hpp: the deflate
// data from the point on, and every later point reached, but not the CRC
// (which needs the whole member from its start).
class DeflatedMember final : public MemberView, public ByteFiller {
 public:
  DeflatedMember(std::shared_ptr<const ZipReader> zip, const ZipEntry& entry,
                 RestartPoints points)
      : zip_(std::move(zip)), entry_(entry), size_(entry.uncompressed_size) {
    // Ignored: a sequential view, as if the member had no index.
    if (points == RestartPoints::ignore) entry_.restart_points.clear();
    hashed_ = points == RestartPoints::ignore;
    if (size_ != 0) {
      void* p = ::mmap(nullptr, size_, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
      if (p == MAP_FAILED)
        throw_errno(zip_->name(),
                    fmt::format("{}: cannot reserve {} bytes to inflate into",
                                reader::printable_name(entry_.name), size_));
      base_ = static_cast<u8*>(p);
    }
  }
  ~DeflatedMember() override {
    if (base_ != nullptr) ::munmap(base_, size_);
  }
  DeflatedMember(const DeflatedMember&) = delete;
  DeflatedMember& operator=(const DeflatedMember&) = delete;

  ByteView view(std::string name) const override {
    return ByteView(std::span<const u8>(base_, size_), std::move(name), 0,
                    this);
  }
  u64 decoded() const override {
    return decoded_.load(std::memory_order_relaxed);
  }
  std::optional<std::array<u8, 32>> digest() const override {
    std::lock_guard lock(digest_mutex_);
    return digest_;
  }
  u64 inflated() const override {
    std::lock_guard lock(mutex_);
    u64 n = prefix_.load();
    for (const auto& [b, e] : islands_) n += e - b;
    return n;
  }

  void ensure(const u8* begin, const u8* end) const override {
    const u64 b = static_cast<u64>(begin - base_);
    const u64 e = static_cast<u64>(end - base_);
    if (e <= prefix_.load(std::memory_order_acquire)) return;
    std::lock_guard lock(mutex_);
    if (failure_) std::rethrow_exception(failure_);
    if (covered(b, e)) return;
    try {
      fill(b, e);
    } catch (...) {
      // A member that failed once fails the same way for every reader.
      failure_ = std::current_exception();
      main_.reset();
      side_.reset();
      throw;
    }
  }

 private:
  // Ranges are filled in whole steps, so a reader walking a table entry by
  // entry does not call zlib per entry; gaps up to kNear after the prefix
  // are filled rather than skipped.
  static constexpr u64 kStep = u64{256} << 10;
  static constexpr u64 kNear = u64{1} << 20;
  // The main inflater leaves a resume point about this often: a read behind
  // it then decodes at most this much before the bytes asked for, and each
  // point keeps 32 KiB (4 MiB per GB of member; at most 512 points, 16 MiB,
  // the spacing doubling past 4 GiB).
  static constexpr u64 kResumeEvery = u64{8} << 20;

  // An inflater and how far it got.
  struct Cursor {
    std::optional<reader::MemberInflater> inflater;
    u64 pos = 0;                 // what `inflater` has produced
    std::optional<Sha256> hash;  // of the bytes from the member's start
    void reset() {
      inflater.reset();
      pos = 0;
      hash.reset();
    }
  };

  bool covered(u64 b, u64 e) const {
    if (e <= prefix_.load(std::memory_order_relaxed)) return true;
    for (const auto& [ib, ie] : islands_)
      if (ib <= b && e <= ie) return true;
    return false;
  }

  // Inflates `c` up to `to`, into the view (keep) or the scratch buffer.
  // Bytes already filled (the prefix, islands) are never written again:
  // readers read them without the lock.
  void advance(Cursor& c, u64 to, bool keep) const {
    while (c.pos < to) {
      u64 stop = to;
      bool into_view = keep && c.pos >= prefix_.load(std::memory_order_relaxed);
      // Up to the next boundary between filled and unfilled bytes.
      for (const auto& [ib, ie] : islands_) {
        if (ib <= c.pos && c.pos < ie) {
          into_view = false;
          stop = std::min(stop, ie);
        } else if (c.pos < ib) {
          stop = std::min(stop, ib);
        }
      }
      const u64 prefix = prefix_.load(std::memory_order_relaxed);
      if (c.pos < prefix) stop = std::min(stop, prefix);
      const u64 n = std::min<u64>(
          stop - c.pos, into_view ? u64{1} << 30 : u64{scratch_.size()});
      std::span<u8> out =
          into_view
              ? std::span<u8>(base_ + c.pos, static_cast<std::size_t>(n))
              : std::span<u8>(scratch_).first(static_cast<std::size_t>(n));
      const std::size_t got = c.inflater->next(out);
      if (got == 0) break;  // only at the declared size
      if (c.hash) c.hash->update(out.first(got));
      c.pos += got;
      decoded_.fetch_add(got, std::memory_order_relaxed);
    }
  }

  // Keeps islands_ sorted and disjoint: a table read entry by entry past
  // the prefix (a hash chain, version records) makes one island, not one
  // per entry, and inflated() counts each byte once.
  void add_island(u64 from, u64 to) const {
    const auto at = std::lower_bound(islands_.begin(), islands_.end(),
                                     std::pair<u64, u64>(from, to));
    islands_.insert(at, {from, to});
    std::size_t kept = 0;
    for (const auto& r : islands_) {
      if (kept > 0 && r.first <= islands_[kept - 1].second)
        islands_[kept - 1].second =
            std::max(islands_[kept - 1].second, r.second);
      else
        islands_[kept++] = r;
    }
    islands_.resize(kept);
  }

  // Where a new inflater for bytes from `from` on starts: the last of the
  // archive's restart points (index k, 0: none) and our own resume points
  // at or before `from`, whichever is later.
  struct Start {
    u64 at = 0;
    std::size_t k = 0;                         // a restart point, or 0
    const reader::ResumePoint* own = nullptr;  // or one of ours
  };
  Start start_for(u64 from) const {
    Start s;
    const auto& points = entry_.restart_points;
    s.k = reader::restart_points_through(points, from);
    s.at = s.k == 0 ? 0 : points[s.k - 1].uncompressed;
    const auto own = std::upper_bound(
        resume_.begin(), resume_.end(), from,
        [](u64 off, const reader::ResumePoint& p) { return off < p.produced; });
    if (own != resume_.begin() && std::prev(own)->produced > s.at) {
      s.own = &*std::prev(own);
      s.at = s.own->produced;
    }
    return s;
  }

  // `may_hash`: the main inflater; a side one never reaches the end (the
  // main one takes over there), so hashing it would be wasted.
  void begin(Cursor& c, const Start& s, bool may_hash) const {
    const bool file = zip_->descriptor() != nullptr;
    c.hash.reset();
    if (s.own != nullptr) {
      c.inflater.emplace(zip_->name(), entry_, zip_->raw(entry_), file, *s.own);
    } else {
      // From the start the index is ignored (a sequential read, as any
      // full read); from a point it is checked as far as it is used.
      c.inflater.emplace(zip_->name(), entry_, zip_->raw(entry_), file,
                         s.k == 0 ? reader::MemberInflater::Mode::sequential
                                  : reader::MemberInflater::Mode::checked,
                         s.k);
      // Hashed along when decoding from the start: reaching the end in
      // this one pass gives the member's SHA-256 (digest()).
      if (may_hash && hashed_ && !digest_) c.hash.emplace();
    }
    c.pos = s.at;
  }

  // The main inflater goes forward through the member and leaves resume
  // points behind it. A range behind it is filled by a side inflater from
  // the last point before the range, so the main one keeps its place (and
  // the hash of a pass from the start, for digest()); a read far behind a
  // GB library's end (its symbol tables, after its dynamic section) costs
  // at most kResumeEvery of decoding more than the range itself.
  Cursor& cursor_for(u64 from) const {
    const Start s = start_for(from);
    if (main_.inflater && main_.pos <= from && s.at <= main_.pos) return main_;
    if (main_.inflater && main_.pos > from) {
      if (!side_.inflater || side_.pos > from || s.at > side_.pos)
        begin(side_, s, /*may_hash=*/false);
      return side_;
    }
    begin(main_, s, /*may_hash=*/true);
    // It adds points only past the last one.
    main_.inflater->record_resume_points(resume_, kResumeEvery);
    return main_;
  }

  void fill(u64 b, u64 e) const {
    const u64 prefix = prefix_.load(std::memory_order_relaxed);
    const u64 from = b <= prefix + kNear ? prefix : b;
    // The prefix grows in steps; an island is just the range asked for (a
    // table read whole), so reading it never reaches further into the file.
    const u64 to =
        from == prefix ? std::min(size_, std::max(e, from + kStep)) : e;
    if (scratch_.empty()) scratch_.resize(kStep);
    Cursor* c = &cursor_for(from);
    if (c->pos < from) advance(*c, from, /*keep=*/false);
    if (c == &side_ && to > main_.pos) {
      // What lies past the main inflater is its to decode: only a pass
      // from the start checks the CRC (and gives the digest) at the end.
      advance(side_, main_.pos, /*keep=*/true);
      c = &main_;
    }
    advance(*c, to, /*keep=*/true);
    if (from == prefix) {
      u64 p = to;
      // Islands the prefix has reached join it (in order: one may reach
      // the next).
      std::erase_if(islands_, [&](const std::pair<u64, u64>& r) {
        if (r.first > p) return false;
        p = std::max(p, r.second);
        return true;
      });
      prefix_.store(p, std::memory_order_release);
    } else {
      add_island(from, to);
    }
    // At the declared end the stream's end and the CRC are checked too.
    if (c->pos == size_) {
      c->inflater->next({});
      if (c->hash) {
        const Sha256::Digest d = c->hash->finish();
        std::lock_guard lock(digest_mutex_);
        digest_ = d;
      }
      c->reset();
    }
  }

  std::shared_ptr<const ZipReader> zip_;
  ZipEntry entry_;
  u64 size_;
  // Only a sequential view (a repair's) hashes: the RECORD check takes its
  // digest; `show` and `check_binary` read prefixes through restart points.
  bool hashed_ = false;
  u8* base_ = nullptr;
  mutable std::mutex mutex_;
  mutable std::atomic<u64> prefix_{0};                // [0, prefix_) is filled
  mutable std::vector<std::pair<u64, u64>> islands_;  // filled, past prefix_
  mutable Cursor main_, side_;
  mutable std::vector<reader::ResumePoint> resume_;  // left by main_
  mutable std::vector<u8> scratch_;
  mutable std::exception_ptr failure_;
  mutable std::atomic<u64> decoded_{0};
  // The whole member's SHA-256, once a pass from the start reached the
  // end (Cursor::hash).
  mutable std::mutex digest_mutex_;  // digest() runs without mutex_
  mutable std::optional<Sha256::Digest> digest_;
};

}  // namespace

std::shared_ptr<const MemberView> open_member(
    std::shared_ptr<const ZipReader> zip, const ZipEntry& entry,
    RestartPoints points) {
  if (entry.method == 0)
    return std::make_shared<StoredMember>(std::move(zip), entry);
  if (entry.method != 8)
    throw Error(Errc::unsupported, zip->name(),
                fmt::format("{}: compression {} is not supported",
                            reader::printable_name(entry.name),
                            reader::method_name(entry.method)));
  if (points == RestartPoints::use && !entry.restart_error.empty())
    throw Error(
        Errc::format, zip->name(),
        fmt::format("{}: restart-point index: {}",
                    reader::printable_name(entry.name), entry.restart_error),
        entry.local_header_offset);
  return std::make_shared<DeflatedMember>(std::move(zip), entry, points);
}

}  // namespace libpkg::archive
