// SPDX-License-Identifier: BSD-3-Clause
// file_digest (libpkg/archive/file_digest.hpp): the SHA-256 of a file,
// memoized in the chunk cache for a file unchanged since, only from this
// user's own tagged entries, never for a file changed in the last seconds.
#include "libpkg/archive/file_digest.hpp"

#include <gtest/gtest.h>
#include <libdeflate.h>

#include <chrono>
#include <thread>
#include <vector>

#include "archive/hit_tag.hpp"
#include "libpkg/base/error.hpp"
#include "planted_entry.hpp"
#include "writer_fixtures.hpp"

namespace {

using namespace libpkg;
using namespace libpkg::archive;
using namespace writer_test;
namespace fs = std::filesystem;

std::shared_ptr<ChunkCache> make_cache(const fs::path& dir) {
  ChunkCacheOptions o;
  o.dir = dir;
  return std::make_shared<ChunkCache>(o);
}

// The cache's entries (the tag key left out).
std::vector<fs::path> entries(const fs::path& dir) {
  std::vector<fs::path> out;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file() && e.path() != hit_key_path(dir))
      out.push_back(e.path());
  return out;
}

// The chunk key an entry file is named after (<2 hex>/<62 hex>).
ChunkCache::Key key_of(const fs::path& entry) {
  const std::string hex =
      entry.parent_path().filename().string() + entry.filename().string();
  ChunkCache::Key key{};
  for (size_t i = 0; i < key.size(); ++i)
    key[i] = static_cast<u8>(std::stoi(hex.substr(2 * i, 2), nullptr, 16));
  return key;
}

// Rewrites a digest entry to hold `digest`, with a valid stored CRC and the
// tag `tag` (what someone holding the key, or not, would write).
void rewrite_entry(const fs::path& entry, const Sha256::Digest& digest,
                   u64 tag) {
  std::vector<u8> bytes = read_file(entry);
  ASSERT_EQ(bytes.size(), 32u + 32u);
  std::copy(digest.begin(), digest.end(), bytes.begin() + 32);
  const u32 crc = libdeflate_crc32(0, digest.data(), digest.size());
  for (int i = 0; i < 4; ++i) bytes[20 + i] = static_cast<u8>(crc >> (8 * i));
  write_file(entry, bytes);
  libpkg::archive::testing::set_hit_tag(entry, tag);
}

TEST(FileDigest, MemoizedOnlyInOwnTaggedEntriesOfAnUnchangedFile) {
  TempDir tmp;
  const std::vector<u8> content = text_bytes(3 << 20);
  const fs::path lib = settled_file(tmp / "libx.so", content);
  const Sha256::Digest real = Sha256::of(content);
  auto cache = make_cache(tmp / "c");
  EXPECT_EQ(file_digest(lib, cache.get()), real);
  const std::vector<fs::path> stored = entries(tmp / "c");
  ASSERT_EQ(stored.size(), 1u);
  EXPECT_EQ(file_digest(lib, cache.get()), real);

  // What is returned is the memoized value: one written with this user's
  // own key is believed (the test forges it to tell it from a hash).
  Sha256::Digest forged = real;
  forged[0] ^= 0xff;
  const std::vector<u8> key_bytes = read_file(hit_key_path(tmp / "c"));
  HitKey key{};
  std::copy(key_bytes.begin(), key_bytes.end(), key.begin());
  rewrite_entry(stored[0], forged,
                hit_tag(key, key_of(stored[0]), 0, forged.size(),
                        libdeflate_crc32(0, forged.data(), forged.size())));
  EXPECT_EQ(file_digest(lib, make_cache(tmp / "c").get()), forged);

  // Without a valid tag (someone who cannot read the key), or untagged:
  // hashed again, and the entry stored anew.
  for (u64 tag : {u64{0x5a5a5a5a5a5a5a5a}, u64{0}}) {
    rewrite_entry(stored[0], forged, tag);
    EXPECT_EQ(file_digest(lib, make_cache(tmp / "c").get()), real) << tag;
    EXPECT_EQ(file_digest(lib, make_cache(tmp / "c").get()), real) << tag;
    const std::vector<u8> entry = read_file(stored[0]);
    EXPECT_TRUE(std::equal(real.begin(), real.end(), entry.begin() + 32));
  }
}

TEST(FileDigest, ChangedFileIsHashedAgain) {
  TempDir tmp;
  std::vector<u8> content = text_bytes(100000);
  const fs::path lib = settled_file(tmp / "liby.so", content);
  auto cache = make_cache(tmp / "c");
  EXPECT_EQ(file_digest(lib, cache.get()), Sha256::of(content));
  // Same size, same path, other bytes: its ctime moved, so its key did.
  content[5000] ^= 1;
  write_file(lib, content);
  EXPECT_EQ(file_digest(lib, cache.get()), Sha256::of(content));
  // Changed just now: not memoized (only the first version's entry).
  EXPECT_EQ(entries(tmp / "c").size(), 1u);
}

TEST(FileDigest, RecentFileAndNoCacheAreHashedEveryTime) {
  TempDir tmp;
  const std::vector<u8> content = random_bytes(70000, 9);
  write_file(tmp / "libz.so", content);
  auto cache = make_cache(tmp / "c");
  EXPECT_EQ(file_digest(tmp / "libz.so", cache.get()), Sha256::of(content));
  EXPECT_FALSE(fs::exists(tmp / "c"));  // nothing stored, nothing created
  EXPECT_EQ(file_digest(tmp / "libz.so", nullptr), Sha256::of(content));
  EXPECT_THROW(file_digest(tmp / "missing.so", cache.get()), Error);
}

}  // namespace
