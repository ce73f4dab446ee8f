// SPDX-License-Identifier: BSD-3-Clause
// `.tar.zst` as independent zstd frames (ZstdOptions::independent_frames):
// the tar cut by segment_writer.hpp's rule into frames of at most
// zstd_frame_size(level), each compressed on its own on the pool
// (single-threaded libzstd, content size and checksum in every frame) and
// concatenated, which the zstd format allows (a zstd file is one or more
// frames; every reader decodes them in order). The frames of large files
// go through the chunk cache. Measured cost against one multithreaded
// stream at level 19 on the CUDA libraries: bench/RESULTS.md, "`.conda`:
// independent zstd frames".
#include <zstd.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <memory>
#include <mutex>

#include "archive/segment_writer.hpp"
#include "libpkg/archive/tar.hpp"
#include "libpkg/base/error.hpp"
#include "libpkg/base/sha256.hpp"

namespace libpkg::archive {
namespace {

// Version of the frame rules (segment_writer.hpp's cut, zstd_frame_size,
// the frame parameters): part of the cache key.
constexpr int kZstdFrameRulesVersion = 1;
constexpr int kMaxFramesLevel = 19;

struct CCtxFree {
  void operator()(ZSTD_CCtx* c) const { ZSTD_freeCCtx(c); }
};

void check_zstd(std::size_t rc, const std::string& name,
                const std::string& what) {
  if (ZSTD_isError(rc))
    throw Error(Errc::io, name, "zstd " + what + ": " + ZSTD_getErrorName(rc));
}

void compress_frame(std::span<const u8> input, int level, bool checksum,
                    const std::string& name, std::vector<u8>& out) {
  std::unique_ptr<ZSTD_CCtx, CCtxFree> cctx(ZSTD_createCCtx());
  if (!cctx) throw Error(Errc::io, name, "zstd: out of memory");
  ZSTD_CCtx* c = cctx.get();
  check_zstd(ZSTD_CCtx_setParameter(c, ZSTD_c_compressionLevel, level), name,
             "level");
  check_zstd(ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, checksum ? 1 : 0),
             name, "checksum flag");
  check_zstd(ZSTD_CCtx_setParameter(c, ZSTD_c_contentSizeFlag, 1), name,
             "content size flag");
  out.resize(ZSTD_compressBound(input.size()));
  const std::size_t n =
      ZSTD_compress2(c, out.data(), out.size(), input.data(), input.size());
  check_zstd(n, name, "compression");
  out.resize(n);
}

// Whether `stored` is exactly one zstd frame that declares its size.
bool one_frame(std::span<const u8> stored) {
  return ZSTD_findFrameCompressedSize(stored.data(), stored.size()) ==
             stored.size() &&
         ZSTD_getFrameContentSize(stored.data(), stored.size()) <
             ZSTD_CONTENTSIZE_ERROR;
}

std::string encoder_identity(int level, bool checksum) {
  static std::array<std::once_flag, kMaxFramesLevel + 1> once;
  static std::array<std::string, kMaxFramesLevel + 1> prints;
  if (level < 1 || level > kMaxFramesLevel) return "no level";
  std::call_once(once[level], [level] {
    // Text-like bytes with repeats at many distances, so that matching
    // and entropy coding both show in the output.
    std::vector<u8> probe(64 * 1024);
    u32 x = 24680;
    for (size_t i = 0; i < probe.size(); ++i) {
      x = x * 1103515245u + 12345u;
      probe[i] = (x >> 24) % 3 == 0 && i >= 4096
                     ? probe[i - 1 - (x >> 8) % 4000]
                     : static_cast<u8>('a' + (x >> 16) % 19);
    }
    std::string print = "no encoder";
    try {
      std::vector<u8> out;
      compress_frame(probe, level, false, "<probe>", out);
      Sha256 h;
      h.update(out);
      print = Sha256::hex(h.finish());
    } catch (const Error&) {
    }
    prints[level] = print;
  });
  return "libpkg zstd frame; libzstd " + std::string(ZSTD_versionString()) +
         "; encoder " + prints[level] + "; rules " +
         std::to_string(kZstdFrameRulesVersion) + "; level " +
         std::to_string(level) + "; checksum " + (checksum ? "1" : "0");
}

class ZstdFrameCodec final : public SegmentCodec {
 public:
  ZstdFrameCodec(int level, bool checksum, const TarSink& out)
      : level_(level),
        checksum_(checksum),
        frame_size_(zstd_frame_size(level)),
        out_(out) {}

  size_t fit(std::span<const u8> bytes) override {
    const size_t n =
        static_cast<size_t>(std::min<u64>(bytes.size(), frame_size_ - used_));
    used_ += n;
    return n;
  }
  void reset() override { used_ = 0; }
  void compress(std::span<const u8> input, std::vector<u8>& out,
                const std::string& name) const override {
    compress_frame(input, level_, checksum_, name, out);
  }
  bool well_formed(std::span<const u8> stored) const override {
    return one_frame(stored);
  }
  bool decodes_to(std::span<const u8> stored,
                  std::span<const u8> input) const override {
    if (!one_frame(stored) ||
        ZSTD_getFrameContentSize(stored.data(), stored.size()) != input.size())
      return false;
    std::vector<u8> plain(input.size());
    const std::size_t n = ZSTD_decompress(plain.data(), plain.size(),
                                          stored.data(), stored.size());
    return !ZSTD_isError(n) && n == input.size() &&
           std::memcmp(plain.data(), input.data(), input.size()) == 0;
  }
  u64 capacity(u64 input) const override {
    return ZSTD_compressBound(static_cast<std::size_t>(input));
  }
  std::string identity() const override {
    return encoder_identity(level_, checksum_);
  }
  void append(std::span<const u8> stored) override {
    out_(stored);
    written_ += stored.size();
  }
  u64 finish() override { return written_; }

 private:
  int level_;
  bool checksum_;
  u64 frame_size_;
  const TarSink& out_;
  u64 used_ = 0;
  u64 written_ = 0;
};

}  // namespace

bool zstd_frames_supported(int level) {
  return level >= 1 && level <= kMaxFramesLevel;
}

u64 zstd_frame_size(int level) {
  // Four windows of libzstd 1.5's default parameters for the level (what
  // its multithreaded mode takes as one job): 8 MiB up to level 8, 16 MiB
  // for 9-16, 32 MiB for 17-19.
  if (level <= 8) return u64{8} << 20;
  if (level <= 16) return u64{16} << 20;
  return u64{32} << 20;
}

u64 zstd_frames_bound(u64 tar_bytes, u64 entries, int level) {
  // Frames: the grid of zstd_frame_size plus at most two more cuts per
  // file (where its own frames start and end). Each frame's bound exceeds
  // its share of ZSTD_compressBound(total) by at most 1 + 64 bytes.
  const u64 frames = tar_bytes / zstd_frame_size(level) + 2 * entries + 2;
  return zstd_bound(tar_bytes) + frames * 65;
}

void write_tar_zst_frames(const std::vector<TarEntry>& entries,
                          const TarWriteOptions& options,
                          const ZstdOptions& zstd, u64 tar_bytes,
                          const TarSink& sink, const std::string& name) {
  if (!zstd_frames_supported(zstd.level))
    throw Error(Errc::usage, name,
                "independent zstd frames need a level 1.." +
                    std::to_string(kMaxFramesLevel) + ", got " +
                    std::to_string(zstd.level));
  ZstdFrameCodec codec(zstd.level, zstd.checksum, sink);
  // A frame is up to 32 MiB in and as much out, and each worker holds a
  // level-19 context (~80 MiB): T + 1 frames in flight keep the workers
  // busy without the bzip2 writer's 2T + 2.
  SegmentWriter writer(codec, zstd.pool, std::max(1u, zstd.threads),
                       zstd.cache.get(), name, /*per_worker=*/1);
  write_tar_segments(entries, options, writer, name, tar_bytes, zstd.progress);
}

}  // namespace libpkg::archive
