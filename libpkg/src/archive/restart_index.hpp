// SPDX-License-Identifier: BSD-3-Clause
// The restart-point index of a deflated member: a zip extra field (central
// directory only) listing places where inflating can start afresh.
//
// Our writer deflates large members as independent chunks, each non-final
// one ending on a byte boundary (deflate_chunk.hpp), so a decoder can start
// at any chunk boundary with an empty window. Recording where those
// boundaries are, (uncompressed offset, compressed offset) pairs, lets a
// reader inflate a range far into a member without inflating everything
// before it (member_view.hpp) and lets an edit re-use the unchanged chunks'
// compressed bytes (splice.hpp).
//
// Field 0x5052 ("RP" in file order), not in PKWARE's APPNOTE 6.3.10 lists of
// reserved (4.5.2) or third-party (4.6) header IDs, nor among the IDs other
// tools are known to use. Body (little-endian):
//   "LPRX"        4 bytes, so another tool's use of the same ID is told
//                 apart (and ignored) rather than misread
//   version       1 byte, 1
//   points        until the end of the body: per point, two ULEB128 deltas
//                 from the previous point (the first from (0, 0)): the
//                 uncompressed offset, then the compressed offset.
// The start of the member, (0, 0), is always a restart point and is not
// listed. Points are strictly increasing in both offsets and lie inside the
// member (uncompressed offset < size, compressed offset < compressed size).
// The writer keeps the body under kMaxRestartBody bytes (an eighth of what
// the 64 KiB extra field allows), dropping points evenly when a member has
// more: a subset of restart points is still a valid index.
//
// The index comes from an untrusted file: see docs/archives.md for what
// may rely on it and what it verifies. Private to the archive layer.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "libpkg/archive/zip_reader.hpp"

namespace libpkg::archive {

inline constexpr u16 kRestartIndexId = 0x5052;
inline constexpr u8 kRestartIndexVersion = 1;
// Body size the writer stays under (magic and version included).
inline constexpr std::size_t kMaxRestartBody = 8 * 1024;

// The whole extra field (header and body) for `points` (sorted, strictly
// increasing, none at (0, 0)); empty when there are none. Thins the points
// evenly (every k-th kept) until the body fits kMaxRestartBody.
std::vector<u8> encode_restart_extra(std::span<const RestartPoint> points);

// What the central extra data of one entry says about restart points.
struct RestartIndexParse {
  std::vector<RestartPoint> points;
  // Set when a field with our signature is malformed (points dropped).
  std::string error;
};

// Scans `extra` (the central header's whole extra data, whose sub-field
// structure the caller has checked) for our field. A field with ID 0x5052
// but without our signature is someone else's and ignored. Checks the
// bounds and order of the points against the member's sizes; only deflated
// members can have them.
RestartIndexParse parse_restart_extra(std::span<const u8> extra, u16 method,
                                      u64 uncompressed_size,
                                      u64 compressed_size);

}  // namespace libpkg::archive
