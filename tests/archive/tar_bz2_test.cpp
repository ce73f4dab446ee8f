// SPDX-License-Identifier: BSD-3-Clause
// The parallel .tar.bz2 writer (archive/tar_bz2_write.cpp): blocks cut
// within libbz2's limit, one-block streams parsed and joined bit-exactly,
// the joined stream decoded by libbz2's own decompressor to exactly the
// tar, the same bytes for any thread count and with or without the chunk
// cache, large files' blocks independent of what precedes them, and a
// planted cache entry refused.
#include <bzlib.h>
#include <gtest/gtest.h>
#include <libdeflate.h>

#include <filesystem>
#include <fstream>
#include <random>

#include "../base/temp_dir.hpp"
#include "archive/bzip2_block.hpp"
#include "archive/bzip2_join.hpp"
#include "libpkg/archive/chunk_cache.hpp"
#include "libpkg/archive/tar.hpp"
#include "libpkg/base/error.hpp"
#include "planted_entry.hpp"
#include "segment_fixtures.hpp"

namespace libpkg::archive {
namespace {

namespace fs = std::filesystem;
using libpkg::testing::TempDir;
using namespace libpkg::archive::testing;

std::vector<u8> decompress_all(std::span<const u8> stream) {
  bz_stream s{};
  EXPECT_EQ(BZ2_bzDecompressInit(&s, 0, 0), BZ_OK);
  std::vector<u8> out;
  std::vector<char> buf(1 << 20);
  s.next_in = const_cast<char*>(reinterpret_cast<const char*>(stream.data()));
  s.avail_in = static_cast<unsigned>(stream.size());
  int rc = BZ_OK;
  while (rc == BZ_OK) {
    s.next_out = buf.data();
    s.avail_out = static_cast<unsigned>(buf.size());
    rc = BZ2_bzDecompress(&s);
    out.insert(out.end(), buf.data(), s.next_out);
  }
  EXPECT_EQ(rc, BZ_STREAM_END);
  EXPECT_EQ(s.avail_in, 0u) << "bytes after the end of the stream";
  BZ2_bzDecompressEnd(&s);
  return out;
}

// The blocks the cutter makes of `data` from a fresh block on.
std::vector<std::span<const u8>> cut_all(std::span<const u8> data, int level) {
  Bzip2BlockCutter cutter(level);
  std::vector<std::span<const u8>> blocks;
  while (!data.empty()) {
    const size_t n = cutter.fit(data);
    EXPECT_GT(n, 0u);
    blocks.push_back(data.first(n));
    data = data.subspan(n);
    cutter.reset();
  }
  return blocks;
}

// Every block the cutter allows compresses to exactly one libbz2 block
// (parse_bzip2_block finds the end marker's CRC equal to the block's)
// and decodes back.
void expect_one_block_each(std::span<const u8> data, int level) {
  for (std::span<const u8> block : cut_all(data, level)) {
    std::vector<u8> stream;
    compress_bzip2_block(block, level, "test", stream);
    ASSERT_TRUE(parse_bzip2_block(stream, level))
        << block.size() << "-byte block did not compress to one block";
    EXPECT_TRUE(bzip2_block_decodes_to(stream, level, block));
  }
}

TEST(TarBz2, CutterFillsBlocksExactlyToLibbz2sLimit) {
  constexpr int kLevel = 1;
  const u64 limit = bzip2_block_limit(kLevel);
  ASSERT_EQ(limit, 99981u);
  // No two equal neighbours: one encoded byte per byte.
  std::vector<u8> distinct(300000);
  for (size_t i = 0; i < distinct.size(); ++i)
    distinct[i] = static_cast<u8>(i % 251);
  EXPECT_EQ(cut_all(distinct, kLevel)[0].size(), limit);
  expect_one_block_each(distinct, kLevel);
  // Runs of four (4 bytes -> 5, the first pass's worst case): 19996 runs
  // take 99980 bytes, one more byte fits, its second would not.
  std::vector<u8> fours;
  for (int i = 0; fours.size() < 300000; ++i)
    fours.insert(fours.end(), 4, static_cast<u8>(i % 2 ? 'a' : 'b'));
  EXPECT_EQ(cut_all(fours, kLevel)[0].size(), 19996u * 4 + 1);
  expect_one_block_each(fours, kLevel);
  // One long run: 255 bytes -> 5.
  std::vector<u8> zeros(12 << 20, 0);
  EXPECT_EQ(cut_all(zeros, kLevel)[0].size(), 19996u * 255 + 1);
  expect_one_block_each(zeros, kLevel);
  for (u32 seed = 1; seed <= 4; ++seed)
    expect_one_block_each(binary_like(400000, seed), kLevel);
}

TEST(TarBz2, ParseRefusesStreamsOfMoreOrLessThanOneBlock) {
  std::vector<u8> data = binary_like(250000, 7);
  std::vector<u8> two(data.size() + 1000);
  unsigned len = static_cast<unsigned>(two.size());
  ASSERT_EQ(
      BZ2_bzBuffToBuffCompress(reinterpret_cast<char*>(two.data()), &len,
                               reinterpret_cast<char*>(data.data()),
                               static_cast<unsigned>(data.size()), 1, 0, 30),
      BZ_OK);
  two.resize(len);
  EXPECT_FALSE(parse_bzip2_block(two, 1)) << "three blocks taken for one";
  std::vector<u8> one;
  compress_bzip2_block(std::span(data).first(50000), 1, "test", one);
  ASSERT_TRUE(parse_bzip2_block(one, 1));
  EXPECT_FALSE(parse_bzip2_block(one, 2)) << "level digit not checked";
  std::vector<u8> cut(one.begin(), one.end() - 1);
  EXPECT_FALSE(parse_bzip2_block(cut, 1));
  std::vector<u8> longer = one;
  longer.push_back(0);
  EXPECT_FALSE(parse_bzip2_block(longer, 1)) << "a trailing byte was taken";
  EXPECT_FALSE(bzip2_block_decodes_to(one, 1, std::span(data).first(49999)));
}

TEST(TarBz2, JoinerKeepsEveryBitOffsetAndTheCombinedCrc) {
  // Blocks of 1 byte up to tens of kB end at every bit offset mod 8.
  std::vector<u8> all;
  std::vector<u8> joined;
  Bzip2Joiner joiner(1, [&](std::span<const u8> b) {
    joined.insert(joined.end(), b.begin(), b.end());
  });
  for (u32 i = 0; i < 40; ++i) {
    std::vector<u8> block = binary_like(1 + i * i * 37, 100 + i);
    std::vector<u8> stream;
    compress_bzip2_block(block, 1, "test", stream);
    auto bits = parse_bzip2_block(stream, 1);
    ASSERT_TRUE(bits);
    joiner.append(stream, *bits);
    all.insert(all.end(), block.begin(), block.end());
  }
  joiner.finish();
  EXPECT_EQ(joiner.written(), joined.size());
  EXPECT_EQ(decompress_all(joined), all);
}

Written write(const fs::path& out, const std::vector<TarEntry>& entries,
              unsigned threads, std::shared_ptr<ChunkCache> cache = nullptr) {
  Bzip2Options o;
  o.level = 1;
  o.threads = threads;
  o.cache = cache;
  const u64 n = write_tar_bz2(out, entries, {1700000000}, o);
  Written w{read_file(out), cache ? cache->counters() : ChunkCache::Counters{}};
  EXPECT_EQ(n, w.bytes.size());
  return w;
}

TEST(TarBz2, JoinedStreamIsTheUnblockedTar) {
  TempDir tmp;
  const std::vector<TarEntry> entries =
      package_entries(binary_like(9 << 20, 11), "");
  Written w = write(tmp.path() / "p.tar.bz2", entries, 2);
  ASSERT_EQ(std::string(w.bytes.begin(), w.bytes.begin() + 4), "BZh1");
  const std::vector<u8> plain = decompress_all(w.bytes);
  const std::vector<u8> tar = tar_of(entries);
  ASSERT_LE(plain.size(), tar.size());
  EXPECT_TRUE(std::equal(plain.begin(), plain.end(), tar.begin()));
  // Only record padding (zeros) is left out, and the end blocks are there.
  EXPECT_TRUE(std::all_of(tar.begin() + plain.size(), tar.end(),
                          [](u8 b) { return b == 0; }));
  ASSERT_GE(plain.size(), 1024u);
  EXPECT_EQ(plain.size() % 512, 0u);
  EXPECT_TRUE(std::all_of(plain.end() - 1024, plain.end(),
                          [](u8 b) { return b == 0; }));
  // And the members read back through the (libarchive) tar reader.
  TarReader reader = TarReader::open_file(tmp.path() / "p.tar.bz2");
  TarMember m;
  std::vector<std::string> names;
  while (reader.next(m)) names.push_back(m.path);
  EXPECT_EQ(names.size(), entries.size());
}

TEST(TarBz2, SameBytesForAnyThreadCountWithAndWithoutTheCache) {
  TempDir tmp;
  const std::vector<u8> big = binary_like(9 << 20, 12);
  const std::vector<TarEntry> entries = package_entries(big, "");
  const Written one = write(tmp.path() / "1.tar.bz2", entries, 1);
  EXPECT_EQ(write(tmp.path() / "3.tar.bz2", entries, 3).bytes, one.bytes);
  std::vector<std::string> log;
  const Written cold = write(tmp.path() / "c.tar.bz2", entries, 2,
                             open_cache(tmp.path() / "cache", &log));
  EXPECT_EQ(cold.bytes, one.bytes);
  EXPECT_EQ(cold.counters.hits, 0u);
  // The 9 MiB file's own blocks went through the cache (cut from its
  // first byte, as cut_all does); nothing else did.
  EXPECT_EQ(cold.counters.misses, cut_all(big, 1).size());
  EXPECT_GE(cold.counters.misses, 60u);
  EXPECT_GT(cold.counters.bytes_stored, 0u);
  const Written warm = write(tmp.path() / "w.tar.bz2", entries, 1,
                             open_cache(tmp.path() / "cache", &log));
  EXPECT_EQ(warm.bytes, one.bytes);
  EXPECT_EQ(warm.counters.hits, cold.counters.misses);
  EXPECT_EQ(warm.counters.misses, 0u);
  EXPECT_EQ(warm.counters.bytes_saved, u64{9} << 20);
  EXPECT_TRUE(log.empty()) << log.front();
}

TEST(TarBz2, LargeFileBlocksDoNotDependOnWhatPrecedesThem) {
  // The same library in two packages with other names and files before
  // it (another configuration of a nightly): all its blocks are hits.
  TempDir tmp;
  const std::vector<u8> big = binary_like(9 << 20, 13);
  write(tmp.path() / "a.tar.bz2", package_entries(big, "a-"), 2,
        open_cache(tmp.path() / "cache", nullptr));
  const std::vector<TarEntry> other = other_package_entries(big);
  const Written b = write(tmp.path() / "b.tar.bz2", other, 2,
                          open_cache(tmp.path() / "cache", nullptr));
  EXPECT_EQ(b.counters.misses, 0u);
  EXPECT_EQ(b.counters.bytes_saved, big.size());
  EXPECT_EQ(b.bytes, write(tmp.path() / "b0.tar.bz2", other, 1).bytes);
}

TEST(TarBz2, PlantedEntryWithForgedChecksumsIsRefused) {
  // Someone who can write the cache stores, under the key of the large
  // file's first block and with that block's CRC in the header, a valid
  // one-block stream of other bytes: the hit must be refused, the archive
  // be what it is without a cache.
  TempDir tmp;
  const std::vector<u8> big = binary_like(9 << 20, 14);
  const std::vector<TarEntry> entries = package_entries(big, "");
  const std::span<const u8> first = cut_all(big, 1).front();
  std::vector<u8> other(first.begin(), first.end());
  other[100] ^= 1;
  std::vector<u8> forged;
  compress_bzip2_block(other, 1, "test", forged);
  std::vector<std::string> log;
  auto cache = open_cache(tmp.path() / "cache", &log);
  plant_entry(*cache, ChunkCache::key_for(bzip2_encoder_identity(1), first),
              libdeflate_crc32(0, first.data(), first.size()), forged);
  const Written w = write(tmp.path() / "p.tar.bz2", entries, 2, cache);
  EXPECT_EQ(w.bytes, write(tmp.path() / "q.tar.bz2", entries, 2).bytes);
  EXPECT_EQ(w.counters.corrupt, 1u);
  ASSERT_EQ(log.size(), 1u);
  EXPECT_NE(log[0].find("do not decode to the chunk's input"),
            std::string::npos)
      << log[0];
  // The entry was replaced by the right one: the next run hits it.
  auto again = open_cache(tmp.path() / "cache", &log);
  write(tmp.path() / "r.tar.bz2", entries, 2, again);
  EXPECT_EQ(again->counters().corrupt, 0u);
  EXPECT_EQ(again->counters().misses, 0u);
}

TEST(TarBz2, KeysDifferFromTheDeflateKeysAndPerLevel) {
  const std::vector<u8> data = binary_like(1000, 1);
  EXPECT_NE(ChunkCache::key_for(bzip2_encoder_identity(1), data),
            ChunkCache::key_for(bzip2_encoder_identity(9), data));
  EXPECT_NE(ChunkCache::key_for(bzip2_encoder_identity(9), data),
            ChunkCache::key(data, 9, true));
  EXPECT_EQ(bzip2_encoder_identity(9).rfind("libpkg bzip2 block; libbz2 ", 0),
            0u);
  EXPECT_EQ(bzip2_encoder_identity(0), "no level");
}

TEST(TarBz2, RefusesLevelsOutsideOneToNine) {
  TempDir tmp;
  Bzip2Options o;
  o.level = 0;
  EXPECT_THROW(write_tar_bz2(tmp.path() / "x.tar.bz2", {}, {0}, o), Error);
  EXPECT_FALSE(fs::exists(tmp.path() / "x.tar.bz2"));
}

}  // namespace
}  // namespace libpkg::archive
