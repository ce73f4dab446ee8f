// SPDX-License-Identifier: BSD-3-Clause
#include "archive/incompressible.hpp"

#include <cmath>
#include <cstring>
#include <vector>

namespace libpkg::archive {
namespace {

constexpr double kMinEntropyBits = 7.98;
// Pieces at least this close to random that are not stored: deflated by
// the fast deflater (fast_deflate.hpp).
constexpr double kMinEntropyBitsForFastLevel = 7.9;
// Repeats per sampled position, as a fraction: 15 in 10 000.
constexpr u64 kMaxRepeatsPer10000 = 15;
constexpr u64 kWindow = 32768;     // deflate's back-reference reach
constexpr u64 kProbeStep = 8;      // sample every 8th position
constexpr u64 kHistogramStep = 2;  // and every 2nd byte for the entropy

double entropy_bits(std::span<const u8> chunk) {
  // Four interleaved histograms keep the increments independent.
  u32 h[4][256] = {};
  u64 n = 0, i = 0;
  const u64 stride = 4 * kHistogramStep;
  for (; i + stride <= chunk.size(); i += stride, n += 4) {
    ++h[0][chunk[i]];
    ++h[1][chunk[i + kHistogramStep]];
    ++h[2][chunk[i + 2 * kHistogramStep]];
    ++h[3][chunk[i + 3 * kHistogramStep]];
  }
  double bits = 0;
  for (int b = 0; b < 256; ++b) {
    const u64 count = u64{h[0][b]} + h[1][b] + h[2][b] + h[3][b];
    if (count == 0) continue;
    const double p = static_cast<double>(count) / static_cast<double>(n);
    bits -= p * std::log2(p);
  }
  return bits;
}

// Sampled positions whose next 8 bytes equal the 8 bytes at the last
// sampled position with the same hash, within the window.
bool few_repeats(std::span<const u8> chunk) {
  constexpr unsigned kTableBits = 16;
  std::vector<u32> last(std::size_t{1} << kTableBits, ~u32{0});
  u64 probes = 0, repeats = 0;
  for (u64 i = 0; i + 8 <= chunk.size(); i += kProbeStep) {
    u64 v;
    std::memcpy(&v, chunk.data() + i, 8);
    const u32 slot =
        static_cast<u32>((v * 0x9E3779B97F4A7C15ull) >> (64 - kTableBits));
    const u32 prev = last[slot];
    last[slot] = static_cast<u32>(i);
    ++probes;
    if (prev != ~u32{0} && i - prev <= kWindow &&
        std::memcmp(chunk.data() + prev, chunk.data() + i, 8) == 0)
      ++repeats;
  }
  return repeats * 10000 <= probes * kMaxRepeatsPer10000;
}

// One piece's run: stored, deflated by the fast deflater, or at the
// writer's level. The entropy, computed once, decides both; it is the
// cheaper test and rejects most compressible data before the repeat scan.
ChunkRun judge_piece(std::span<const u8> piece, u64 begin) {
  ChunkRun run{begin, begin + piece.size(), false, false};
  if (piece.size() < kMinSizeForIncompressibleCheck) return run;
  const double bits = entropy_bits(piece);
  if (bits >= kMinEntropyBits && few_repeats(piece))
    run.stored = true;
  else if (bits >= kMinEntropyBitsForFastLevel)
    run.fast = true;
  return run;
}

}  // namespace

bool looks_incompressible(std::span<const u8> chunk) {
  return judge_piece(chunk, 0).stored;
}

std::vector<ChunkRun> plan_chunk(std::span<const u8> chunk) {
  std::vector<ChunkRun> plan;
  u64 begin = 0;
  do {
    const u64 rest = chunk.size() - begin;
    // The remainder joins the last piece: a short tail is too little data
    // for the estimate, and would otherwise always be compressed.
    const u64 end = rest < 2 * kIncompressiblePiece
                        ? chunk.size()
                        : begin + kIncompressiblePiece;
    const ChunkRun run = judge_piece(chunk.subspan(begin, end - begin), begin);
    if (!plan.empty() && plan.back().stored == run.stored &&
        plan.back().fast == run.fast)
      plan.back().end = end;
    else
      plan.push_back(run);
    begin = end;
  } while (begin < chunk.size());
  return plan;
}

bool stores_whole_chunk(const std::vector<ChunkRun>& plan) {
  return plan.size() == 1 && plan.front().stored;
}

}  // namespace libpkg::archive
