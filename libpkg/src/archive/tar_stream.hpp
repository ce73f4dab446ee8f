// SPDX-License-Identifier: BSD-3-Clause
// The tar stream with its structure visible, for compressors that cut it
// into independent pieces (tar_bz2_write.cpp). Private to the archive layer.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "libpkg/archive/tar.hpp"

namespace libpkg::archive {

// The same members as write_tar(), but unblocked: each piece reaches `sink`
// as libarchive writes it and nothing follows the two zero end blocks (the
// tar a .tar.bz2 holds). `before_data(size)` is called right before the
// content of every file entry, after its header reached `sink`, so the
// next `size` bytes the sink sees are that file's bytes. Throws as
// write_tar() does.
void write_tar_unblocked(const std::vector<TarEntry>& entries,
                         const TarWriteOptions& options, const TarSink& sink,
                         const std::string& name,
                         const std::function<void(u64)>& before_data);

// write_tar_zst() with `zstd.independent_frames` (tar_zst_frames.cpp).
// Throws Errc::usage when !zstd_frames_supported(zstd.level), and what
// write_tar_zst() throws.
void write_tar_zst_frames(const std::vector<TarEntry>& entries,
                          const TarWriteOptions& options,
                          const ZstdOptions& zstd, u64 tar_bytes,
                          const TarSink& sink, const std::string& name);

}  // namespace libpkg::archive
