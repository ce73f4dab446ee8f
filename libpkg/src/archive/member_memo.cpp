// SPDX-License-Identifier: BSD-3-Clause
#include "archive/member_memo.hpp"

#include <fmt/format.h>
#include <libdeflate.h>

#include <algorithm>
#include <array>

#include "archive/deflate_chunk.hpp"
#include "archive/le_bytes.hpp"

namespace libpkg::archive {
namespace {

// "LPKMEMO" + format version, the member's size and chunk count, its
// SHA-256; then per chunk: 1 if stored, its CRC-32, its key (zeros when
// stored).
constexpr std::array<u8, 8> kMagic = {'L', 'P', 'K', 'M', 'E', 'M', 'O', '1'};
constexpr u64 kHeaderSize = 8 + 8 + 8 + 32;
constexpr u64 kChunkSize = 1 + 4 + 32;

u64 encoded_size(u64 chunks) { return kHeaderSize + chunks * kChunkSize; }

}  // namespace

ChunkCache::Key member_memo_key(std::string_view identity, u64 size, int level,
                                u64 chunk_size) {
  return ChunkCache::key_for(
      fmt::format("libpkg member memo 1; {}; {} bytes; level {}; chunk size "
                  "{}; libdeflate {}; encoder {}; fast encoder {}; rules {}",
                  identity, size, level, chunk_size, LIBDEFLATE_VERSION_STRING,
                  ChunkCache::encoder_fingerprint(level),
                  fast_deflate_fingerprint(), kChunkRulesVersion),
      {});
}

std::optional<MemberMemo> load_member_memo(ChunkCache& cache,
                                           const ChunkCache::Key& key, u64 size,
                                           u64 chunks) {
  const u64 expected = encoded_size(chunks);
  const std::optional<std::vector<u8>> bytes = cache.load_own(key, expected);
  if (!bytes || bytes->size() != expected ||
      !std::equal(kMagic.begin(), kMagic.end(), bytes->begin()) ||
      get_le(bytes->data() + 8, 8) != size ||
      get_le(bytes->data() + 16, 8) != chunks)
    return std::nullopt;
  MemberMemo memo;
  const u8* p = bytes->data() + 24;
  std::copy_n(p, memo.sha256.size(), memo.sha256.begin());
  p += memo.sha256.size();
  memo.chunks.resize(chunks);
  for (ChunkFacts& c : memo.chunks) {
    if (p[0] > 1) return std::nullopt;
    c.stored = p[0] == 1;
    c.crc32 = static_cast<u32>(get_le(p + 1, 4));
    std::copy_n(p + 5, c.key.size(), c.key.begin());
    p += kChunkSize;
  }
  return memo;
}

void store_member_memo(ChunkCache& cache, const ChunkCache::Key& key, u64 size,
                       const MemberMemo& memo) {
  std::vector<u8> bytes;
  bytes.reserve(encoded_size(memo.chunks.size()));
  bytes.insert(bytes.end(), kMagic.begin(), kMagic.end());
  append_le(bytes, size, 8);
  append_le(bytes, memo.chunks.size(), 8);
  bytes.insert(bytes.end(), memo.sha256.begin(), memo.sha256.end());
  for (const ChunkFacts& c : memo.chunks) {
    bytes.push_back(c.stored ? 1 : 0);
    append_le(bytes, c.crc32, 4);
    if (c.stored)
      bytes.insert(bytes.end(), c.key.size(), u8{0});
    else
      bytes.insert(bytes.end(), c.key.begin(), c.key.end());
  }
  cache.store(key, 0, bytes);
}

}  // namespace libpkg::archive
