// SPDX-License-Identifier: BSD-3-Clause
// inflate_pass_bench: how far a faster decoder could cut make_non_final()'s
// pass (docs/archives.md, "Chunks"). libdeflate always ends its output with
// a final block whose header sits at a bit position only a decode finds, so
// every deflated run that is not the end of its member is decoded once.
// This times that pass as zlib's inflate with Z_BLOCK (the writer's
// fallback, scan_deflate_with_zlib()), libdeflate's complete decompressor
// and the block scanner the writer runs (scan_deflate(), deflate_scan.hpp),
// which skips runs of literal codes per table lookup and writes no output.
//
//   cmake --build build --target inflate_pass_bench
//   build/bench/inflate_pass_bench LEVEL FILE...
//
// Each FILE is cut into the writer's 8 MiB chunks; each chunk is planned by
// plan_chunk() and every run it deflates with libdeflate (at LEVEL; the
// nearly random runs go to igzip, whose output needs no scan) is compressed
// as the writer does. The three
// decoders then run over every such stream, one thread; the best of five
// rounds is printed per file, with ratios of zlib's time to the others'.
#include <libdeflate.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "archive/deflate_chunk.hpp"
#include "archive/deflate_scan.hpp"
#include "archive/incompressible.hpp"
#include "libpkg/base/fd.hpp"
#include "libpkg/base/integers.hpp"

using namespace libpkg;
using namespace libpkg::archive;
using Clock = std::chrono::steady_clock;

namespace {

constexpr u64 kChunk = u64{8} << 20;

struct Stream {
  std::vector<u8> deflated;  // final: ends the way libdeflate ends it
  u64 size = 0;              // uncompressed bytes
};

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: inflate_pass_bench LEVEL FILE...\n");
    return 2;
  }
  const int level = std::atoi(argv[1]);
  CompressorPool pool;
  libdeflate_decompressor* d = libdeflate_alloc_decompressor();
  std::printf(
      "| file | deflated runs | MB in | MB out | zlib Z_BLOCK s | "
      "libdeflate s | scanner s | zlib/libdeflate | zlib/scanner |\n"
      "|---|---|---|---|---|---|---|---|---|\n");
  for (int a = 2; a < argc; ++a) {
    const std::vector<u8> data =
        read_prefix(argv[a], std::filesystem::file_size(argv[a]));
    std::vector<Stream> streams;
    for (u64 off = 0; off < data.size(); off += kChunk) {
      const std::span<const u8> chunk(data.data() + off,
                                      std::min<u64>(kChunk, data.size() - off));
      for (const ChunkRun& run : plan_chunk(chunk)) {
        if (run.stored || run.fast) continue;
        const ChunkRun whole{0, run.end - run.begin, false, false};
        Stream s;
        s.size = whole.end;
        compress_chunk(pool, level, chunk.subspan(run.begin, whole.end),
                       {whole}, true, argv[a], s.deflated);
        streams.push_back(std::move(s));
      }
    }
    u64 in = 0, out = 0;
    for (const Stream& s : streams) {
      in += s.size;
      out += s.deflated.size();
    }
    double best_zlib = 1e9, best_libdeflate = 1e9, best_scan = 1e9;
    std::vector<u8> plain;
    for (int round = 0; round < 5; ++round) {
      double zlib_s = 0, libdeflate_s = 0, scan_s = 0;
      for (const Stream& s : streams) {
        auto t0 = Clock::now();
        const DeflateScan by_zlib = scan_deflate_with_zlib(s.deflated, argv[a]);
        zlib_s += seconds_since(t0);
        t0 = Clock::now();
        const std::optional<DeflateScan> scan =
            scan_deflate(s.deflated, s.size);
        scan_s += seconds_since(t0);
        if (!scan || scan->last_header_bit != by_zlib.last_header_bit ||
            scan->end_bit != by_zlib.end_bit) {
          std::fprintf(stderr, "%s: the scanner disagrees with zlib\n",
                       argv[a]);
          return 1;
        }
        plain.resize(s.size);
        t0 = Clock::now();
        size_t got = 0;
        if (libdeflate_deflate_decompress(
                d, s.deflated.data(), s.deflated.size(), plain.data(),
                plain.size(), &got) != LIBDEFLATE_SUCCESS ||
            got != s.size) {
          std::fprintf(stderr, "%s: a run does not inflate\n", argv[a]);
          return 1;
        }
        libdeflate_s += seconds_since(t0);
      }
      best_zlib = std::min(best_zlib, zlib_s);
      best_libdeflate = std::min(best_libdeflate, libdeflate_s);
      best_scan = std::min(best_scan, scan_s);
    }
    std::printf(
        "| %s | %zu | %.1f | %.1f | %.3f | %.3f | %.3f | %.2fx | %.2fx |\n",
        argv[a], streams.size(), static_cast<double>(in) / 1e6,
        static_cast<double>(out) / 1e6, best_zlib, best_libdeflate, best_scan,
        best_zlib / best_libdeflate, best_zlib / best_scan);
  }
  libdeflate_free_decompressor(d);
  return 0;
}
