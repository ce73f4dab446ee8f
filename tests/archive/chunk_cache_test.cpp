// SPDX-License-Identifier: BSD-3-Clause
// The chunk cache (libpkg/archive/chunk_cache.hpp) and the zip writer over
// it: archives byte-identical with and without the cache, cold and warm, for
// 1 and 2 threads; corrupt entries dropped, warned and recompressed; LRU
// pruning; an unwritable directory; concurrent writers sharing a directory.
#include "libpkg/archive/chunk_cache.hpp"

#include <gtest/gtest.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "archive/cached_deflate.hpp"
#include "archive/deflate_chunk.hpp"
#include "archive/hit_tag.hpp"
#include "cache_fixtures.hpp"
#include "libpkg/archive/zip_reader.hpp"
#include "libpkg/archive/zip_writer.hpp"
#include "libpkg/base/sha256.hpp"
#include "planted_entry.hpp"
#include "writer_fixtures.hpp"

namespace {

using namespace libpkg;
using namespace libpkg::archive;
using namespace writer_test;
using libpkg::archive::testing::entry_path;
using libpkg::archive::testing::Log;
using libpkg::archive::testing::make_cache;
using libpkg::archive::testing::plant_entry;
using libpkg::archive::testing::set_hit_tag;
namespace fs = std::filesystem;

constexpr u64 kChunk = 64 * 1024;
constexpr u64 kEntryHeader = 32;  // an entry's bytes follow its header

// Members of every kind the cache sees or skips: multi-chunk compressible
// text (cached), a member of exactly one chunk (cached), random bytes that
// deflate does not shrink (cached as the stored fallback), small files
// (below one chunk: never cached).
struct Inputs {
  std::vector<u8> text = text_bytes(10 * kChunk + 123);
  std::vector<u8> exact = text_bytes(kChunk);
  std::vector<u8> noise = random_bytes(3 * kChunk + 7, 11);
  std::vector<u8> small = text_bytes(1000);
};

// A deterministic writer's options: `threads`, `chunk_size`, `cache`.
ZipWriterOptions writer_options(unsigned threads, u64 chunk_size,
                                std::shared_ptr<ChunkCache> cache) {
  ZipWriterOptions o;
  o.threads = threads;
  o.chunk_size = chunk_size;
  o.timestamp = 1700000000;
  o.cache = std::move(cache);
  return o;
}

void write_zip(const fs::path& out, const Inputs& in, unsigned threads,
               std::shared_ptr<ChunkCache> cache) {
  ZipWriter w(out, writer_options(threads, kChunk, std::move(cache)));
  auto as_view = [](const std::vector<u8>& v) {
    return std::string_view(reinterpret_cast<const char*>(v.data()), v.size());
  };
  w.add_bytes("a/small.txt", as_view(in.small));
  w.add_bytes("a/text.bin", as_view(in.text));
  w.add_bytes("b/exact.bin", as_view(in.exact));
  w.add_bytes("b/noise.bin", as_view(in.noise));
  w.add_bytes("c/small2.txt", as_view(in.small));
  w.commit();
}

// Every member reads back (zip reader: CRC and sizes checked).
void expect_valid(const fs::path& zip, const Inputs& in) {
  ZipReader r = ZipReader::open(zip);
  const std::string text = r.read_text(*r.find("a/text.bin"));
  EXPECT_EQ(text, std::string(in.text.begin(), in.text.end()));
  const std::string noise = r.read_text(*r.find("b/noise.bin"));
  EXPECT_EQ(noise, std::string(in.noise.begin(), in.noise.end()));
}

// `input` (at most 65535 bytes) as one final stored deflate block: a real
// entry for load(), which inflates what it serves.
std::vector<u8> stored_block(const std::vector<u8>& input, bool final = true) {
  const u16 n = static_cast<u16>(input.size());
  std::vector<u8> out = {static_cast<u8>(final ? 1 : 0), static_cast<u8>(n),
                         static_cast<u8>(n >> 8), static_cast<u8>(~n),
                         static_cast<u8>(~n >> 8)};
  out.insert(out.end(), input.begin(), input.end());
  return out;
}

// The entries (and temporary files) under `dir`: its files but the tag key
// and the packs.
std::vector<fs::path> entries(const fs::path& dir) {
  std::vector<fs::path> out;
  if (!fs::exists(dir)) return out;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file() && e.path() != hit_key_path(dir) &&
        e.path().parent_path().filename() != "packs")
      out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

// The packs under `dir` (archives linked by ChunkCache::store_packed()).
std::vector<fs::path> packs(const fs::path& dir) {
  std::vector<fs::path> out;
  if (!fs::exists(dir / "packs")) return out;
  for (const auto& e : fs::directory_iterator(dir / "packs"))
    out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

TEST(ChunkCache, SameArchiveWithAndWithoutCacheColdWarmAndAnyThreads) {
  TempDir tmp;
  Inputs in;
  write_zip(tmp / "ref.zip", in, 1, nullptr);
  const std::vector<u8> ref = read_file(tmp / "ref.zip");
  expect_valid(tmp / "ref.zip", in);
  for (unsigned threads : {1u, 2u}) {
    const fs::path dir = tmp / ("cache" + std::to_string(threads));
    auto cold = make_cache(dir);
    write_zip(tmp / "cold.zip", in, threads, cold);
    EXPECT_EQ(read_file(tmp / "cold.zip"), ref) << threads;
    EXPECT_EQ(cold->counters().hits, 0u);
    // text: 11 chunks, exact: 1, noise: 4; the small files never.
    EXPECT_EQ(cold->counters().misses, 16u);
    EXPECT_EQ(entries(dir).size(), 16u);
    auto warm = make_cache(dir);
    write_zip(tmp / "warm.zip", in, threads, warm);
    EXPECT_EQ(read_file(tmp / "warm.zip"), ref) << threads;
    EXPECT_EQ(warm->counters().hits, 16u);
    EXPECT_EQ(warm->counters().misses, 0u);
    EXPECT_EQ(warm->counters().bytes_saved,
              in.text.size() + in.exact.size() + in.noise.size());
    EXPECT_EQ(warm->counters().bytes_stored, 0u);
  }
  // A cache filled at -j2 serves -j1 (the keys do not depend on threads).
  auto other = make_cache(tmp / "cache2");
  write_zip(tmp / "x.zip", in, 1, other);
  EXPECT_EQ(read_file(tmp / "x.zip"), ref);
  EXPECT_EQ(other->counters().misses, 0u);
}

// Each member's SHA-256 (its RECORD hash) is taken chunk by chunk by
// whichever thread reaches the chunk first, on a worker together with the
// chunk's key: right whatever the thread count and cache state.
TEST(ChunkCache, MemberDigestsRightColdWarmAndAnyThreads) {
  TempDir tmp;
  Inputs in;
  const std::vector<std::pair<std::string, const std::vector<u8>*>> members = {
      {"a/small.txt", &in.small},
      {"a/text.bin", &in.text},
      {"b/exact.bin", &in.exact},
      {"b/noise.bin", &in.noise},
      {"c/small2.txt", &in.small}};
  for (unsigned threads : {1u, 2u, 4u}) {
    SCOPED_TRACE(threads);
    const fs::path dir = tmp / ("d" + std::to_string(threads));
    for (int pass = 0; pass < 3; ++pass) {  // no cache, cold, warm
      ZipWriterOptions o;
      o.threads = threads;
      o.chunk_size = kChunk;
      if (pass > 0) o.cache = make_cache(dir);
      ZipWriter w(tmp / "d.zip", o);
      for (const auto& [name, bytes] : members)
        w.add_bytes(
            name, std::string_view(reinterpret_cast<const char*>(bytes->data()),
                                   bytes->size()));
      const auto& results = w.commit();
      ASSERT_EQ(results.size(), members.size());
      for (std::size_t i = 0; i < members.size(); ++i) {
        ASSERT_TRUE(results[i].sha256.has_value()) << members[i].first;
        EXPECT_EQ(*results[i].sha256, Sha256::of(*members[i].second))
            << members[i].first << " pass " << pass;
      }
      if (pass == 2) {
        EXPECT_EQ(o.cache->counters().hits, 16u);
      }
    }
  }
}

// Chunks of at least 1 MiB are tested for incompressibility; the writer
// looks a chunk up before that test when it hashed the key with the
// member's digest: random chunks are still stored, never cached (at most
// an empty marker of the verdict), not counted as misses, and the bytes are
// those without the cache.
TEST(ChunkCache, IncompressibleChunksStayOutOfTheCacheAndItsCounters) {
  TempDir tmp;
  constexpr u64 kBig = u64{1} << 20;
  const std::vector<u8> random = random_bytes(3 * kBig + 5, 7);
  const std::vector<u8> random2 = random_bytes(3 * kBig + 5, 8);
  const std::vector<u8> text = text_bytes(2 * kBig + 9);
  auto write = [&](const fs::path& out, unsigned threads,
                   std::shared_ptr<ChunkCache> cache) {
    ZipWriter w(out, writer_options(threads, kBig, std::move(cache)));
    const std::vector<const std::vector<u8>*> members = {&random, &text,
                                                         &random2};
    for (std::size_t i = 0; i < members.size(); ++i)
      w.add_bytes(
          "m" + std::to_string(i),
          std::string_view(reinterpret_cast<const char*>(members[i]->data()),
                           members[i]->size()));
    const auto& results = w.commit();
    for (std::size_t i = 0; i < members.size(); ++i)
      EXPECT_EQ(*results[i].sha256, Sha256::of(*members[i]));
  };
  write(tmp / "ref.zip", 1, nullptr);
  const std::vector<u8> ref = read_file(tmp / "ref.zip");
  for (unsigned threads : {1u, 2u}) {
    SCOPED_TRACE(threads);
    const fs::path dir = tmp / ("c" + std::to_string(threads));
    auto cold = make_cache(dir);
    write(tmp / "cold.zip", threads, cold);
    EXPECT_EQ(read_file(tmp / "cold.zip"), ref);
    // The random members' six 1 MiB chunks: stored, not cached, not
    // counted; their last chunks (5 bytes, below the test's minimum) and
    // the text's three chunks are cached.
    EXPECT_EQ(cold->counters().misses, 2u + 3u);
    std::size_t with_bytes = 0, markers = 0;
    for (const fs::path& e : entries(dir))
      ++(fs::file_size(e) > kEntryHeader ? with_bytes : markers);
    EXPECT_EQ(with_bytes, 2u + 3u);
    EXPECT_LE(markers, 6u);  // chunks looked up first (keyed with the digest)
    auto warm = make_cache(dir);
    write(tmp / "warm.zip", threads, warm);
    EXPECT_EQ(read_file(tmp / "warm.zip"), ref);
    EXPECT_EQ(warm->counters().hits, 2u + 3u);
    EXPECT_EQ(warm->counters().misses, 0u);
  }
}

// The verdict of the incompressible test is memoized in an empty marker
// entry. This user's own marker is believed (shown by one made for a text
// chunk, which is then stored instead of compressed: still a valid encoding
// of the input); a planted one (a guessed tag) or one in a file others may
// write is not, and the chunk is tested (and here compressed) again.
TEST(ChunkCache, IncompressibleVerdictIsMemoizedInOwnMarkers) {
  TempDir tmp;
  auto cache = make_cache(tmp / "c");
  CompressorPool pool;
  const std::vector<u8> noise = random_bytes(2 << 20, 3);
  const std::vector<u8> text = text_bytes(2 << 20);
  auto run = [&](const std::vector<u8>& input, std::vector<u8>& out) {
    return cached_deflate_chunk_keyed(*cache, pool, 6, input, zlib_crc32(input),
                                      false, "m",
                                      ChunkCache::key(input, 6, false), out);
  };
  std::vector<u8> first, again;
  EXPECT_EQ(run(noise, first), CacheUse::bypassed);
  const fs::path marker = entry_path(
      *cache, incompressible_marker(ChunkCache::key(noise, 6, false)));
  ASSERT_EQ(entries(tmp / "c"), std::vector<fs::path>{marker});
  EXPECT_EQ(fs::file_size(marker), kEntryHeader);
  EXPECT_EQ(run(noise, again), CacheUse::bypassed);
  EXPECT_EQ(again, first);
  EXPECT_EQ(cache->counters().misses, 0u);

  const ChunkCache::Key text_marker =
      incompressible_marker(ChunkCache::key(text, 6, false));
  cache->store(text_marker, zlib_crc32(text), {});
  std::vector<u8> out;
  EXPECT_EQ(run(text, out), CacheUse::bypassed);
  EXPECT_EQ(out.size(), first.size());  // stored blocks of the same size
  set_hit_tag(entry_path(*cache, text_marker), 0x5a5a5a5a5a5a5a5aull);
  EXPECT_EQ(run(text, out), CacheUse::miss);
  EXPECT_LT(out.size(), text.size() / 2);
  fs::remove(entry_path(*cache, ChunkCache::key(text, 6, false)));
  cache->store(text_marker, zlib_crc32(text), {});
  fs::permissions(entry_path(*cache, text_marker), fs::perms::group_write,
                  fs::perm_options::add);
  EXPECT_EQ(run(text, out), CacheUse::miss);
}

TEST(ChunkCache, CorruptOrTruncatedEntryIsDroppedWarnedAndRecompressed) {
  TempDir tmp;
  Inputs in;
  write_zip(tmp / "ref.zip", in, 2, nullptr);
  // Plain entries (no pack): their bytes are what this test damages.
  write_zip(tmp / "fill.zip", in, 2,
            make_cache(tmp / "c", nullptr, u64{1} << 30, false));
  std::vector<fs::path> files = entries(tmp / "c");
  ASSERT_EQ(files.size(), 16u);
  ASSERT_TRUE(packs(tmp / "c").empty());
  // A flipped byte in the stored bytes, one in the header's length, a
  // truncated entry, an empty one.
  std::vector<u8> b = read_file(files[0]);
  b[b.size() / 2] ^= 0x40;
  write_file(files[0], b);
  b = read_file(files[1]);
  b[9] ^= 0x01;
  write_file(files[1], b);
  b = read_file(files[2]);
  b.resize(b.size() - 100);
  write_file(files[2], b);
  write_file(files[3], std::vector<u8>{});

  Log log;
  auto cache = make_cache(tmp / "c", &log);
  write_zip(tmp / "out.zip", in, 2, cache);
  EXPECT_EQ(read_file(tmp / "out.zip"), read_file(tmp / "ref.zip"));
  expect_valid(tmp / "out.zip", in);
  EXPECT_EQ(cache->counters().corrupt, 4u);
  EXPECT_EQ(cache->counters().hits, 12u);
  EXPECT_EQ(cache->counters().misses, 4u);
  ASSERT_EQ(log.lines.size(), 4u);
  for (const std::string& line : log.lines) {
    EXPECT_NE(line.find("warning: "), std::string::npos) << line;
    EXPECT_NE(line.find("compressed again"), std::string::npos) << line;
  }
  // The entries were replaced by good ones: the next run hits everywhere.
  auto again = make_cache(tmp / "c");
  write_zip(tmp / "again.zip", in, 1, again);
  EXPECT_EQ(again->counters().hits, 16u);
  EXPECT_EQ(again->counters().corrupt, 0u);
  EXPECT_EQ(read_file(tmp / "again.zip"), read_file(tmp / "ref.zip"));
}

TEST(ChunkCache, EntryOfAnotherChunkIsNotUsed) {
  // An entry renamed onto another key (same size, different content) fails
  // the input CRC check instead of being joined into the wrong member.
  TempDir tmp;
  auto cache = make_cache(tmp / "c");
  const std::vector<u8> a = text_bytes(5000), b = random_bytes(5000, 3);
  const auto ka = ChunkCache::key(a, 6, true), kb = ChunkCache::key(b, 6, true);
  cache->store(ka, zlib_crc32(a), stored_block(a));
  cache->store(kb, zlib_crc32(b), stored_block(b));
  const std::vector<fs::path> files = entries(tmp / "c");
  ASSERT_EQ(files.size(), 2u);
  fs::copy_file(files[0], files[1], fs::copy_options::overwrite_existing);
  std::vector<u8> out;
  int hits = 0;
  hits += cache->load(ka, a, zlib_crc32(a), true, 10000, out);
  hits += cache->load(kb, b, zlib_crc32(b), true, 10000, out);
  EXPECT_EQ(hits, 1);
  EXPECT_EQ(cache->counters().corrupt, 1u);
}

TEST(ChunkCache, PlantedEntryWithForgedChecksumsIsRejected) {
  // Someone who can write the cache directory plants, under the right key,
  // an entry whose stream inflates to other bytes, with the input CRC of the
  // real chunk, a correct CRC of its own bytes and a guessed tag. The writer
  // takes the zip CRC and RECORD hash from the input, so using it would
  // silently put other bytes in the archive.
  TempDir tmp;
  Inputs in;
  write_zip(tmp / "ref.zip", in, 1, nullptr);
  auto planter = make_cache(tmp / "c");
  // b/exact.bin is one final chunk of kChunk bytes at the default level 6.
  std::vector<u8> other = in.exact;
  for (size_t i = 0; i < other.size(); i += 997) other[i] ^= 0x20;
  std::vector<u8> forged =
      stored_block(std::vector<u8>(other.begin(), other.end() - 1), false);
  const std::vector<u8> last = stored_block({other.back()}, true);
  forged.insert(forged.end(), last.begin(), last.end());
  // The planter cannot read this user's tag key: its tag is a guess.
  plant_entry(*planter, ChunkCache::key(in.exact, 6, true),
              zlib_crc32(in.exact), forged);
  ASSERT_EQ(entries(tmp / "c").size(), 1u);
  Log log;
  auto cache = make_cache(tmp / "c", &log);
  write_zip(tmp / "out.zip", in, 2, cache);
  EXPECT_EQ(read_file(tmp / "out.zip"), read_file(tmp / "ref.zip"));
  expect_valid(tmp / "out.zip", in);
  EXPECT_EQ(cache->counters().corrupt, 1u);
  EXPECT_EQ(cache->counters().hits, 0u);
  ASSERT_EQ(log.lines.size(), 1u);
  EXPECT_NE(log.lines[0].find("do not inflate to the chunk's input"),
            std::string::npos)
      << log.lines[0];
  // The planted entry was replaced by the real one.
  auto warm = make_cache(tmp / "c");
  write_zip(tmp / "warm.zip", in, 1, warm);
  EXPECT_EQ(warm->counters().hits, 16u);
  EXPECT_EQ(read_file(tmp / "warm.zip"), read_file(tmp / "ref.zip"));
}

// A warm write over `dir`: the archive equals `ref`, all 16 chunks hit.
// Returns the cache for its other counters.
std::shared_ptr<ChunkCache> expect_warm_write(
    const TempDir& tmp, const fs::path& dir, const Inputs& in,
    const std::vector<u8>& ref, unsigned threads, Log* log = nullptr) {
  auto cache = make_cache(dir, log);
  write_zip(tmp / "warm.zip", in, threads, cache);
  EXPECT_EQ(read_file(tmp / "warm.zip"), ref) << threads;
  EXPECT_EQ(cache->counters().hits, 16u);
  EXPECT_EQ(cache->counters().corrupt, 0u);
  return cache;
}

TEST(ChunkCache, OwnEntriesAreTrustedByTheirTagOthersInflated) {
  TempDir tmp;
  Inputs in;
  write_zip(tmp / "ref.zip", in, 1, nullptr);
  const std::vector<u8> ref = read_file(tmp / "ref.zip");
  const fs::path dir = tmp / "c";
  auto cold = make_cache(dir);
  write_zip(tmp / "cold.zip", in, 2, cold);
  // The first store made this user's key: private, 32 bytes.
  const fs::path key_file = hit_key_path(dir);
  ASSERT_TRUE(fs::is_regular_file(key_file));
  EXPECT_EQ(fs::file_size(key_file), 32u);
  EXPECT_EQ(fs::status(key_file).permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write);
  const std::vector<u8> key = read_file(key_file);
  for (unsigned threads : {1u, 2u})
    EXPECT_EQ(
        expect_warm_write(tmp, dir, in, ref, threads)->counters().tagged_hits,
        16u);
  // Entry files others may write (a group-writable shared cache, an ACL
  // granting write): the tag does not cover the stored bytes, so their
  // tags are not believed; the hits are inflated.
  for (fs::perms opened : {fs::perms::group_write, fs::perms::others_write}) {
    for (const fs::path& e : entries(dir))
      fs::permissions(e, opened, fs::perm_options::add);
    EXPECT_EQ(expect_warm_write(tmp, dir, in, ref, 2)->counters().tagged_hits,
              0u);
    for (const fs::path& e : entries(dir))
      fs::permissions(e, opened, fs::perm_options::remove);
  }
  EXPECT_EQ(expect_warm_write(tmp, dir, in, ref, 2)->counters().tagged_hits,
            16u);
  // Another user's key (or a new one after `cache clear`): the same
  // entries are no longer trusted by their tag, each hit is inflated and
  // still used, and (being this user's) stored again with the current
  // key's tags, trusted from the next run on.
  write_file(key_file, random_bytes(32, 5));
  EXPECT_EQ(expect_warm_write(tmp, dir, in, ref, 2)->counters().tagged_hits,
            0u);
  EXPECT_EQ(expect_warm_write(tmp, dir, in, ref, 2)->counters().tagged_hits,
            16u);
  // Untagged entries (written before tags, or without a key): the same.
  write_file(key_file, key);
  for (const fs::path& e : entries(dir)) set_hit_tag(e, 0);
  EXPECT_EQ(expect_warm_write(tmp, dir, in, ref, 2)->counters().tagged_hits,
            0u);
  EXPECT_EQ(expect_warm_write(tmp, dir, in, ref, 2)->counters().tagged_hits,
            16u);
}

TEST(ChunkCache, TagBindsTheEntryToItsKey) {
  // A tagged entry copied to the key of the same input at another level
  // passes every checksum and even inflates to the input; its tag names
  // the other key, so it is not trusted by it (the inflate decides).
  TempDir tmp;
  auto cache = make_cache(tmp / "c");
  const std::vector<u8> a = text_bytes(5000);
  const auto k6 = ChunkCache::key(a, 6, true), k9 = ChunkCache::key(a, 9, true);
  cache->store(k6, zlib_crc32(a), stored_block(a));
  fs::create_directories(entry_path(*cache, k9).parent_path());
  fs::copy_file(entry_path(*cache, k6), entry_path(*cache, k9));
  std::vector<u8> out;
  EXPECT_TRUE(cache->load(k6, a, zlib_crc32(a), true, 10000, out));
  EXPECT_EQ(cache->counters().tagged_hits, 1u);
  EXPECT_TRUE(cache->load(k9, a, zlib_crc32(a), true, 10000, out));
  EXPECT_EQ(cache->counters().tagged_hits, 1u);
  EXPECT_EQ(cache->counters().hits, 2u);
}

TEST(ChunkCache, TagKeyThatIsNotPrivateAndOursIsRefused) {
  TempDir tmp;
  Inputs in;
  write_zip(tmp / "ref.zip", in, 1, nullptr);
  const std::vector<u8> ref = read_file(tmp / "ref.zip");
  const fs::path dir = tmp / "c";
  write_zip(tmp / "cold.zip", in, 2, make_cache(dir));
  const fs::path key_file = hit_key_path(dir);
  const std::vector<u8> key = read_file(key_file);
  const fs::path elsewhere = tmp / "key";
  write_file(elsewhere, key);
  fs::permissions(elsewhere, fs::perms::owner_read | fs::perms::owner_write);
  struct Case {
    std::string what;
    std::function<void()> make;
  };
  const std::vector<Case> cases = {
      {"open to other users",
       [&] {
         fs::permissions(key_file,
                         fs::perms::group_read | fs::perms::others_read,
                         fs::perm_options::add);
       }},
      {"cannot open",  // a symlink to the right key is not followed
       [&] {
         fs::remove(key_file);
         fs::create_symlink(elsewhere, key_file);
       }},
      {"hard links",
       [&] {
         fs::remove(key_file);
         fs::create_hard_link(elsewhere, key_file);
       }},
      {"bytes long",
       [&] {
         fs::remove(key_file);
         write_file(key_file, std::vector<u8>(key.begin(), key.end() - 1));
         fs::permissions(key_file,
                         fs::perms::owner_read | fs::perms::owner_write);
       }},
      {"not a regular file",
       [&] {
         fs::remove(key_file);
         fs::create_directory(key_file);
       }},
  };
  for (const Case& c : cases) {
    fs::remove_all(key_file);
    write_file(key_file, key);
    fs::permissions(key_file, fs::perms::owner_read | fs::perms::owner_write);
    c.make();
    SCOPED_TRACE(c.what);
    Log log;
    auto cache = expect_warm_write(tmp, dir, in, ref, 2, &log);
    EXPECT_EQ(cache->counters().tagged_hits, 0u);
    ASSERT_EQ(log.lines.size(), 1u) << c.what;  // warned once, not per hit
    EXPECT_NE(log.lines[0].find(key_file.string()), std::string::npos)
        << log.lines[0];
    EXPECT_NE(log.lines[0].find(c.what), std::string::npos) << log.lines[0];
  }
  // Refused, never replaced: the planted directory is still there.
  EXPECT_TRUE(fs::is_directory(key_file));
}

TEST(ChunkCache, HitTagIsTheDocumentedHmac) {
  // hit_tag() against OpenSSL's HMAC over the message hit_tag.hpp documents.
  HitKey key{};
  for (size_t i = 0; i < key.size(); ++i) key[i] = static_cast<u8>(3 * i + 1);
  ChunkCache::Key chunk{};
  for (size_t i = 0; i < chunk.size(); ++i) chunk[i] = static_cast<u8>(200 - i);
  for (u64 n : {u64{0}, u64{1}, u64{70001}, u64{1} << 40}) {
    const u32 crc = 0xdeadbeef, stored_crc = static_cast<u32>(n * 2654435761u);
    std::string m = "libpkg chunk hit tag 2\n";
    m.append(reinterpret_cast<const char*>(chunk.data()), chunk.size());
    for (int i = 0; i < 4; ++i) m.push_back(static_cast<char>(crc >> (8 * i)));
    for (int i = 0; i < 8; ++i) m.push_back(static_cast<char>(n >> (8 * i)));
    for (int i = 0; i < 4; ++i)
      m.push_back(static_cast<char>(stored_crc >> (8 * i)));
    unsigned char mac[32];
    unsigned int len = 0;
    ASSERT_NE(HMAC(EVP_sha256(), key.data(), key.size(),
                   reinterpret_cast<const unsigned char*>(m.data()), m.size(),
                   mac, &len),
              nullptr);
    u64 want = 0;
    for (int i = 7; i >= 0; --i) want = (want << 8) | mac[i];
    EXPECT_EQ(hit_tag(key, chunk, crc, n, stored_crc), want == 0 ? 1 : want)
        << n;
  }
}

TEST(ChunkCache, KeyDependsOnContentLevelAndFinality) {
  const std::vector<u8> a = text_bytes(4096);
  std::vector<u8> b = a;
  b[100] ^= 1;
  EXPECT_EQ(ChunkCache::key(a, 6, false), ChunkCache::key(a, 6, false));
  EXPECT_NE(ChunkCache::key(a, 6, false), ChunkCache::key(b, 6, false));
  EXPECT_NE(ChunkCache::key(a, 6, false), ChunkCache::key(a, 9, false));
  EXPECT_NE(ChunkCache::key(a, 6, false), ChunkCache::key(a, 6, true));
}

TEST(ChunkCache, KeyIncludesTheLoadedEncodersFingerprint) {
  // libdeflate is linked dynamically: another build of it under the same
  // version string must not be served the bytes of the old one.
  const std::vector<u8> a = text_bytes(4096);
  EXPECT_NE(ChunkCache::key(a, 6, true, "encoder A"),
            ChunkCache::key(a, 6, true, "encoder B"));
  const std::string print = ChunkCache::encoder_fingerprint(6);
  EXPECT_EQ(print.size(), 64u) << print;                 // a SHA-256 in hex
  EXPECT_EQ(ChunkCache::encoder_fingerprint(6), print);  // stable
  EXPECT_NE(ChunkCache::encoder_fingerprint(1), print);  // per level
  EXPECT_EQ(ChunkCache::key(a, 6, true), ChunkCache::key(a, 6, true, print));
  EXPECT_NE(ChunkCache::key(a, 6, true), ChunkCache::key(a, 6, true, "other"));
}

TEST(ChunkCache, PruneDropsLeastRecentlyUsedFirst) {
  TempDir tmp;
  auto cache = make_cache(tmp / "c");
  std::vector<ChunkCache::Key> keys;
  std::vector<std::vector<u8>> inputs;
  for (u32 i = 0; i < 4; ++i) {
    inputs.push_back(random_bytes(1000, i));
    keys.push_back(ChunkCache::key(inputs[i], 6, true));
    cache->store(keys[i], zlib_crc32(inputs[i]), stored_block(inputs[i]));
  }
  // Ages set explicitly: entry i was last used i hours after entry 0.
  const std::vector<fs::path> files = entries(tmp / "c");
  ASSERT_EQ(files.size(), 4u);
  const auto base = fs::file_time_type::clock::now() - std::chrono::hours(10);
  for (const auto& f : files)
    fs::last_write_time(f, base - std::chrono::hours(1));
  std::vector<u8> out;
  for (u32 i = 0; i < 4; ++i) {
    // Find entry i's file: the one a load of key i refreshes.
    ASSERT_TRUE(cache->load(keys[i], inputs[i], zlib_crc32(inputs[i]), true,
                            20000, out));
    fs::path newest;
    for (const auto& f : files)
      if (newest.empty() ||
          fs::last_write_time(f) > fs::last_write_time(newest))
        newest = f;
    fs::last_write_time(newest, base + std::chrono::hours(i));
  }
  // A hit makes entry 0, the oldest, the most recently used.
  ASSERT_TRUE(
      cache->load(keys[0], inputs[0], zlib_crc32(inputs[0]), true, 20000, out));
  const u64 entry_size = fs::file_size(files[0]);
  const ChunkCache::Usage left = cache->prune(2 * entry_size + 10);
  EXPECT_EQ(left.entries, 2u);
  EXPECT_LE(left.bytes, 2 * entry_size + 10);
  EXPECT_EQ(cache->usage().bytes, left.bytes);
  // Kept: 0 (just used) and 3 (newest); dropped: 1 and 2.
  EXPECT_TRUE(
      cache->load(keys[0], inputs[0], zlib_crc32(inputs[0]), true, 20000, out));
  EXPECT_FALSE(
      cache->load(keys[1], inputs[1], zlib_crc32(inputs[1]), true, 20000, out));
  EXPECT_FALSE(
      cache->load(keys[2], inputs[2], zlib_crc32(inputs[2]), true, 20000, out));
  EXPECT_TRUE(
      cache->load(keys[3], inputs[3], zlib_crc32(inputs[3]), true, 20000, out));
  EXPECT_EQ(cache->counters().corrupt, 0u);
}

TEST(ChunkCache, WriterKeepsTheCacheUnderItsCap) {
  TempDir tmp;
  Inputs in;
  const u64 cap = 150 * 1024;
  write_zip(tmp / "ref.zip", in, 2, nullptr);
  auto cache = make_cache(tmp / "c", nullptr, cap);
  write_zip(tmp / "out.zip", in, 2, cache);
  EXPECT_EQ(read_file(tmp / "out.zip"), read_file(tmp / "ref.zip"));
  EXPECT_GT(cache->counters().bytes_stored, cap);
  const ChunkCache::Usage u = cache->usage();
  EXPECT_LE(u.bytes, cap);
  EXPECT_GT(u.entries, 0u);
}

TEST(ChunkCache, UnwritableDirectoryWarnsOnceAndTheArchiveIsWritten) {
  TempDir tmp;
  Inputs in;
  write_zip(tmp / "ref.zip", in, 2, nullptr);
  write_file(tmp / "file", std::vector<u8>{1, 2, 3});
  Log log;
  auto cache = make_cache(tmp / "file" / "chunks", &log);
  write_zip(tmp / "out.zip", in, 2, cache);
  EXPECT_EQ(read_file(tmp / "out.zip"), read_file(tmp / "ref.zip"));
  EXPECT_EQ(cache->counters().bytes_stored, 0u);
  ASSERT_EQ(log.lines.size(), 1u);
  EXPECT_NE(log.lines[0].find("stores nothing more"), std::string::npos)
      << log.lines[0];
}

TEST(ChunkCache, NoCacheFlagAndEnvironment) {
  TempDir tmp;
  EXPECT_EQ(ChunkCache::open(true, tmp / "c", std::nullopt, {}), nullptr);
  ::setenv("LIBPKG_NO_CACHE", "1", 1);
  EXPECT_EQ(ChunkCache::open(false, tmp / "c", std::nullopt, {}), nullptr);
  ::setenv("LIBPKG_NO_CACHE", "0", 1);
  EXPECT_NE(ChunkCache::open(false, tmp / "c", std::nullopt, {}), nullptr);
  ::unsetenv("LIBPKG_NO_CACHE");
  auto c = ChunkCache::open(false, tmp / "c", u64{12345}, {});
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->max_bytes(), 12345u);
  EXPECT_EQ(c->dir(), tmp / "c");
  EXPECT_FALSE(fs::exists(tmp / "c"));  // nothing is created before a store
}

TEST(ChunkCache, DefaultDirectoryFollowsXdg) {
  const char* old_xdg = std::getenv("XDG_CACHE_HOME");
  const std::string saved = old_xdg ? old_xdg : "";
  ::setenv("XDG_CACHE_HOME", "/x/cache", 1);
  EXPECT_EQ(ChunkCache::default_dir(), fs::path("/x/cache/libpkg/chunks"));
  ::setenv("XDG_CACHE_HOME", "relative", 1);  // ignored, as the spec says
  ::setenv("HOME", "/home/u", 1);
  EXPECT_EQ(ChunkCache::default_dir(),
            fs::path("/home/u/.cache/libpkg/chunks"));
  if (old_xdg)
    ::setenv("XDG_CACHE_HOME", saved.c_str(), 1);
  else
    ::unsetenv("XDG_CACHE_HOME");
}

TEST(ChunkCache, DefaultDirectoryIsAbsoluteWhateverTmpdirSays) {
  // HOME and XDG_CACHE_HOME unset: the temporary directory is used, and a
  // TMPDIR that is missing or relative must not make a relative cache path.
  TempDir tmp;
  const fs::path cwd = fs::current_path();
  fs::create_directories(tmp / "rel");
  fs::current_path(tmp.path());
  const auto env = [](const char* n) {
    const char* v = std::getenv(n);
    return v ? std::optional<std::string>(v) : std::nullopt;
  };
  const auto home = env("HOME"), xdg = env("XDG_CACHE_HOME"),
             tmpdir = env("TMPDIR");
  ::unsetenv("HOME");
  ::unsetenv("XDG_CACHE_HOME");
  for (const char* t : {"/nonexistent-libpkg-tmp", "rel"}) {
    ::setenv("TMPDIR", t, 1);
    const fs::path d = ChunkCache::default_dir();
    EXPECT_TRUE(d.is_absolute()) << t << " -> " << d;
    EXPECT_EQ(d.filename(), "libpkg-chunks") << t;
  }
  ::setenv("TMPDIR", tmp.path().c_str(), 1);
  EXPECT_EQ(ChunkCache::default_dir(), tmp / "libpkg-chunks");
  fs::current_path(cwd);
  for (auto [n, v] : {std::pair{"HOME", home}, std::pair{"XDG_CACHE_HOME", xdg},
                      std::pair{"TMPDIR", tmpdir}})
    v ? (void)::setenv(n, v->c_str(), 1) : (void)::unsetenv(n);
}

TEST(ChunkCache, PruneCountsEntriesItCouldNotRemove) {
  // Entries in read-only subdirectories cannot be removed: prune must still
  // count them. Root removes them anyway, so as root the prune runs in a
  // child that drops to nobody.
  TempDir tmp;
  auto cache = make_cache(tmp / "c");
  for (u32 i = 0; i < 3; ++i) {
    const std::vector<u8> input = random_bytes(1000, i);
    cache->store(ChunkCache::key(input, 6, true), zlib_crc32(input),
                 std::vector<u8>(5000, 7));
  }
  const ChunkCache::Usage before = cache->usage();
  ASSERT_EQ(before.entries, 3u);
  fs::permissions(tmp.path(), fs::perms(0755));
  fs::permissions(tmp / "c", fs::perms(0755));
  for (const fs::path& f : entries(tmp / "c"))
    fs::permissions(f.parent_path(), fs::perms(0555));
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::close(fds[0]);
    if (::geteuid() == 0 && (::setgid(65534) != 0 || ::setuid(65534) != 0))
      ::_exit(3);
    const ChunkCache::Usage u = cache->prune(0);
    const u64 r[2] = {u.entries, u.bytes};
    ::_exit(::write(fds[1], r, sizeof r) == sizeof r ? 0 : 4);
  }
  ::close(fds[1]);
  u64 r[2] = {0, 0};
  const ssize_t n = ::read(fds[0], r, sizeof r);
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  ASSERT_EQ(n, static_cast<ssize_t>(sizeof r));
  EXPECT_EQ(cache->usage().entries, 3u);  // nothing could be removed
  EXPECT_EQ(r[0], before.entries);
  EXPECT_EQ(r[1], before.bytes);
  for (const fs::path& f : entries(tmp / "c"))
    fs::permissions(f.parent_path(), fs::perms(0755));
}

TEST(ChunkCache, DefaultDirectoryIsPrivateAndRefusedWhenOpenToOthers) {
  TempDir tmp;
  Inputs in;
  write_zip(tmp / "ref.zip", in, 1, nullptr);
  const char* old_xdg = std::getenv("XDG_CACHE_HOME");
  const std::optional<std::string> saved =
      old_xdg ? std::optional<std::string>(old_xdg) : std::nullopt;
  ::setenv("XDG_CACHE_HOME", (tmp / "xdg").c_str(), 1);
  const fs::path dir = tmp / "xdg" / "libpkg" / "chunks";
  {
    // Opening creates nothing (a run that stores no chunk leaves no
    // directory behind); the first store makes it, private to the user.
    auto fresh = std::make_shared<ChunkCache>(ChunkCacheOptions{});
    ASSERT_EQ(fresh->dir(), dir);
    EXPECT_FALSE(fs::exists(dir));
    write_zip(tmp / "fresh.zip", in, 2, fresh);
    EXPECT_GT(fresh->counters().bytes_stored, 0u);
    EXPECT_EQ(fs::status(dir).permissions(), fs::perms(0700));
    fresh->clear();
  }
  for (int bad = 0; bad < 2; ++bad) {
    if (bad == 0) {
      fs::permissions(dir, fs::perms(0777));  // writable by others
    } else {
      fs::permissions(dir, fs::perms(0700));
      const uid_t other = ::geteuid() == 0 ? 65534 : 0;  // not ours
      ASSERT_EQ(::chown(dir.c_str(), other, static_cast<gid_t>(-1)), 0);
    }
    Log log;
    ChunkCacheOptions o;
    o.log = log.fn();
    auto cache = std::make_shared<ChunkCache>(o);
    write_zip(tmp / "out.zip", in, 2, cache);
    EXPECT_EQ(read_file(tmp / "out.zip"), read_file(tmp / "ref.zip")) << bad;
    EXPECT_EQ(cache->counters().bytes_stored, 0u) << bad;
    EXPECT_TRUE(entries(dir).empty()) << bad;
    ASSERT_EQ(log.lines.size(), 1u) << bad;
    EXPECT_NE(log.lines[0].find("not used in this run"), std::string::npos);
    // Given explicitly (--cache-dir), the same directory is used.
    auto given = make_cache(dir);
    write_zip(tmp / "given.zip", in, 2, given);
    EXPECT_GT(given->counters().bytes_stored, 0u) << bad;
    given->clear();
  }
  if (saved)
    ::setenv("XDG_CACHE_HOME", saved->c_str(), 1);
  else
    ::unsetenv("XDG_CACHE_HOME");
}

TEST(ChunkCache, ConcurrentWritersShareOneDirectory) {
  TempDir tmp;
  Inputs in;
  write_zip(tmp / "ref.zip", in, 1, nullptr);
  const std::vector<u8> ref = read_file(tmp / "ref.zip");
  // Separate cache objects over one directory, as separate processes have
  // (the CLI test runs two pkgtool processes).
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i)
    threads.emplace_back([&, i] {
      write_zip(tmp / ("out" + std::to_string(i) + ".zip"), in, 2,
                make_cache(tmp / "c"));
    });
  for (auto& t : threads) t.join();
  for (int i = 0; i < 4; ++i)
    EXPECT_EQ(read_file(tmp / ("out" + std::to_string(i) + ".zip")), ref) << i;
  // No temporary file left, every entry whole.
  for (const fs::path& f : entries(tmp / "c"))
    EXPECT_FALSE(f.filename().string().starts_with(".tmp-")) << f;
  auto check = make_cache(tmp / "c");
  write_zip(tmp / "check.zip", in, 2, check);
  EXPECT_EQ(check->counters().hits, 16u);
  EXPECT_EQ(check->counters().corrupt, 0u);
}

TEST(ChunkCache, ClearAndPruneTouchOnlyCacheFiles) {
  TempDir tmp;
  Inputs in;
  write_zip(tmp / "fill.zip", in, 2, make_cache(tmp / "c"));
  write_file(tmp / "c" / "README", std::vector<u8>{1});
  fs::create_directories(tmp / "c" / "ab");
  write_file(tmp / "c" / "ab" / "notes.txt", std::vector<u8>{2});
  auto cache = make_cache(tmp / "c");
  cache->prune(0);
  EXPECT_EQ(cache->usage().entries, 0u);
  write_zip(tmp / "fill.zip", in, 2, cache);
  EXPECT_GT(cache->usage().entries, 0u);
  cache->clear();
  EXPECT_EQ(cache->usage().entries, 0u);
  EXPECT_TRUE(fs::exists(tmp / "c" / "README"));
  EXPECT_TRUE(fs::exists(tmp / "c" / "ab" / "notes.txt"));
}

}  // namespace
