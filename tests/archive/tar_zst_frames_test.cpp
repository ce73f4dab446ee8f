// SPDX-License-Identifier: BSD-3-Clause
// `.tar.zst` as independent frames (ZstdOptions::independent_frames,
// archive/tar_zst_frames.cpp): libzstd's own streaming decoder reads the
// concatenated frames back to exactly write_tar()'s tar; frames are cut on
// the grid of zstd_frame_size and at large files; the same bytes for any
// thread count and with or without the chunk cache; a large file's frames
// independent of what precedes it; a planted entry refused; the bound holds.
#include <gtest/gtest.h>
#include <libdeflate.h>
#include <zstd.h>

#include "../base/temp_dir.hpp"
#include "libpkg/base/error.hpp"
#include "planted_entry.hpp"
#include "segment_fixtures.hpp"

namespace libpkg::archive {
namespace {

using libpkg::testing::TempDir;
using namespace libpkg::archive::testing;

constexpr int kLevel = 3;  // frames of 8 MiB

std::vector<u8> decompress_all(std::span<const u8> stream) {
  std::unique_ptr<ZSTD_DCtx, size_t (*)(ZSTD_DCtx*)> d(ZSTD_createDCtx(),
                                                       ZSTD_freeDCtx);
  std::vector<u8> out;
  std::vector<u8> buf(1 << 20);
  ZSTD_inBuffer in{stream.data(), stream.size(), 0};
  while (in.pos < in.size) {
    ZSTD_outBuffer o{buf.data(), buf.size(), 0};
    const size_t rc = ZSTD_decompressStream(d.get(), &o, &in);
    EXPECT_FALSE(ZSTD_isError(rc)) << ZSTD_getErrorName(rc);
    if (ZSTD_isError(rc)) break;
    out.insert(out.end(), buf.data(), buf.data() + o.pos);
  }
  return out;
}

// Sizes of the frames of `stream`, in order.
std::vector<u64> frame_contents(std::span<const u8> stream) {
  std::vector<u64> sizes;
  while (!stream.empty()) {
    const size_t n = ZSTD_findFrameCompressedSize(stream.data(), stream.size());
    EXPECT_FALSE(ZSTD_isError(n));
    if (ZSTD_isError(n)) break;
    sizes.push_back(ZSTD_getFrameContentSize(stream.data(), n));
    stream = stream.subspan(n);
  }
  return sizes;
}

Written write(const std::vector<TarEntry>& entries, unsigned threads,
              std::shared_ptr<ChunkCache> cache = nullptr) {
  ZstdOptions o;
  o.level = kLevel;
  o.threads = threads;
  o.independent_frames = true;
  o.cache = cache;
  const u64 tar_bytes = tar_size(entries, {1700000000});
  Written w;
  write_tar_zst(
      entries, {1700000000}, o, tar_bytes,
      [&](std::span<const u8> b) {
        w.bytes.insert(w.bytes.end(), b.begin(), b.end());
      },
      "test.tar.zst");
  if (cache) w.counters = cache->counters();
  EXPECT_LE(w.bytes.size(),
            zstd_frames_bound(tar_bytes, entries.size(), kLevel));
  return w;
}

TEST(ZstdFrames, FramesDecodeToTheTarAndFollowTheRule) {
  // 9 MiB of the large file: one 8 MiB frame and a 1 MiB one of its own;
  // the small files before it one frame, the rest after it another.
  const std::vector<u8> big = binary_like(9 << 20, 21);
  const std::vector<TarEntry> entries = package_entries(big, "");
  const Written w = write(entries, 2);
  EXPECT_EQ(decompress_all(w.bytes), tar_of(entries));
  const std::vector<u64> frames = frame_contents(w.bytes);
  ASSERT_EQ(frames.size(), 4u);
  EXPECT_EQ(frames[1], u64{8} << 20);
  EXPECT_EQ(frames[2], big.size() - (u64{8} << 20));
  EXPECT_EQ(zstd_frame_size(kLevel), u64{8} << 20);
  EXPECT_EQ(zstd_frame_size(19), u64{32} << 20);
}

TEST(ZstdFrames, SameBytesForAnyThreadCountWithAndWithoutTheCache) {
  TempDir tmp;
  const std::vector<TarEntry> entries =
      package_entries(binary_like(9 << 20, 22), "");
  const Written one = write(entries, 1);
  EXPECT_EQ(write(entries, 3).bytes, one.bytes);
  std::vector<std::string> log;
  const Written cold = write(entries, 2, open_cache(tmp.path() / "c", &log));
  EXPECT_EQ(cold.bytes, one.bytes);
  EXPECT_EQ(cold.counters.misses, 2u);  // the large file's two frames
  const Written warm = write(entries, 1, open_cache(tmp.path() / "c", &log));
  EXPECT_EQ(warm.bytes, one.bytes);
  EXPECT_EQ(warm.counters.hits, 2u);
  EXPECT_EQ(warm.counters.misses, 0u);
  EXPECT_EQ(warm.counters.bytes_saved, u64{9} << 20);
  EXPECT_TRUE(log.empty()) << log.front();
}

TEST(ZstdFrames, LargeFileFramesDoNotDependOnWhatPrecedesThem) {
  TempDir tmp;
  const std::vector<u8> big = binary_like(9 << 20, 23);
  write(package_entries(big, "a-"), 2, open_cache(tmp.path() / "c", nullptr));
  const std::vector<TarEntry> other = other_package_entries(big);
  const Written b = write(other, 2, open_cache(tmp.path() / "c", nullptr));
  EXPECT_EQ(b.counters.hits, 2u);
  EXPECT_EQ(b.counters.misses, 0u);
  EXPECT_EQ(b.bytes, write(other, 1).bytes);
}

TEST(ZstdFrames, PlantedEntryWithForgedChecksumsIsRefused) {
  TempDir tmp;
  const std::vector<u8> big = binary_like(9 << 20, 24);
  const std::vector<TarEntry> entries = package_entries(big, "");
  const std::span<const u8> first = std::span(big).first(8 << 20);
  std::vector<u8> other(first.begin(), first.end());
  other[12345] ^= 1;
  // A valid frame of other bytes under the first frame's key, with the
  // first frame's CRC in the header.
  std::vector<u8> forged(ZSTD_compressBound(other.size()));
  forged.resize(ZSTD_compress(forged.data(), forged.size(), other.data(),
                              other.size(), 1));
  const Written clean = write(entries, 2);
  std::vector<std::string> log;
  auto planted = open_cache(tmp.path() / "p", &log);
  // The key is the writer's (its identity string is internal): a cold run
  // stores it, as the one entry whose frame holds 8 MiB.
  write(entries, 2, open_cache(tmp.path() / "p", nullptr));
  size_t replaced = 0;
  for (const auto& sub : fs::directory_iterator(tmp.path() / "p")) {
    if (!sub.is_directory()) continue;  // the tag key
    for (const auto& e : fs::directory_iterator(sub.path())) {
      // The entry whose stored frame decodes to the first 8 MiB.
      std::vector<u8> bytes = read_file(e.path());
      std::span<const u8> frame = std::span(bytes).subspan(32);
      if (ZSTD_getFrameContentSize(frame.data(), frame.size()) != first.size())
        continue;
      const std::string name =
          sub.path().filename().string() + e.path().filename().string();
      ChunkCache::Key key{};
      for (size_t i = 0; i < key.size(); ++i)
        key[i] = static_cast<u8>(std::stoi(name.substr(2 * i, 2), nullptr, 16));
      plant_entry(*planted, key,
                  libdeflate_crc32(0, first.data(), first.size()), forged);
      ++replaced;
    }
  }
  ASSERT_EQ(replaced, 1u);
  const Written w = write(entries, 2, planted);
  EXPECT_EQ(w.bytes, clean.bytes);
  EXPECT_EQ(w.counters.corrupt, 1u);
  ASSERT_EQ(log.size(), 1u);
  EXPECT_NE(log[0].find("do not decode to the chunk's input"),
            std::string::npos)
      << log[0];
}

TEST(ZstdFrames, LevelsAboveNineteenAreRefused) {
  EXPECT_TRUE(zstd_frames_supported(19));
  EXPECT_FALSE(zstd_frames_supported(20));
  ZstdOptions o;
  o.level = 20;
  o.independent_frames = true;
  const std::vector<TarEntry> entries = {small_file("a", "x")};
  EXPECT_THROW(write_tar_zst(
                   entries, {0}, o, tar_size(entries, {0}),
                   [](std::span<const u8>) {}, "x.tar.zst"),
               Error);
}

}  // namespace
}  // namespace libpkg::archive
