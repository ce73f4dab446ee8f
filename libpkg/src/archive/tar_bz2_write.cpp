// SPDX-License-Identifier: BSD-3-Clause
// `.tar.bz2`: the tar stream cut into bzip2 blocks (segment_writer.hpp's
// rule, each block filled to libbz2's limit by Bzip2BlockCutter),
// compressed in parallel on the pool with libbz2 and joined bit-exactly
// into one stream (bzip2_join.hpp). The blocks of large files go through
// the chunk cache.
//
// Memory: a block holds up to 900 kB of run-length-encoded input, which is
// ~900 kB of input for real files (up to 45 MB for a run of one byte
// value: 255 equal bytes encode in 5), plus its compressed bytes; at most
// 2T + 2 blocks are in flight.
#include "archive/bzip2_block.hpp"
#include "archive/bzip2_join.hpp"
#include "archive/segment_writer.hpp"
#include "libpkg/archive/chunk_cache.hpp"
#include "libpkg/archive/tar.hpp"
#include "libpkg/base/atomic_file.hpp"
#include "libpkg/base/error.hpp"

namespace libpkg::archive {
namespace {

class Bzip2Codec final : public SegmentCodec {
 public:
  Bzip2Codec(int level, TarSink out)
      : level_(level), cutter_(level), joiner_(level, std::move(out)) {}

  size_t fit(std::span<const u8> bytes) override { return cutter_.fit(bytes); }
  void reset() override { cutter_.reset(); }
  void compress(std::span<const u8> input, std::vector<u8>& out,
                const std::string& name) const override {
    compress_bzip2_block(input, level_, name, out);
  }
  bool well_formed(std::span<const u8> stored) const override {
    return parse_bzip2_block(stored, level_).has_value();
  }
  bool decodes_to(std::span<const u8> stored,
                  std::span<const u8> input) const override {
    return bzip2_block_decodes_to(stored, level_, input);
  }
  // libbz2's documented bound (compress_bzip2_block).
  u64 capacity(u64 input) const override { return input + input / 100 + 600; }
  std::string identity() const override {
    return bzip2_encoder_identity(level_);
  }
  void append(std::span<const u8> stored) override {
    // Checked by well_formed() or decodes_to() on the worker already.
    joiner_.append(stored, *parse_bzip2_block(stored, level_));
  }
  u64 finish() override {
    joiner_.finish();
    return joiner_.written();
  }

 private:
  int level_;
  Bzip2BlockCutter cutter_;
  Bzip2Joiner joiner_;
};

}  // namespace

u64 write_tar_bz2(const std::filesystem::path& target,
                  const std::vector<TarEntry>& entries,
                  const TarWriteOptions& options, const Bzip2Options& bzip2) {
  if (bzip2.level < 1 || bzip2.level > 9) {
    throw Error(Errc::usage, target.string(),
                "bzip2 level must be 1..9, got " + std::to_string(bzip2.level));
  }
  AtomicFile out = AtomicFile::create(target);
  u64 written = 0;
  {
    Bzip2Codec codec(bzip2.level,
                     [&out](std::span<const u8> bytes) { out.write(bytes); });
    SegmentWriter writer(codec, bzip2.pool, bzip2.threads, bzip2.cache.get(),
                         target.string());
    written = write_tar_segments(entries, options, writer, target.string());
  }
  out.commit();
  return written;
}

u64 write_tar_bz2(const std::filesystem::path& target,
                  const std::vector<TarEntry>& entries,
                  const TarWriteOptions& options, int level) {
  Bzip2Options bzip2;
  bzip2.level = level;
  return write_tar_bz2(target, entries, options, bzip2);
}

}  // namespace libpkg::archive
