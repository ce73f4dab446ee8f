// SPDX-License-Identifier: BSD-3-Clause
// Splice (archive/splice.hpp): an edited member written by re-using the
// input's deflate data. Inputs are deflated here by zlib in every shape it
// has (levels 0-9, fixed/Huffman-only/RLE strategies, sync, full, partial
// and block flushes that leave empty and unaligned blocks) and by our own
// writer (restart points); edits are random patches, growth and cuts, and
// ones aimed at block boundaries and at exactly 32 KiB after them. Every
// output is inflated by zlib and libdeflate directly and compared with the
// overlay applied to the original by hand; its restart points are checked
// by inflating from each with a fresh zlib stream.
#include "archive/splice.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <libdeflate.h>
#include <zlib.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "archive/edit_map.hpp"
#include "archive/restart_index.hpp"
#include "libpkg/archive/member_view.hpp"
#include "libpkg/archive/source.hpp"
#include "libpkg/archive/zip_reader.hpp"
#include "libpkg/archive/zip_writer.hpp"
#include "libpkg/base/error.hpp"
#include "libpkg/base/overlay.hpp"
#include "libpkg/base/sha256.hpp"
#include "libpkg/base/thread_pool.hpp"
#include "reader_zip_builder.hpp"
#include "writer_fixtures.hpp"

namespace {

using namespace libpkg;
using namespace libpkg::archive;
using reader_testing::Bytes;

constexpr u64 kChunk = 64 * 1024;

// --- inputs ---------------------------------------------------------------

struct Shape {
  std::string name;
  int level = 6;
  int strategy = Z_DEFAULT_STRATEGY;
  std::size_t flush_every = 0;  // 0: one deflate call
  int flush = Z_NO_FLUSH;
};

std::vector<Shape> shapes() {
  return {
      {"level1", 1},
      {"level6", 6},
      {"level9", 9},
      {"stored", 0},
      {"fixed", 6, Z_FIXED},
      {"huffman_only", 6, Z_HUFFMAN_ONLY},
      {"rle", 6, Z_RLE},
      {"sync_flush", 6, Z_DEFAULT_STRATEGY, 40000, Z_SYNC_FLUSH},
      {"full_flush", 6, Z_DEFAULT_STRATEGY, 50000, Z_FULL_FLUSH},
      {"partial_flush", 5, Z_DEFAULT_STRATEGY, 30000, Z_PARTIAL_FLUSH},
      {"block_flush", 7, Z_DEFAULT_STRATEGY, 20000, Z_BLOCK},
      {"level1_fixed_flushes", 1, Z_FIXED, 7000, Z_BLOCK},
  };
}

Bytes zlib_deflate(const Bytes& in, const Shape& s) {
  z_stream z{};
  if (deflateInit2(&z, s.level, Z_DEFLATED, -15, 8, s.strategy) != Z_OK)
    throw std::runtime_error("deflateInit2");
  Bytes out(deflateBound(&z, in.size()) + in.size() / 8 + 4096);
  z.next_out = out.data();
  z.avail_out = static_cast<uInt>(out.size());
  std::size_t at = 0;
  do {
    const std::size_t n = s.flush_every == 0
                              ? in.size() - at
                              : std::min(s.flush_every, in.size() - at);
    z.next_in = const_cast<Bytef*>(in.data() + at);
    z.avail_in = static_cast<uInt>(n);
    at += n;
    const int flush = at == in.size() ? Z_FINISH : s.flush;
    const int rc = deflate(&z, flush);
    if (rc != (flush == Z_FINISH ? Z_STREAM_END : Z_OK))
      throw std::runtime_error("deflate");
  } while (at < in.size());
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

// Text, noise and runs of zeros: every kind of block zlib makes.
Bytes mixed(std::size_t size, u32 seed) {
  std::mt19937 rng(seed);
  Bytes b;
  b.reserve(size);
  while (b.size() < size) {
    const std::size_t n =
        std::min<std::size_t>(size - b.size(), 1000 + rng() % 60000);
    switch (rng() % 3) {
      case 0:
        for (std::size_t i = 0; i < n; ++i)
          b.push_back(
              static_cast<u8>("lorem ipsum dolor "[(i + rng() % 3) % 18]));
        break;
      case 1:
        for (std::size_t i = 0; i < n; ++i) b.push_back(static_cast<u8>(rng()));
        break;
      default:
        b.insert(b.end(), n, 0);
    }
  }
  return b;
}

std::shared_ptr<const ZipReader> zip_with(const std::string& name,
                                          const Bytes& data,
                                          const Bytes& deflated,
                                          Bytes central_extra = {}) {
  reader_testing::Member m = reader_testing::file(name, data);
  m.compressed = deflated;
  m.central_extra = std::move(central_extra);
  return std::make_shared<const ZipReader>(
      ZipReader::from_bytes(reader_testing::build_zip({m}).bytes, "in.zip"));
}

// The bit offsets of the block boundaries of a raw deflate stream, with
// the uncompressed offsets there (independent of the library's scanner).
std::vector<std::pair<u64, u64>> zlib_boundaries(const Bytes& deflated,
                                                 std::size_t size) {
  std::vector<std::pair<u64, u64>> out;
  z_stream z{};
  inflateInit2(&z, -15);
  Bytes sink(size + 1);
  z.next_in = const_cast<Bytef*>(deflated.data());
  z.avail_in = static_cast<uInt>(deflated.size());
  z.next_out = sink.data();
  z.avail_out = static_cast<uInt>(sink.size());
  for (;;) {
    const int rc = inflate(&z, Z_BLOCK);
    if (rc == Z_STREAM_END || rc != Z_OK) break;
    if (z.data_type & 128)
      out.emplace_back((deflated.size() - z.avail_in) * 8 - (z.data_type & 7),
                       z.total_out);
  }
  inflateEnd(&z);
  return out;
}

// --- edits ----------------------------------------------------------------

struct Edit {
  Overlay overlay;
  Bytes expected;  // the overlay applied by hand
};

Edit make_edit(const Bytes& original, std::vector<std::pair<u64, Bytes>> writes,
               std::optional<u64> resize) {
  Edit e{Overlay(original.size()), original};
  for (auto& [off, bytes] : writes) {
    e.overlay.write(off, bytes);
    if (e.expected.size() < off + bytes.size())
      e.expected.resize(off + bytes.size(), 0);
    std::copy(bytes.begin(), bytes.end(), e.expected.begin() + off);
  }
  if (resize) {
    e.overlay.resize(*resize);
    e.expected.resize(*resize, 0);
  }
  if (e.expected.size() < e.overlay.size())
    e.expected.resize(e.overlay.size(), 0);
  return e;
}

Bytes random_bytes(std::mt19937& rng, std::size_t n) {
  Bytes b(n);
  for (auto& x : b) x = static_cast<u8>(rng());
  return b;
}

// Random patches, aimed now and then at block boundaries, at exactly one
// window (32 KiB) after one, at the first and last bytes; sometimes a
// resize.
Edit random_edit(const Bytes& original,
                 const std::vector<std::pair<u64, u64>>& boundaries,
                 std::mt19937& rng) {
  std::vector<std::pair<u64, Bytes>> writes;
  const u64 n = original.size();
  const int count = static_cast<int>(rng() % 4);
  for (int i = 0; i < count && n > 0; ++i) {
    u64 at = rng() % n;
    const int aim = static_cast<int>(rng() % 6);
    if (aim == 0 && !boundaries.empty()) {
      at = boundaries[rng() % boundaries.size()].second;
      if (rng() % 2 && at > 0) --at;
    } else if (aim == 1 && !boundaries.empty()) {
      at = boundaries[rng() % boundaries.size()].second + 32768 - (rng() % 2);
    } else if (aim == 2) {
      at = 0;
    } else if (aim == 3) {
      at = n - 1;
    }
    if (at >= n) at = n - 1;
    const std::size_t len = 1 + rng() % (rng() % 4 == 0 ? 40000 : 64);
    writes.emplace_back(at, random_bytes(rng, std::min<u64>(len, n - at)));
  }
  std::optional<u64> resize;
  switch (rng() % 6) {
    case 0:
      resize = n + 1 + rng() % 100000;  // grows (zeros, maybe a patch)
      writes.emplace_back(n + rng() % 1000, random_bytes(rng, 1 + rng() % 50));
      break;
    case 1:
      resize = n == 0 ? 0 : rng() % n;  // cut
      break;
    default:
      break;
  }
  return make_edit(original, std::move(writes), resize);
}

// --- checks ---------------------------------------------------------------

Bytes libdeflate_inflate(std::span<const u8> deflated, std::size_t size) {
  libdeflate_decompressor* d = libdeflate_alloc_decompressor();
  Bytes out(size);
  std::size_t got = 0;
  const auto rc = libdeflate_deflate_decompress(
      d, deflated.data(), deflated.size(), out.data(), out.size(), &got);
  libdeflate_free_decompressor(d);
  EXPECT_EQ(rc, LIBDEFLATE_SUCCESS);
  out.resize(got);
  return out;
}

// Inflating from each restart point with an empty window gives the rest of
// the member: the points are where they say and independent.
void expect_points_valid(std::span<const u8> deflated,
                         const std::vector<RestartPoint>& points,
                         const Bytes& expected, const std::string& what) {
  u64 prev_u = 0, prev_c = 0;
  for (const RestartPoint& p : points) {
    ASSERT_GT(p.uncompressed, prev_u) << what;
    ASSERT_GT(p.compressed, prev_c) << what;
    ASSERT_LT(p.uncompressed, expected.size()) << what;
    prev_u = p.uncompressed;
    prev_c = p.compressed;
    const Bytes rest = writer_test::zlib_inflate_raw(
        deflated.subspan(static_cast<std::size_t>(p.compressed)));
    ASSERT_EQ(rest.size(), expected.size() - p.uncompressed)
        << what << " point " << p.uncompressed;
    EXPECT_TRUE(
        std::equal(rest.begin(), rest.end(), expected.begin() + p.uncompressed))
        << what << " point " << p.uncompressed;
  }
}

struct Written {
  Bytes archive;
  ZipMemberResult result;
};

Written write_edited(const std::shared_ptr<const ZipReader>& zip,
                     const Overlay& overlay, unsigned threads, int level = 6,
                     u64 chunk = kChunk) {
  writer_test::TempDir dir;
  ZipWriterOptions o;
  o.threads = threads;
  o.chunk_size = chunk;
  o.level = level;
  o.timestamp = 315532800;
  ZipWriter w(dir / "out.zip", o);
  w.add("lib.so", edited_member_source(zip, zip->entries()[0],
                                       std::make_shared<Overlay>(overlay)));
  Written out;
  out.result = w.commit().at(0);
  out.archive = writer_test::read_file(dir / "out.zip");
  return out;
}

void check_output(const Written& w, const Bytes& expected,
                  const std::string& what) {
  ZipReader out = ZipReader::from_bytes(w.archive, "out.zip");
  ASSERT_EQ(out.entries().size(), 1u) << what;
  const ZipEntry& e = out.entries()[0];
  ASSERT_EQ(e.uncompressed_size, expected.size()) << what;
  EXPECT_EQ(out.read_all(e), expected) << what;  // our reader, CRC checked
  EXPECT_EQ(e.crc32, writer_test::zlib_crc32(expected)) << what;
  ASSERT_TRUE(w.result.sha256) << what;
  EXPECT_EQ(Sha256::hex(*w.result.sha256), Sha256::hex(Sha256::of(expected)))
      << what;
  if (e.method == 8) {
    EXPECT_EQ(writer_test::zlib_inflate_raw(out.raw(e)), expected) << what;
    EXPECT_EQ(libdeflate_inflate(out.raw(e), expected.size()), expected)
        << what;
    expect_points_valid(out.raw(e), e.restart_points, expected, what);
  }
}

// --- tests ----------------------------------------------------------------

TEST(Splice, RandomEditsOfEveryZlibShapeInflateToTheOverlay) {
  std::mt19937 rng(20261124);
  int spliced = 0, reused = 0;
  for (const Shape& shape : shapes()) {
    for (int round = 0; round < 5; ++round) {
      const Bytes original =
          mixed(kChunk + rng() % (6 * kChunk), static_cast<u32>(rng()));
      const Bytes deflated = zlib_deflate(original, shape);
      auto zip = zip_with("lib.so", original, deflated);
      const auto boundaries = zlib_boundaries(deflated, original.size());
      const Edit edit = random_edit(original, boundaries, rng);
      const std::string what = fmt::format("{} round {}", shape.name, round);
      const Written one = write_edited(zip, edit.overlay, 1);
      check_output(one, edit.expected, what);
      const Written three = write_edited(zip, edit.overlay, 3);
      EXPECT_EQ(one.archive, three.archive) << what << ": -j1 vs -j3";
      spliced += one.result.spliced;
      reused += one.result.reused > 0;
    }
  }
  EXPECT_EQ(spliced, static_cast<int>(shapes().size()) * 5);
  EXPECT_GT(reused, static_cast<int>(shapes().size()) * 3);
}

TEST(Splice, EditsAtEveryBoundaryAndOneWindowAfterIt) {
  const Bytes original = mixed(5 * kChunk, 11);
  for (const Shape& shape :
       {Shape{"level6", 6},
        Shape{"partial_flush", 5, Z_DEFAULT_STRATEGY, 9000, Z_PARTIAL_FLUSH}}) {
    const Bytes deflated = zlib_deflate(original, shape);
    auto zip = zip_with("lib.so", original, deflated);
    const auto boundaries = zlib_boundaries(deflated, original.size());
    ASSERT_GT(boundaries.size(), 3u) << shape.name;
    for (const auto& [bit, at] : boundaries) {
      for (const u64 off : {at, at + 32767, at + 32768}) {
        if (off == 0 || off > original.size()) continue;
        const Edit edit =
            make_edit(original, {{off - 1, Bytes{0x5a, 0xa5}}}, std::nullopt);
        const std::string what =
            fmt::format("{} edit at {} (boundary {})", shape.name, off - 1, at);
        check_output(write_edited(zip, edit.overlay, 2), edit.expected, what);
      }
    }
  }
}

TEST(Splice, OwnChunkedMembersAreSplicedByRestartPoints) {
  // Written by our writer: 64 KiB chunks, restart points in the central
  // directory. Splice then goes by chunks, copying the unchanged ones.
  const Bytes original = mixed(20 * kChunk + 1234, 5);
  writer_test::TempDir dir;
  ZipWriterOptions o;
  o.chunk_size = kChunk;
  o.threads = 2;
  {
    ZipWriter w(dir / "in.zip", o);
    w.add_bytes("lib.so",
                std::string_view(reinterpret_cast<const char*>(original.data()),
                                 original.size()));
    w.commit();
  }
  auto zip = std::make_shared<const ZipReader>(ZipReader::open(dir / "in.zip"));
  const ZipEntry& e = zip->entries()[0];
  ASSERT_EQ(e.restart_points.size(), 20u);
  for (std::size_t i = 0; i < e.restart_points.size(); ++i)
    EXPECT_EQ(e.restart_points[i].uncompressed, (i + 1) * kChunk);
  std::mt19937 rng(3);
  ThreadPool pool(2);
  CompressorPool compressors;
  ChunkSlots slots(kChunk);
  for (int round = 0; round < 12; ++round) {
    const Edit edit = random_edit(original, {}, rng);
    const EditMap map(edit.overlay.patches(), edit.overlay.input_size(),
                      edit.overlay.size());
    SpliceInput in;
    in.archive = zip->name();
    in.entry = &e;
    in.raw = zip->raw(e);
    in.edits = &map;
    SpliceEnv env;
    env.pool = &pool;
    env.compressors = &compressors;
    env.slots = &slots;
    env.chunk_size = kChunk;
    Bytes stream;
    const SpliceResult r = splice_member(in, env, [&](std::span<const u8> b) {
      stream.insert(stream.end(), b.begin(), b.end());
    });
    const std::string what = fmt::format("round {}", round);
    EXPECT_TRUE(r.by_chunks) << what;
    EXPECT_EQ(r.compressed_size, stream.size()) << what;
    EXPECT_EQ(writer_test::zlib_inflate_raw(stream), edit.expected) << what;
    EXPECT_EQ(r.crc32, writer_test::zlib_crc32(edit.expected)) << what;
    expect_points_valid(stream, r.restart_points, edit.expected, what);
    // Every chunk before the first edit is the input's, byte for byte.
    u64 first = edit.overlay.size();
    for (const Patch& p : edit.overlay.patches())
      first = std::min(first, p.offset);
    first = std::min({first, edit.overlay.size(), original.size()});
    const u64 same_chunks = first / kChunk;
    if (same_chunks > 0) {
      const u64 c = e.restart_points[same_chunks - 1].compressed;
      EXPECT_TRUE(
          std::equal(stream.begin(), stream.begin() + c, in.raw.begin()))
          << what;
      EXPECT_GE(r.reused, c) << what;
    }
  }
}

TEST(Splice, OutputOfTheWriterKeepsRestartPointsThroughASecondSplice) {
  // Block mode on a zlib stream makes restart points (fresh spans every
  // half chunk); a second edit of that output then goes by chunks.
  constexpr u64 kMiB = 1 << 20;
  const Bytes original = mixed(12 * kMiB, 9);
  auto zip = zip_with("lib.so", original, zlib_deflate(original, {"l6", 6}));
  const Edit first = make_edit(original, {{100, Bytes{1, 2, 3}}}, std::nullopt);
  const Written w1 = write_edited(zip, first.overlay, 2, 6, kMiB);
  check_output(w1, first.expected, "first");
  auto zip2 = std::make_shared<const ZipReader>(
      ZipReader::from_bytes(w1.archive, "out1.zip"));
  const ZipEntry& e = zip2->entries()[0];
  EXPECT_GE(e.restart_points.size(), 20u);
  u64 prev = 0;
  for (const RestartPoint& p : e.restart_points) {
    EXPECT_LE(p.uncompressed - prev, kMiB);
    prev = p.uncompressed;
  }
  const Edit second =
      make_edit(first.expected, {{7 * kMiB, Bytes{9, 9}}}, std::nullopt);
  const Written w2 = write_edited(zip2, second.overlay, 2, 6, kMiB);
  check_output(w2, second.expected, "second");
  EXPECT_GT(w2.result.reused, w2.result.compressed_size * 9 / 10);
}

TEST(Splice, LevelZeroAndIncompressibleContentAreStored) {
  std::mt19937 rng(1);
  const Bytes original = random_bytes(rng, 3 * kChunk);
  auto zip = zip_with("lib.so", original, zlib_deflate(original, {"l6", 6}));
  const Edit edit = make_edit(original, {{5, Bytes{1}}}, 3 * kChunk + 10);
  const Written stored = write_edited(zip, edit.overlay, 2, 0);
  check_output(stored, edit.expected, "level 0");
  EXPECT_EQ(ZipReader::from_bytes(stored.archive, "o").entries()[0].method, 0);
  const Written fallback = write_edited(zip, edit.overlay, 2, 6);
  check_output(fallback, edit.expected, "did not shrink");
  EXPECT_EQ(ZipReader::from_bytes(fallback.archive, "o").entries()[0].method,
            0);
}

TEST(Splice, NoEditCopiesTheWholeStream) {
  // Chunks of 1 MiB: zlib's blocks of zeros (over 64 KiB decoded, more
  // than the small chunks elsewhere hold) are copied too.
  constexpr u64 kMiB = 1 << 20;
  const Bytes original = mixed(2 * kMiB, 2);
  const Bytes deflated = zlib_deflate(original, {"l9", 9});
  auto zip = zip_with("lib.so", original, deflated);
  const Edit edit = make_edit(original, {}, std::nullopt);
  const Written w = write_edited(zip, edit.overlay, 1, 6, kMiB);
  check_output(w, edit.expected, "no edit");
  // Only the fresh spans made every half chunk for restart points (at
  // 512 KiB, 1 MiB and 1.5 MiB) are not the input's.
  EXPECT_GE(
      ZipReader::from_bytes(w.archive, "o").entries()[0].restart_points.size(),
      3u);
  EXPECT_GT(w.result.reused, deflated.size() * 8 / 10);
}

// --- hostile input --------------------------------------------------------

void expect_error(const std::shared_ptr<const ZipReader>& zip,
                  const Overlay& overlay, const std::string& needle) {
  writer_test::TempDir dir;
  ZipWriterOptions o;
  o.chunk_size = kChunk;
  o.threads = 2;
  try {
    ZipWriter w(dir / "out.zip", o);
    w.add("lib.so", edited_member_source(zip, zip->entries()[0],
                                         std::make_shared<Overlay>(overlay)));
    w.commit();
    ADD_FAILURE() << "no error; expected " << needle;
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("lib.so"), std::string::npos) << what;
    EXPECT_NE(what.find(needle), std::string::npos) << what;
  }
  EXPECT_FALSE(std::filesystem::exists(dir / "out.zip"));
}

TEST(Splice, CorruptOrTruncatedStreamsFailNamingTheMember) {
  const Bytes original = mixed(4 * kChunk, 3);
  Bytes deflated = zlib_deflate(original, {"l6", 6});
  Overlay overlay(original.size());
  overlay.write(10, Bytes{1});
  {
    Bytes bad = deflated;
    for (std::size_t i = bad.size() / 2; i < bad.size() / 2 + 64; ++i)
      bad[i] ^= 0x55;
    expect_error(zip_with("lib.so", original, bad), overlay, "lib.so");
  }
  {
    Bytes cut(deflated.begin(), deflated.begin() + deflated.size() / 2);
    expect_error(zip_with("lib.so", original, cut), overlay, "lib.so");
  }
  {
    reader_testing::Member m = reader_testing::file("lib.so", original);
    m.compressed = deflated;
    m.crc = 12345;
    auto zip = std::make_shared<const ZipReader>(
        ZipReader::from_bytes(reader_testing::build_zip({m}).bytes, "in.zip"));
    expect_error(zip, overlay, "CRC-32 mismatch");
  }
}

// Our writer's member with its index, re-encoded with one point moved.
struct Indexed {
  Bytes original, deflated;
  std::vector<RestartPoint> points;
};

Indexed own_member(std::size_t size) {
  writer_test::TempDir dir;
  Indexed out;
  out.original = mixed(size, 8);
  ZipWriterOptions o;
  o.chunk_size = kChunk;
  {
    ZipWriter w(dir / "in.zip", o);
    w.add_bytes(
        "lib.so",
        std::string_view(reinterpret_cast<const char*>(out.original.data()),
                         out.original.size()));
    w.commit();
  }
  ZipReader r = ZipReader::open(dir / "in.zip");
  const ZipEntry& e = r.entries()[0];
  auto raw = r.raw(e);
  out.deflated.assign(raw.begin(), raw.end());
  out.points = e.restart_points;
  return out;
}

TEST(Splice, InconsistentRestartPointsFailNamingThePoint) {
  // Chunks that still fit the chunk size (so the splice goes by them) but
  // whose points are not where the chunks end.
  const Indexed m = own_member(6 * kChunk - 100);
  ASSERT_EQ(m.points.size(), 5u);
  Overlay overlay(m.original.size());
  overlay.write(4 * kChunk + 5, Bytes{7});
  for (const auto& [index, du, dc] :
       std::vector<std::tuple<std::size_t, i64, i64>>{
           {0, 0, 2}, {1, 0, 1}, {1, 0, -1}, {4, -7, 0}, {4, 0, -5}}) {
    std::vector<RestartPoint> lying = m.points;
    lying[index].uncompressed += du;
    lying[index].compressed += dc;
    auto zip =
        zip_with("lib.so", m.original, m.deflated, encode_restart_extra(lying));
    ASSERT_EQ(zip->entries()[0].restart_points, lying);
    expect_error(zip, overlay, fmt::format("restart point {}", index + 1));
    // A full read never looks at the index.
    EXPECT_EQ(zip->read_all(zip->entries()[0]), m.original);
  }
}

TEST(RestartIndex, MalformedFieldsAreDroppedAndForeignOnesIgnored) {
  const Indexed m = own_member(3 * kChunk);
  auto body_of = [](const Bytes& field) {
    return Bytes(field.begin() + 4, field.end());
  };
  const Bytes good = encode_restart_extra(m.points);
  auto with_body = [&](Bytes body) {
    Bytes f{0x52, 0x50, static_cast<u8>(body.size()),
            static_cast<u8>(body.size() >> 8)};
    f.insert(f.end(), body.begin(), body.end());
    return f;
  };
  {
    Bytes body = body_of(good);
    body[4] = 2;  // unknown version
    auto zip = zip_with("lib.so", m.original, m.deflated, with_body(body));
    const ZipEntry& e = zip->entries()[0];
    EXPECT_TRUE(e.restart_points.empty());
    EXPECT_NE(e.restart_error.find("version"), std::string::npos);
    EXPECT_EQ(zip->read_all(e), m.original);
    EXPECT_NO_THROW(open_member(zip, e));  // sequential: index not used
    try {
      open_member(zip, e, RestartPoints::use);
      ADD_FAILURE() << "open_member accepted a malformed index";
    } catch (const Error& err) {
      EXPECT_NE(std::string(err.what()).find("restart-point index"),
                std::string::npos);
    }
  }
  {
    Bytes body = body_of(good);
    body.pop_back();  // truncated varint
    auto zip = zip_with("lib.so", m.original, m.deflated, with_body(body));
    EXPECT_NE(zip->entries()[0].restart_error.find("truncated"),
              std::string::npos);
  }
  {
    // A point past the member's compressed data.
    std::vector<RestartPoint> far = m.points;
    far.push_back({m.original.size() - 1, m.deflated.size() + 10});
    auto zip =
        zip_with("lib.so", m.original, m.deflated, encode_restart_extra(far));
    EXPECT_NE(zip->entries()[0].restart_error.find("outside"),
              std::string::npos);
  }
  {
    // Someone else's field under the same ID.
    auto zip = zip_with("lib.so", m.original, m.deflated,
                        with_body(Bytes{'X', 'Y', 'Z', 'W', 1, 2, 3}));
    EXPECT_TRUE(zip->entries()[0].restart_points.empty());
    EXPECT_TRUE(zip->entries()[0].restart_error.empty());
  }
}

TEST(RestartIndex, ManyPointsAreThinnedToStayWellInsideTheExtraField) {
  std::vector<RestartPoint> points;
  for (u64 i = 1; i <= 5000; ++i)
    points.push_back({i * (u64{8} << 20), i * (u64{3} << 20) + i % 7});
  const Bytes field = encode_restart_extra(points);
  ASSERT_LE(field.size(), 4 + kMaxRestartBody);
  const RestartIndexParse back =
      parse_restart_extra(field, 8, (u64{8} << 20) * 5001, u64{3} << 40);
  ASSERT_TRUE(back.error.empty()) << back.error;
  ASSERT_GT(back.points.size(), 500u);
  // Every k-th point, as they were.
  const std::size_t k = points.size() / back.points.size();
  for (std::size_t i = 0; i < back.points.size(); ++i)
    EXPECT_EQ(back.points[i], points[(i + 1) * k - 1]);
}

TEST(RestartIndex, ViewsStartAtThePointBeforeAFarRange) {
  const Indexed m = own_member(40 * kChunk);
  auto zip = zip_with("lib.so", m.original, m.deflated,
                      encode_restart_extra(m.points));
  auto view = open_member(zip, zip->entries()[0], RestartPoints::use);
  ByteView v = view->view("lib.so");
  const u64 far = 37 * kChunk + 100;
  auto got = v.range(far, 4096, "far");
  EXPECT_TRUE(std::equal(got.begin(), got.end(), m.original.begin() + far));
  // Only the island asked for was inflated into the view, and reaching it
  // started at point 37 (not at the member's start).
  EXPECT_LE(view->inflated(), 4096u);
  auto end = v.range(m.original.size() - 10, 10, "end");
  EXPECT_TRUE(std::equal(end.begin(), end.end(), m.original.end() - 10));
}

TEST(RestartIndex, AViewThroughALyingPointFailsNamingIt) {
  // Far reads (over 1 MiB past what is filled) go through the index.
  const Indexed m = own_member(40 * kChunk);
  std::vector<RestartPoint> lying = m.points;
  lying[30].compressed += 3;  // inside chunk 31, not where it starts
  auto zip =
      zip_with("lib.so", m.original, m.deflated, encode_restart_extra(lying));
  auto view = open_member(zip, zip->entries()[0], RestartPoints::use);
  ByteView v = view->view("lib.so");
  try {
    // From point 30 the inflater reaches point 31 and checks it.
    v.range(30 * kChunk + 10, kChunk, "through point 31");
    ADD_FAILURE() << "lying point not noticed";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("restart point 31"), std::string::npos)
        << e.what();
  }
  // The same member read sequentially, as everything but show does.
  auto plain = open_member(zip, zip->entries()[0]);
  ByteView p = plain->view("lib.so");
  auto got = p.range(30 * kChunk + 10, kChunk, "sequential");
  EXPECT_TRUE(std::equal(got.begin(), got.end(),
                         m.original.begin() + 30 * kChunk + 10));
}

}  // namespace
