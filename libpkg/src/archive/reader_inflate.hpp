// SPDX-License-Identifier: BSD-3-Clause
// Streaming decompression of one zip member (private to the archive layer).
//
// Members of a wheel or a .conda can be GB-sized, so they are never inflated
// into one buffer: output goes to the sink in bounded pieces, and the
// declared size and CRC-32 are enforced while streaming, so a lying header
// can neither make us produce more than it declared nor pass corrupt data.
#pragma once

#include <zlib.h>

#include <functional>
#include <span>
#include <string>
#include <vector>

#include "libpkg/archive/zip_reader.hpp"

namespace libpkg::archive::reader {

// Largest piece handed to the sink.
inline constexpr std::size_t kPieceSize = 256 * 1024;

// Where an inflater of ours stood between two deflate blocks: enough to
// start another there (zlib's zran.c technique: the bit position, and the
// 32 KiB of output that back-references may reach). Recorded only by an
// inflater decoding the member itself (record_resume_points()), so it
// resumes exactly where that one was; never read from the archive.
struct ResumePoint {
  u64 bit = 0;       // compressed offset of the next block's header, in bits
  u64 produced = 0;  // uncompressed offset there
  std::vector<u8> window;  // the last <= 32 KiB produced before it
};

// How many of `points` (sorted by uncompressed offset, as ZipEntry keeps
// them) lie at or before uncompressed offset `offset`: k, where point k - 1
// is the last of them (0: none), the start MemberInflater's checked mode
// takes.
std::size_t restart_points_through(const std::vector<RestartPoint>& points,
                                   u64 offset);

// Inflates one deflated member front to back, in as many calls as the
// caller likes (a lazy member view inflates only as far as it is read).
// Every refusal names `archive` and the member (Errc::format): corrupt or
// truncated data, a stream ending before the declared size; once the
// declared size is reached, next() also checks that the stream ends there
// with nothing after it and that the CRC-32 matches.
//
// Mode::checked starts at restart point `start` (0: the member's start;
// k > 0: entry.restart_points[k - 1], see ZipEntry) and checks the index as
// it goes: every later point it reaches must be a block boundary of what
// it decodes, at exactly that compressed offset, else next() throws naming
// the point. The CRC-32 covers the whole member, so it is checked only by
// an inflater started at the member's beginning; one started at a point
// checks the stream's end, not the CRC. Mode::sequential ignores the index
// (what every full read does: it cannot change what a member inflates to).
// Mode::blocks is sequential too and reports every block boundary through
// next_piece() (the splice's scan, splice.hpp).
class MemberInflater {
 public:
  enum class Mode { sequential, checked, blocks };

  // `raw` (the member's compressed data) must outlive the inflater. With
  // `release_input`, `raw` lies in a read-only file mapping and the pages
  // zlib has consumed are dropped from it (MADV_DONTNEED: they are read
  // again from the file if touched again), so streaming a GB member does
  // not leave a GB of the archive resident.
  MemberInflater(const std::string& archive, const ZipEntry& entry,
                 std::span<const u8> raw, bool release_input = false,
                 Mode mode = Mode::sequential, std::size_t start = 0);
  // Starts at `at`, recorded by an inflater of this member: like a start at
  // a restart point, the CRC-32 is then not checked (the stream's end is);
  // the restart points after `at` are checked as Mode::checked does.
  MemberInflater(const std::string& archive, const ZipEntry& entry,
                 std::span<const u8> raw, bool release_input,
                 const ResumePoint& at);
  ~MemberInflater();
  MemberInflater(const MemberInflater&) = delete;
  MemberInflater& operator=(const MemberInflater&) = delete;

  // Writes the next bytes of the member to `out` (at least one, at most
  // out.size()); 0 once the whole member is produced and checked.
  std::size_t next(std::span<u8> out);
  // The member's uncompressed offset reached (from its start).
  u64 produced() const { return produced_; }
  // From now on, appends a ResumePoint to `into` at the first block
  // boundary every `every` bytes of output past its last point (next()
  // then stops at block boundaries, which costs nothing measurable).
  // Memory stays bounded (32 KiB per point) for any declared size: when
  // `into` holds `max_points`, every other point is dropped and the
  // spacing doubles. `into` must outlive the inflater.
  void record_resume_points(std::vector<ResumePoint>& into, u64 every,
                            std::size_t max_points = 512);

  // Mode::blocks: one inflate step. `got` bytes were written to `out`;
  // `boundary` says the stream now stands between two blocks, at bit
  // `bit` of the compressed data, after a block marked final when
  // `final_block`; `done` once the stream ended and was checked (size,
  // nothing after it, CRC).
  struct Piece {
    std::size_t got = 0;
    bool boundary = false;
    u64 bit = 0;
    bool final_block = false;
    bool done = false;
  };
  Piece next_piece(std::span<u8> out);

 private:
  struct Step {
    u64 got = 0;
    bool ended = false;     // the deflate stream ended
    bool boundary = false;  // stopped between two blocks (Z_BLOCK only)
    bool progress = false;  // input or output moved, or a boundary
  };
  void feed();
  Step step(u8* out, uInt n);
  void account(std::span<const u8> out, const Step& st);
  void finish();
  void check_point();
  void record_resume_point();
  u64 bit_position() const;
  [[noreturn]] void point_mismatch(const std::string& what) const;

  std::string archive_;
  const ZipEntry& entry_;
  std::span<const u8> raw_;
  bool release_input_;
  bool from_start_;  // started at the member's beginning: CRC checked
  int flush_;        // Z_NO_FLUSH, or Z_BLOCK to see block boundaries
  z_stream z_{};
  u64 in_pos_ = 0;    // input handed to zlib so far
  u64 released_ = 0;  // input dropped from the mapping so far
  u64 produced_ = 0;
  std::size_t next_point_ = 0;  // index of the next point to check
  u32 crc_ = 0;
  bool stream_ended_ = false, finished_ = false;
  std::vector<ResumePoint>* resume_points_ = nullptr;
  u64 resume_every_ = 0;
  std::size_t resume_max_ = 0;
};

// `raw` is the member's compressed data; errors name `archive` and the
// member and throw Errc::format.
void stream_member(const std::string& archive, const ZipEntry& entry,
                   std::span<const u8> raw,
                   const std::function<void(std::span<const u8>)>& sink,
                   bool release_input = false);

// Drops the whole pages of [data, data + n) from a read-only file mapping
// (see MemberInflater); a no-op for n == 0.
void release_mapped(const u8* data, u64 n);

// For a reader moving forward through `base`'s mapping: drops the pages of
// [released, end) and advances `released` (a page boundary) to where it
// stopped. It starts 128 KiB back: a page fault maps the cached pages
// around the faulting one too (the kernel's fault-around, 64 KiB), so
// pages dropped before come back behind a reader and would stay.
void release_consumed(const u8* base, u64& released, u64 end);

// Inflates just the first `n` bytes of a deflated member (fewer if it is
// shorter).
std::vector<u8> inflate_prefix(const std::string& archive,
                               const ZipEntry& entry, std::span<const u8> raw,
                               std::size_t n);

}  // namespace libpkg::archive::reader
