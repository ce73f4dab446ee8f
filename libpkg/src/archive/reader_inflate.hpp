// SPDX-License-Identifier: BSD-3-Clause
// Streaming decompression of one zip member (private to the archive layer).
//
// Members of a wheel or a .conda can be GB-sized, so they are never inflated
// into one buffer: output goes to the sink in bounded pieces, and the
// declared size and CRC-32 are enforced while streaming, so a lying header
// can neither make us produce more than it declared nor pass corrupt data.
#pragma once

#include <functional>
#include <span>
#include <string>
#include <vector>

#include "libpkg/archive/zip_reader.hpp"

namespace libpkg::archive::reader {

// Largest piece handed to the sink.
inline constexpr std::size_t kPieceSize = 256 * 1024;

// `raw` is the member's compressed data; errors name `archive` and the
// member and throw Errc::format.
void stream_member(const std::string& archive, const ZipEntry& entry,
                   std::span<const u8> raw,
                   const std::function<void(std::span<const u8>)>& sink);

// Inflates just the first `n` bytes of a deflated member (fewer if it is
// shorter).
std::vector<u8> inflate_prefix(const std::string& archive,
                               const ZipEntry& entry, std::span<const u8> raw,
                               std::size_t n);

}  // namespace libpkg::archive::reader
