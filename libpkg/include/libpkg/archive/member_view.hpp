// SPDX-License-Identifier: BSD-3-Clause
// A zip member read in place, as far as it is read.
//
// Analysing the ELF files of a wheel needs their headers, program headers,
// dynamic section, dynamic strings, version tables and (when symbols are
// asked) the dynamic symbols: the first pages of each library. A stored
// member is viewed in the archive's mapping, where only the pages read are
// faulted in. A deflated member gets an address range of its declared size
// (reserved, not allocated) that is inflated front to back only as far as
// the furthest byte a reader asks for (ByteFiller), so `pkgtool show` of a
// wheel with a GB of libraries inflates a few MB; a read behind the
// inflater starts from the last resume point it left before the range (one
// every 8 MiB), not from the member's start. Reading a member to its
// declared end checks its CRC-32 and the end of the stream, as a full read
// does; a member read only in part has only that part checked (corrupt or
// truncated data before that point is still an error naming the member).
// With RestartPoints::use, a range far into a member is reached from the
// last restart point before it; the CRC-32 is then never checked (it needs
// the whole member from its start), what is checked is listed in
// docs/archives.md ("Restart points").
#pragma once

#include <array>
#include <memory>
#include <optional>
#include <string>

#include "libpkg/archive/zip_reader.hpp"
#include "libpkg/base/bytes.hpp"

namespace libpkg::archive {

/// One zip member's bytes as a ByteView, filled on demand for a deflated
/// member.
class MemberView {
 public:
  virtual ~MemberView() = default;
  /// The member's bytes as one view of its declared size; `name` is what
  /// parse errors call the file (e.g. where the member would be unpacked).
  /// Filling errors name the archive and the member. Valid while this
  /// MemberView lives.
  /// Never throws itself; reading the view throws Error(Errc::format) when
  /// the member does not inflate (CRC, truncation).
  virtual ByteView view(std::string name) const = 0;
  /// How many bytes have been inflated so far (stored members: 0).
  /// Never throws.
  virtual u64 inflated() const = 0;
  /// How many bytes the view's inflaters have produced in all, counting
  /// what was decoded only to pass over it and every decode started over
  /// (a read behind the inflater's position, sequentially, starts the
  /// member again). Stored members: 0. Never throws.
  virtual u64 decoded() const = 0;
  /// The SHA-256 of the whole member when one inflater decoded it from its
  /// start to its declared end without starting over (the stream's end and
  /// CRC-32 checked there, as a full read checks them): what a sequential
  /// read would hash, so a repair's RECORD check need not inflate it again.
  /// nullopt otherwise (read in part, started over, stored, or a view that
  /// uses restart points: only a sequential view hashes). Never throws.
  virtual std::optional<std::array<u8, 32>> digest() const = 0;
};

/// Whether a view may enter a deflated member at its restart points
/// (ZipEntry::restart_points) to reach a far range without inflating the
/// gap. The index comes from the file: `use` only where a crafted index
/// can do no harm (docs/archives.md, "Trust"); `ignore` decodes every
/// member sequentially from its start.
enum class RestartPoints { ignore, use };

/// `zip` must be a reader of a file or of bytes; the view keeps it alive.
/// Refuses (Errc::unsupported, naming the member) methods other than stored
/// and deflated.
/// Also throws Errc::format for a stored member whose size is not the declared
/// one, for a member whose restart-point index is malformed when `points`
/// is `use`, and Errc::io when the inflate buffer cannot be mapped.
std::shared_ptr<const MemberView> open_member(
    std::shared_ptr<const ZipReader> zip, const ZipEntry& entry,
    RestartPoints points = RestartPoints::ignore);

}  // namespace libpkg::archive
