// SPDX-License-Identifier: BSD-3-Clause
// Member memos (archive/member_memo.hpp): a zip writer with a chunk cache
// writes a member whose source has an identity from what it memoized the
// last time, reading only the chunks the cache cannot give back, and the
// archive is byte-identical to one written without a cache, for any thread
// count. A memo that is not this user's own is ignored; a source that
// changes under its identity refuses the archive.
#include "archive/member_memo.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "archive/deflate_chunk.hpp"
#include "libpkg/archive/chunk_cache.hpp"
#include "libpkg/archive/source.hpp"
#include "libpkg/archive/zip_reader.hpp"
#include "libpkg/archive/zip_writer.hpp"
#include "libpkg/base/error.hpp"
#include "libpkg/base/overlay.hpp"
#include "libpkg/base/sha256.hpp"
#include "planted_entry.hpp"
#include "writer_fixtures.hpp"

namespace {

using namespace libpkg;
using namespace libpkg::archive;
using namespace writer_test;
using libpkg::archive::testing::entry_path;
namespace fs = std::filesystem;

// Chunks this large are tested for incompressibility (deflate_chunk.hpp),
// so random ones are stored, not cached: both kinds of memoized chunk.
constexpr u64 kChunk = u64{1} << 20;

// Bytes in memory with an identity the test controls, counting what the
// writer reads.
class CountingSource final : public ContentSource {
 public:
  CountingSource(std::vector<u8> bytes, std::string identity)
      : bytes_(std::move(bytes)), identity_(std::move(identity)) {}

  u64 size() const override { return bytes_.size(); }
  const std::string& name() const override { return name_; }
  void read(u64 offset, std::span<u8> out) const override {
    std::memcpy(out.data(), bytes_.data() + offset, out.size());
    read_ += out.size();
  }
  std::optional<std::string> content_identity() const override {
    return identity_;
  }
  // True for the next `still_` calls (all of them when negative), false
  // after; the writer calls it on its writing thread only.
  bool still_identified() const override {
    const int left = still_.load();
    if (left < 0) return true;
    if (left == 0) return false;
    still_.store(left - 1);
    return true;
  }

  std::vector<u8>& bytes() { return bytes_; }
  u64 bytes_read() const { return read_; }
  void holds_for(int calls) { still_ = calls; }

 private:
  std::vector<u8> bytes_;
  std::string identity_;
  std::string name_ = "counting source";
  mutable std::atomic<u64> read_{0};
  mutable std::atomic<int> still_{-1};
};

std::shared_ptr<ChunkCache> make_cache(const fs::path& dir) {
  ChunkCacheOptions o;
  o.dir = dir;
  return std::make_shared<ChunkCache>(o);
}

ZipWriterOptions options(unsigned threads, std::shared_ptr<ChunkCache> cache) {
  ZipWriterOptions o;
  o.threads = threads;
  o.chunk_size = kChunk;
  o.timestamp = 1700000000;
  o.cache = std::move(cache);
  return o;
}

// Compressible text over several chunks and random bytes the writer stores.
struct Members {
  std::shared_ptr<CountingSource> text = std::make_shared<CountingSource>(
      text_bytes(5 * kChunk + 4321), "test text 1");
  std::shared_ptr<CountingSource> noise = std::make_shared<CountingSource>(
      random_bytes(2 * kChunk + 99, 7), "test noise 1");
};

// Writes both members (and a small one) to `out`; the writer's results.
std::vector<ZipMemberResult> write(const fs::path& out, const Members& m,
                                   unsigned threads,
                                   std::shared_ptr<ChunkCache> cache) {
  ZipWriter w(out, options(threads, std::move(cache)));
  w.add("small.txt", bytes_source("tiny", "small"), {});
  w.add("lib/text.so", m.text, {});
  w.add("lib/noise.so", m.noise, {});
  return w.commit();
}

TEST(MemberMemo, WarmWriteReadsOnlyStoredChunksAndIsByteIdentical) {
  TempDir tmp;
  Members m;
  write(tmp / "ref.zip", m, 1, nullptr);
  const std::vector<u8> ref = read_file(tmp / "ref.zip");
  const fs::path dir = tmp / "cache";
  {
    auto cold = make_cache(dir);
    write(tmp / "cold.zip", m, 2, cold);
    EXPECT_EQ(read_file(tmp / "cold.zip"), ref);
    EXPECT_EQ(cold->counters().memo_hits, 0u);
  }
  for (unsigned threads : {1u, 2u, 4u}) {
    SCOPED_TRACE(threads);
    const u64 text_before = m.text->bytes_read();
    const u64 noise_before = m.noise->bytes_read();
    auto warm = make_cache(dir);
    const auto results = write(tmp / "warm.zip", m, threads, warm);
    EXPECT_EQ(read_file(tmp / "warm.zip"), ref);
    EXPECT_EQ(warm->counters().memo_hits, 2u);
    // Every text chunk came from its tagged entry, unread; the stored
    // noise chunks had to be read (their bytes are the output).
    EXPECT_EQ(m.text->bytes_read() - text_before, 0u);
    // Noise: its two full chunks, stored, and the whole member again when
    // deflate did not shrink it (written stored); its 99-byte tail is too
    // small to be tested, so it is deflated and cached like the text.
    EXPECT_EQ(m.noise->bytes_read() - noise_before,
              2 * kChunk + m.noise->size());
    EXPECT_EQ(warm->counters().tagged_hits, 7u);
    EXPECT_EQ(warm->counters().misses, 0u);
    // The RECORD hashes come from the memo: still the content's.
    ASSERT_EQ(results.size(), 3u);
    EXPECT_EQ(results[1].sha256, Sha256::of(m.text->bytes()));
    EXPECT_EQ(results[2].sha256, Sha256::of(m.noise->bytes()));
  }
  ZipReader r = ZipReader::open(tmp / "warm.zip");
  const std::string text = r.read_text(*r.find("lib/text.so"));
  EXPECT_TRUE(std::equal(text.begin(), text.end(), m.text->bytes().begin(),
                         [](char a, u8 b) { return static_cast<u8>(a) == b; }));
}

// The verify mode (ChunkCacheOptions::verify_every_hit, or
// LIBPKG_CACHE_VERIFY=1): no tag, memo or memoized digest is believed;
// every hit is inflated against the bytes read, and nothing is retagged.
TEST(MemberMemo, VerifyModeBelievesNoTagNorMemo) {
  TempDir tmp;
  Members m;
  write(tmp / "ref.zip", m, 1, nullptr);
  const fs::path dir = tmp / "cache";
  write(tmp / "cold.zip", m, 2, make_cache(dir));
  for (bool by_environment : {false, true}) {
    SCOPED_TRACE(by_environment);
    ChunkCacheOptions o;
    o.dir = dir;
    if (by_environment)
      ::setenv("LIBPKG_CACHE_VERIFY", "1", 1);
    else
      o.verify_every_hit = true;
    auto verify = std::make_shared<ChunkCache>(o);
    ::unsetenv("LIBPKG_CACHE_VERIFY");
    const u64 before = m.text->bytes_read();
    write(tmp / "verified.zip", m, 2, verify);
    EXPECT_EQ(read_file(tmp / "verified.zip"), read_file(tmp / "ref.zip"));
    const auto c = verify->counters();
    EXPECT_EQ(c.memo_hits, 0u);
    EXPECT_EQ(c.tagged_hits, 0u);
    EXPECT_EQ(c.hits, 7u);
    EXPECT_EQ(c.misses, 0u);
    EXPECT_EQ(m.text->bytes_read() - before, m.text->size());
    // Only the two memos were written again (a few hundred bytes): no
    // chunk entry was retagged.
    EXPECT_LT(c.bytes_stored, 4096u);
  }
  // The same cache, trusted again.
  auto warm = make_cache(dir);
  write(tmp / "warm.zip", m, 2, warm);
  EXPECT_EQ(warm->counters().memo_hits, 2u);
}

TEST(MemberMemo, MissingEntryIsReadAndCompressedAgain) {
  TempDir tmp;
  Members m;
  write(tmp / "ref.zip", m, 1, nullptr);
  const fs::path dir = tmp / "cache";
  write(tmp / "cold.zip", m, 2, make_cache(dir));
  // Evict the third text chunk's entry (prune would, under its cap).
  auto warm = make_cache(dir);
  const std::span<const u8> third(m.text->bytes().data() + 2 * kChunk, kChunk);
  const fs::path evicted =
      entry_path(*warm, ChunkCache::key(third, 6, /*final=*/false));
  ASSERT_TRUE(fs::remove(evicted));
  const u64 before = m.text->bytes_read();
  write(tmp / "warm.zip", m, 2, warm);
  EXPECT_EQ(read_file(tmp / "warm.zip"), read_file(tmp / "ref.zip"));
  EXPECT_EQ(m.text->bytes_read() - before, kChunk);
  EXPECT_EQ(warm->counters().memo_hits, 2u);
  EXPECT_EQ(warm->counters().misses, 1u);
  EXPECT_TRUE(fs::exists(evicted));  // stored again
}

TEST(MemberMemo, OnlyOwnClosedMemosAreBelieved) {
  TempDir tmp;
  Members m;
  write(tmp / "ref.zip", m, 1, nullptr);
  const fs::path dir = tmp / "cache";
  write(tmp / "cold.zip", m, 2, make_cache(dir));
  const ChunkCache::Key key =
      member_memo_key("test text 1", m.text->size(), 6, kChunk);
  auto probe = make_cache(dir);
  const fs::path memo = entry_path(*probe, key);
  ASSERT_TRUE(fs::is_regular_file(memo));
  ASSERT_TRUE(load_member_memo(*probe, key, m.text->size(), 6).has_value());
  // Wrong shape: another size or chunk count is not this memo.
  EXPECT_FALSE(load_member_memo(*probe, key, m.text->size() + 1, 6));
  EXPECT_FALSE(load_member_memo(*probe, key, m.text->size(), 5));
  // A memo others may write: its tag does not vouch for it.
  fs::permissions(memo, fs::perms::group_write, fs::perm_options::add);
  EXPECT_FALSE(load_member_memo(*probe, key, m.text->size(), 6));
  const u64 before = m.text->bytes_read();
  auto warm = make_cache(dir);
  write(tmp / "warm.zip", m, 2, warm);
  EXPECT_EQ(read_file(tmp / "warm.zip"), read_file(tmp / "ref.zip"));
  EXPECT_EQ(warm->counters().memo_hits, 1u);  // the noise member's only
  EXPECT_EQ(m.text->bytes_read() - before, m.text->size());
  // A planted memo (forged tag) for the same key: ignored as well.
  libpkg::archive::testing::set_hit_tag(memo, 0x5a5a5a5a5a5a5a5aull);
  fs::permissions(memo, fs::perms::group_write, fs::perm_options::remove);
  EXPECT_FALSE(load_member_memo(*probe, key, m.text->size(), 6));
}

TEST(MemberMemo, SourceNoLongerIdentifiedIsWrittenWithoutItsMemo) {
  TempDir tmp;
  Members m;
  const fs::path dir = tmp / "cache";
  write(tmp / "cold.zip", m, 2, make_cache(dir));
  // The file changed since its source was made: the memo is not used, the
  // member is read and hashed, and nothing is memoized for it.
  m.text->bytes()[3] ^= 0xff;
  m.text->holds_for(0);
  write(tmp / "ref.zip", m, 1, nullptr);
  auto warm = make_cache(dir);
  const auto results = write(tmp / "changed.zip", m, 2, warm);
  EXPECT_EQ(read_file(tmp / "changed.zip"), read_file(tmp / "ref.zip"));
  EXPECT_EQ(results[1].sha256, Sha256::of(m.text->bytes()));
  EXPECT_EQ(warm->counters().memo_hits, 1u);
}

TEST(MemberMemo, ChangeWhileWrittenFromTheMemoRefusesTheArchive) {
  TempDir tmp;
  Members m;
  const fs::path dir = tmp / "cache";
  write(tmp / "cold.zip", m, 2, make_cache(dir));
  // Identified when the memo is looked up, changed by the time the member
  // is written: its RECORD hash would not be its content's.
  m.text->holds_for(1);
  try {
    write(tmp / "bad.zip", m, 2, make_cache(dir));
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::io);
    EXPECT_NE(e.message().find("changed while it was being archived"),
              std::string::npos)
        << e.message();
  }
  EXPECT_FALSE(fs::exists(tmp / "bad.zip"));
  // A stored chunk read back with another CRC than memoized: the same.
  m.text->holds_for(-1);
  m.noise->bytes()[kChunk + 5] ^= 0xff;
  EXPECT_THROW(write(tmp / "bad.zip", m, 2, make_cache(dir)), Error);
  EXPECT_FALSE(fs::exists(tmp / "bad.zip"));
}

// Files: the identity holds only for files unchanged for two seconds, and
// names the edit too.
TEST(MemberMemo, FileSourcesAreIdentifiedWhenSettled) {
  TempDir tmp;
  const std::vector<u8> bytes = text_bytes(3 * kChunk + 17);
  write_file(tmp / "fresh.so", bytes);
  EXPECT_FALSE(file_source(tmp / "fresh.so")->content_identity());
  EXPECT_FALSE(file_source(tmp / "fresh.so")->still_identified());
  const fs::path lib = settled_file(tmp / "lib.so", bytes);
  const SourcePtr plain = file_source(lib);
  ASSERT_TRUE(plain->content_identity());
  EXPECT_TRUE(plain->still_identified());
  Overlay one(bytes.size());
  one.write(100, std::vector<u8>{1, 2, 3});
  Overlay other(bytes.size());
  other.write(100, std::vector<u8>{1, 2, 4});
  const SourcePtr a = overlay_source(lib, one);
  const SourcePtr b = overlay_source(lib, other);
  ASSERT_TRUE(a->content_identity() && b->content_identity());
  EXPECT_NE(*a->content_identity(), *b->content_identity());
  EXPECT_NE(*a->content_identity(), *plain->content_identity());
  EXPECT_EQ(*a->content_identity(),
            *overlay_source(lib, one)->content_identity());
  // Any change to the file, even of its metadata only, ends the identity.
  fs::permissions(lib, fs::perms::group_read, fs::perm_options::add);
  EXPECT_FALSE(plain->still_identified());
  EXPECT_FALSE(a->still_identified());
  EXPECT_FALSE(file_source(lib)->content_identity());  // changed just now
}

TEST(MemberMemo, ArchiveOfEditedFileIsTheSameFromItsMemo) {
  TempDir tmp;
  std::vector<u8> bytes = text_bytes(4 * kChunk + 17);
  const fs::path lib = settled_file(tmp / "lib.so", bytes);
  Overlay edit(bytes.size());
  edit.write(64, std::vector<u8>(40, 'x'));
  edit.resize(bytes.size() + 5000);
  edit.write(bytes.size() + 10, std::vector<u8>{9, 9, 9});
  auto archive = [&](const fs::path& out, std::shared_ptr<ChunkCache> cache) {
    ZipWriter w(out, options(2, std::move(cache)));
    w.add("lib.so", overlay_source(lib, edit), {});
    w.add_file("plain.so", lib, {});
    return w.commit();
  };
  archive(tmp / "ref.zip", nullptr);
  const fs::path dir = tmp / "cache";
  archive(tmp / "cold.zip", make_cache(dir));
  auto warm = make_cache(dir);
  const auto results = archive(tmp / "warm.zip", warm);
  EXPECT_EQ(read_file(tmp / "warm.zip"), read_file(tmp / "ref.zip"));
  EXPECT_EQ(read_file(tmp / "cold.zip"), read_file(tmp / "ref.zip"));
  EXPECT_EQ(warm->counters().memo_hits, 2u);
  EXPECT_EQ(results[1].sha256, Sha256::of(bytes));
  // Rewritten with other bytes of the same size: a new identity, so the
  // archive has the new content and its hash.
  bytes[2 * kChunk] ^= 0x55;
  write_file(lib, bytes);
  auto after = make_cache(dir);
  const auto changed = archive(tmp / "changed.zip", after);
  EXPECT_EQ(after->counters().memo_hits, 0u);
  EXPECT_EQ(changed[1].sha256, Sha256::of(bytes));
  ZipReader r = ZipReader::open(tmp / "changed.zip");
  EXPECT_EQ(r.read_text(*r.find("plain.so")),
            std::string(bytes.begin(), bytes.end()));
}

}  // namespace
