// SPDX-License-Identifier: BSD-3-Clause
// Packs: a committed archive hard-linked into the chunk cache, and pointer
// entries naming its chunks' bytes (chunk_packs.hpp, chunk_cache.hpp).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <string>
#include <vector>

#include "archive/deflate_chunk.hpp"
#include "cache_fixtures.hpp"
#include "libpkg/archive/chunk_cache.hpp"
#include "libpkg/archive/zip_writer.hpp"
#include "libpkg/base/fd.hpp"
#include "planted_entry.hpp"
#include "writer_fixtures.hpp"

namespace {

using namespace libpkg;
using namespace libpkg::archive;
using namespace writer_test;
using libpkg::archive::testing::entry_path;
using libpkg::archive::testing::Log;
using libpkg::archive::testing::make_cache;
namespace fs = std::filesystem;

constexpr u64 kHeader = 32;            // a plain entry's header
constexpr u64 kPointer = 32 + 8 + 16;  // a pointer entry's whole file
constexpr u64 kMax = u64{1} << 30;

std::vector<fs::path> files_in(const fs::path& dir) {
  std::vector<fs::path> out;
  if (!fs::exists(dir)) return out;
  for (const auto& e : fs::directory_iterator(dir)) out.push_back(e.path());
  return out;
}

// The entry files of a cache (pointers and plain), not its packs or key.
std::vector<fs::path> entry_files(const fs::path& dir) {
  std::vector<fs::path> out;
  for (const fs::path& sub : files_in(dir))
    if (fs::is_directory(sub) && sub.filename().string().size() == 2)
      for (const fs::path& f : files_in(sub)) out.push_back(f);
  return out;
}

// An "archive": a prefix, four deflated chunks (each a whole final stream,
// as a member's last chunk is), a suffix of `suffix` bytes; mode 0644.
struct Archive {
  fs::path path;
  std::vector<std::vector<u8>> inputs;
  std::vector<std::vector<u8>> stored;
  std::vector<ChunkCache::PackedChunk> chunks;
  u64 size = 0;

  Archive(const fs::path& p, u32 seed, u64 suffix = 100) : path(p) {
    CompressorPool pool;
    std::vector<u8> bytes = random_bytes(100, seed);
    for (u32 i = 0; i < 4; ++i) {
      std::vector<u8> input = text_bytes(40000 + 1000 * (i + seed));
      input[i] = static_cast<u8>(seed);  // distinct per archive
      std::vector<u8> out;
      deflate_chunk(pool, 6, input, true, "t", out);
      ChunkCache::PackedChunk c;
      c.key = ChunkCache::key(input, 6, true);
      c.input_crc32 = zlib_crc32(input);
      c.offset = bytes.size();
      c.size = out.size();
      c.stored_crc32 = zlib_crc32(out);
      chunks.push_back(c);
      bytes.insert(bytes.end(), out.begin(), out.end());
      inputs.push_back(std::move(input));
      stored.push_back(std::move(out));
    }
    const std::vector<u8> tail = random_bytes(suffix, seed + 1);
    bytes.insert(bytes.end(), tail.begin(), tail.end());
    write_file(path, bytes);
    fs::permissions(path, fs::perms(0644));
    size = bytes.size();
  }

  void store_into(ChunkCache& cache) const {
    Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    ASSERT_TRUE(fd);
    cache.store_packed(fd.get(), chunks);
  }

  bool hits(ChunkCache& cache, std::size_t i) const {
    std::vector<u8> out;
    const bool hit = cache.load(chunks[i].key, inputs[i], chunks[i].input_crc32,
                                true, kMax, out);
    if (hit) {
      EXPECT_EQ(out, stored[i]);
    }
    return hit;
  }
};

TEST(ChunkPacks, ACommittedArchiveIsLinkedAndServesTaggedHits) {
  TempDir tmp;
  const Archive a(tmp / "a.zip", 1);
  auto cache = make_cache(tmp / "c");
  a.store_into(*cache);
  const auto packs = files_in(tmp / "c" / "packs");
  ASSERT_EQ(packs.size(), 1u);
  EXPECT_EQ(fs::hard_link_count(a.path), 2u);
  EXPECT_EQ(read_file(packs[0]), read_file(a.path));
  const auto entries = entry_files(tmp / "c");
  ASSERT_EQ(entries.size(), 4u);
  for (const fs::path& e : entries) EXPECT_EQ(fs::file_size(e), kPointer);
  for (std::size_t i = 0; i < 4; ++i) EXPECT_TRUE(a.hits(*cache, i)) << i;
  EXPECT_EQ(cache->counters().tagged_hits, 4u);
  std::vector<u8> out;
  EXPECT_TRUE(
      cache->load_tagged(a.chunks[2].key, a.chunks[2].input_crc32, kMax, out));
  EXPECT_EQ(out, a.stored[2]);
  const ChunkCache::Usage u = cache->usage();
  EXPECT_EQ(u.entries, 4u);
  EXPECT_EQ(u.packs, 1u);
  EXPECT_EQ(u.bytes, a.size + 4 * kPointer);
  // The archive is the user's: the cache never wrote to it.
  EXPECT_EQ(read_file(a.path).size(), a.size);
}

// Changed in place after it was linked (an editor, `cp` over it): the first
// pointer that reads changed bytes is dropped with a warning and removes
// the pack; the other pointers are then plain misses, without warnings.
TEST(ChunkPacks, AnArchiveChangedInPlaceIsDroppedOnceNeverUsed) {
  TempDir tmp;
  const Archive a(tmp / "a.zip", 2);
  Log log;
  auto cache = make_cache(tmp / "c", &log);
  a.store_into(*cache);
  {
    std::fstream f(a.path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(a.chunks[1].offset + 10));
    f.put('\x7f');
  }
  EXPECT_FALSE(a.hits(*cache, 1));
  ASSERT_EQ(log.lines.size(), 1u);
  EXPECT_NE(log.lines[0].find("changed in place"), std::string::npos)
      << log.lines[0];
  EXPECT_TRUE(files_in(tmp / "c" / "packs").empty());
  EXPECT_EQ(fs::hard_link_count(a.path), 1u);
  for (std::size_t i : {0u, 2u, 3u}) EXPECT_FALSE(a.hits(*cache, i));
  EXPECT_EQ(log.lines.size(), 1u);
  EXPECT_EQ(cache->counters().corrupt, 1u);
  EXPECT_EQ(cache->counters().misses, 4u);
  EXPECT_TRUE(entry_files(tmp / "c").empty());  // dead pointers removed
}

// Where a pack cannot be trusted, would keep mostly other bytes or is large
// for the cap, the chunks are copied into plain entries instead.
TEST(ChunkPacks, PlainEntriesWhereAPackWouldNotServe) {
  TempDir tmp;
  struct Case {
    std::string name;
    fs::perms mode;
    u64 suffix;
    u64 max_bytes;
    bool link;
  };
  const Archive probe(tmp / "probe.zip", 3);
  const std::vector<Case> cases = {
      {"group-writable", fs::perms(0664), 100, kMax, true},
      {"mostly other bytes", fs::perms(0644), probe.size * 2, kMax, true},
      {"large for the cap", fs::perms(0644), 100, probe.size * 3, true},
      {"linking off", fs::perms(0644), 100, kMax, false},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const fs::path dir = tmp / ("c-" + std::to_string(&c - cases.data()));
    const Archive a(dir.string() + ".zip", 3, c.suffix);
    fs::permissions(a.path, c.mode);
    auto cache = make_cache(dir, nullptr, c.max_bytes, c.link);
    a.store_into(*cache);
    EXPECT_TRUE(files_in(dir / "packs").empty());
    EXPECT_EQ(fs::hard_link_count(a.path), 1u);
    const auto entries = entry_files(dir);
    EXPECT_EQ(entries.size(), 4u);
    for (const fs::path& e : entries) EXPECT_GT(fs::file_size(e), kPointer);
    for (std::size_t i = 0; i < 4; ++i) EXPECT_TRUE(a.hits(*cache, i)) << i;
  }
}

// A cache on another file system than the archive cannot link it (EXDEV):
// the chunks are read back into plain entries, silently (a cache on its
// own disk is an ordinary setup). /dev/shm is a tmpfs on every Linux this
// project supports.
TEST(ChunkPacks, AnArchiveOnAnotherFileSystemIsCopied) {
  TempDir tmp;
  ASSERT_TRUE(fs::is_directory("/dev/shm")) << "no /dev/shm";
  TempDir elsewhere("/dev/shm");
  struct stat here {};
  struct stat there {};
  ASSERT_EQ(::stat(tmp.path().c_str(), &here), 0);
  ASSERT_EQ(::stat(elsewhere.path().c_str(), &there), 0);
  ASSERT_NE(here.st_dev, there.st_dev)
      << "/dev/shm is on the same file system as " << tmp.path();
  const Archive a(elsewhere / "a.zip", 5);
  Log log;
  auto cache = make_cache(tmp / "cache", &log);
  a.store_into(*cache);
  EXPECT_TRUE(files_in(tmp / "cache" / "packs").empty());
  EXPECT_EQ(fs::hard_link_count(a.path), 1u);
  const auto entries = entry_files(tmp / "cache");
  EXPECT_EQ(entries.size(), 4u);
  for (const fs::path& e : entries) EXPECT_GT(fs::file_size(e), kPointer);
  for (std::size_t i = 0; i < 4; ++i) EXPECT_TRUE(a.hits(*cache, i)) << i;
  EXPECT_TRUE(log.lines.empty()) << log.lines.front();
}

// The tag binds the key, the pack and the offset: a pointer copied under
// another key fails (its bytes are not that chunk's), one moved to other
// bytes fails their CRC, one sent to another pack with the same bytes is
// only served after inflating it.
TEST(ChunkPacks, APointerMovedOrRetargetedIsNotTrusted) {
  TempDir tmp;
  const Archive a(tmp / "a.zip", 4);
  Log log;
  auto cache = make_cache(tmp / "c", &log);
  a.store_into(*cache);
  const fs::path p0 = entry_path(*cache, a.chunks[0].key);
  const fs::path p1 = entry_path(*cache, a.chunks[1].key);
  fs::copy_file(p0, p1, fs::copy_options::overwrite_existing);
  EXPECT_FALSE(a.hits(*cache, 1));
  EXPECT_EQ(cache->counters().corrupt, 1u);

  const fs::path p2 = entry_path(*cache, a.chunks[2].key);
  std::vector<u8> pointer = read_file(p2);
  for (int i = 0; i < 8; ++i)  // offset: chunk 3's
    pointer[32 + i] = static_cast<u8>(a.chunks[3].offset >> (8 * i));
  write_file(p2, pointer);
  EXPECT_FALSE(a.hits(*cache, 2));
  EXPECT_EQ(cache->counters().corrupt, 2u);

  // The same bytes under another pack id: a second link of the archive.
  const auto packs = files_in(tmp / "c" / "packs");
  ASSERT_EQ(packs.size(), 1u);
  const std::string other(32, 'a');
  fs::create_hard_link(a.path, tmp / "c" / "packs" / other);
  const fs::path p3 = entry_path(*cache, a.chunks[3].key);
  pointer = read_file(p3);
  for (int i = 0; i < 16; ++i) pointer[40 + i] = 0xaa;
  write_file(p3, pointer);
  const u64 tagged = cache->counters().tagged_hits;
  EXPECT_TRUE(a.hits(*cache, 3));
  EXPECT_EQ(cache->counters().tagged_hits, tagged);  // inflated, not trusted
}

void age(const fs::path& file, std::chrono::hours by) {
  fs::last_write_time(file, fs::file_time_type::clock::now() - by);
}

// prune() removes a pack with all its pointers, the least recently used
// pack first (its youngest pointer's mtime); pointers whose pack is gone
// go too, and a pack just linked but not pointed at yet stays.
TEST(ChunkPacks, PruneRemovesAPackWholeAndDeadPointers) {
  TempDir tmp;
  const Archive a(tmp / "a.zip", 5), b(tmp / "b.zip", 6), c(tmp / "c.zip", 7);
  auto cache = make_cache(tmp / "c");
  a.store_into(*cache);
  b.store_into(*cache);
  for (std::size_t i = 0; i < 4; ++i) {
    age(entry_path(*cache, a.chunks[i].key), std::chrono::hours(3));
    age(entry_path(*cache, b.chunks[i].key), std::chrono::hours(5));
  }
  // One of b's pointers used recently: b becomes the younger pack.
  age(entry_path(*cache, b.chunks[2].key), std::chrono::hours(1));
  c.store_into(*cache);
  // c's pack is gone (removed by hand): its pointers are dead.
  for (const fs::path& p : files_in(tmp / "c" / "packs"))
    if (fs::equivalent(p, c.path)) fs::remove(p);
  // A pack just linked, not yet pointed at: kept.
  fs::create_hard_link(tmp / "c.zip",
                       tmp / "c" / "packs" / std::string(32, 'b'));
  const u64 fresh = c.size;
  const ChunkCache::Usage left = cache->prune(b.size + 4 * kPointer + fresh);
  EXPECT_EQ(left.packs, 2u);
  EXPECT_EQ(left.entries, 4u);
  EXPECT_EQ(left.bytes, b.size + 4 * kPointer + fresh);
  EXPECT_FALSE(a.hits(*cache, 0));
  EXPECT_EQ(fs::hard_link_count(a.path), 1u);
  for (std::size_t i = 0; i < 4; ++i) EXPECT_TRUE(b.hits(*cache, i)) << i;
  EXPECT_FALSE(fs::exists(entry_path(*cache, c.chunks[0].key)));
}

TEST(ChunkPacks, ClearRemovesPacksNotTheArchive) {
  TempDir tmp;
  const Archive a(tmp / "a.zip", 8);
  auto cache = make_cache(tmp / "c");
  a.store_into(*cache);
  const std::vector<u8> before = read_file(a.path);
  cache->clear();
  EXPECT_FALSE(fs::exists(tmp / "c" / "packs"));
  EXPECT_TRUE(entry_files(tmp / "c").empty());
  EXPECT_EQ(fs::hard_link_count(a.path), 1u);
  EXPECT_EQ(read_file(a.path), before);
}

// The zip writer stores its misses after the commit, as pointers into the
// archive it wrote; a member rewritten as stored (deflate did not shrink
// it) has its chunks copied into plain entries before their bytes go.
TEST(ChunkPacks, TheWriterLinksItsArchiveAndCopiesWhatItTruncates) {
  TempDir tmp;
  constexpr u64 kChunk = 64 * 1024;
  // Mostly text, so that the chunks are most of the archive (a pack is
  // linked only then).
  const std::vector<u8> text = text_bytes(40 * kChunk + 5);
  const std::vector<u8> noise = random_bytes(kChunk + 3, 9);
  auto write = [&](const fs::path& out, std::shared_ptr<ChunkCache> cache) {
    ZipWriterOptions o;
    o.threads = 2;
    o.chunk_size = kChunk;
    o.timestamp = 1700000000;
    o.cache = std::move(cache);
    ZipWriter w(out, o);
    for (const auto* m : {&text, &noise})
      w.add_bytes(m == &text ? "text" : "noise",
                  std::string_view(reinterpret_cast<const char*>(m->data()),
                                   m->size()));
    w.commit();
  };
  write(tmp / "ref.zip", nullptr);
  auto cold = make_cache(tmp / "c");
  write(tmp / "cold.zip", cold);
  EXPECT_EQ(read_file(tmp / "cold.zip"), read_file(tmp / "ref.zip"));
  const auto packs = files_in(tmp / "c" / "packs");
  ASSERT_EQ(packs.size(), 1u);
  EXPECT_TRUE(fs::equivalent(packs[0], tmp / "cold.zip"));
  std::size_t pointers = 0, plain = 0;
  for (const fs::path& e : entry_files(tmp / "c"))
    if (fs::file_size(e) == kPointer)
      ++pointers;
    else if (fs::file_size(e) > kHeader)
      ++plain;
  EXPECT_EQ(pointers, 41u);  // the text's chunks
  EXPECT_EQ(plain, 2u);      // the noise's
  auto warm = make_cache(tmp / "c");
  write(tmp / "warm.zip", warm);
  EXPECT_EQ(read_file(tmp / "warm.zip"), read_file(tmp / "ref.zip"));
  EXPECT_EQ(warm->counters().misses, 0u);
  EXPECT_EQ(warm->counters().hits, warm->counters().tagged_hits);
  EXPECT_EQ(warm->counters().bytes_stored, 0u);
  EXPECT_EQ(files_in(tmp / "c" / "packs").size(), 1u);  // nothing new linked
}

}  // namespace
