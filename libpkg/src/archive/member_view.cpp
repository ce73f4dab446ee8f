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
// later request that falls into a gap restarts the inflater from the start.
// Memory is then the prefix, the islands and the scratch buffer, whatever
// the member's size; the compressed input already consumed is released
// from the archive's mapping as the inflater moves on (file-backed readers).
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
      inflater_.reset();
      throw;
    }
  }

 private:
  // Ranges are filled in whole steps, so a reader walking a table entry by
  // entry does not call zlib per entry; gaps up to kNear after the prefix
  // are filled rather than skipped.
  static constexpr u64 kStep = u64{256} << 10;
  static constexpr u64 kNear = u64{1} << 20;

  bool covered(u64 b, u64 e) const {
    if (e <= prefix_.load(std::memory_order_relaxed)) return true;
    for (const auto& [ib, ie] : islands_)
      if (ib <= b && e <= ie) return true;
    return false;
  }

  // Inflates up to `to`, into the view (keep) or the scratch buffer. Bytes
  // already filled (the prefix, islands) are never written again: readers
  // read them without the lock.
  void advance(u64 to, bool keep) const {
    while (pos_ < to) {
      u64 stop = to;
      bool into_view = keep && pos_ >= prefix_.load(std::memory_order_relaxed);
      // Up to the next boundary between filled and unfilled bytes.
      for (const auto& [ib, ie] : islands_) {
        if (ib <= pos_ && pos_ < ie) {
          into_view = false;
          stop = std::min(stop, ie);
        } else if (pos_ < ib) {
          stop = std::min(stop, ib);
        }
      }
      const u64 prefix = prefix_.load(std::memory_order_relaxed);
      if (pos_ < prefix) stop = std::min(stop, prefix);
      const u64 n = std::min<u64>(
          stop - pos_, into_view ? u64{1} << 30 : u64{scratch_.size()});
      std::span<u8> out =
          into_view
              ? std::span<u8>(base_ + pos_, static_cast<std::size_t>(n))
              : std::span<u8>(scratch_).first(static_cast<std::size_t>(n));
      const std::size_t got = inflater_->next(out);
      if (got == 0) break;  // only at the declared size
      if (hash_) hash_->update(out.first(got));
      pos_ += got;
      decoded_.fetch_add(got, std::memory_order_relaxed);
    }
  }

  void fill(u64 b, u64 e) const {
    const u64 prefix = prefix_.load(std::memory_order_relaxed);
    const u64 from = b <= prefix + kNear ? prefix : b;
    // The prefix grows in steps; an island is just the range asked for (a
    // table read whole), so reading it never reaches further into the file.
    const u64 to =
        from == prefix ? std::min(size_, std::max(e, from + kStep)) : e;
    // Start at the last restart point at or before `from` when the
    // inflater would otherwise restart or inflate through the gap to it.
    const auto& points = entry_.restart_points;
    const std::size_t k = static_cast<std::size_t>(
        std::upper_bound(points.begin(), points.end(), from,
                         [](u64 off, const RestartPoint& p) {
                           return off < p.uncompressed;
                         }) -
        points.begin());
    const u64 k_at = k == 0 ? 0 : points[k - 1].uncompressed;
    if (!inflater_ || pos_ > from || k_at > pos_) {
      // From the start the index is ignored (a sequential read, as any
      // full read); from a point it is checked as far as it is used.
      inflater_.emplace(zip_->name(), entry_, zip_->raw(entry_),
                        /*release_input=*/zip_->descriptor() != nullptr,
                        k == 0 ? reader::MemberInflater::Mode::sequential
                               : reader::MemberInflater::Mode::checked,
                        k);
      pos_ = k_at;
      // Hashed along when decoding from the start: reaching the end in
      // this one pass gives the member's SHA-256 (digest()).
      if (k == 0 && !digest_)
        hash_.emplace();
      else
        hash_.reset();
    }
    if (scratch_.empty()) scratch_.resize(kStep);
    if (pos_ < from) advance(from, /*keep=*/false);
    advance(to, /*keep=*/true);
    if (from == prefix) {
      u64 p = to;
      // Islands the prefix has reached join it.
      std::erase_if(islands_, [&](const std::pair<u64, u64>& r) {
        if (r.first > p) return false;
        p = std::max(p, r.second);
        return true;
      });
      prefix_.store(p, std::memory_order_release);
    } else {
      islands_.emplace_back(from, to);
    }
    // At the declared end the stream's end and the CRC are checked too.
    if (pos_ == size_) {
      inflater_->next({});
      inflater_.reset();
      pos_ = 0;
      if (hash_) {
        const Sha256::Digest d = hash_->finish();
        hash_.reset();
        std::lock_guard lock(digest_mutex_);
        digest_ = d;
      }
    }
  }

  std::shared_ptr<const ZipReader> zip_;
  ZipEntry entry_;
  u64 size_;
  u8* base_ = nullptr;
  mutable std::mutex mutex_;
  mutable std::atomic<u64> prefix_{0};                // [0, prefix_) is filled
  mutable std::vector<std::pair<u64, u64>> islands_;  // filled, past prefix_
  mutable std::optional<reader::MemberInflater> inflater_;
  mutable u64 pos_ = 0;  // what inflater_ has produced
  mutable std::vector<u8> scratch_;
  mutable std::exception_ptr failure_;
  mutable std::atomic<u64> decoded_{0};
  // The SHA-256 of this pass, while it decodes from the start; the whole
  // member's once a pass from the start reached the end.
  mutable std::optional<Sha256> hash_;
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
