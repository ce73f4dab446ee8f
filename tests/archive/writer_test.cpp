// SPDX-License-Identifier: BSD-3-Clause
// Zip writer unit tests: archives are written to a temp dir and read back
// with the project's ZipReader, and every deflated member's raw bytes are
// also inflated with zlib directly (independent of our reader).
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <libdeflate.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "archive/deflate_chunk.hpp"
#include "archive/zip_format.hpp"
#include "libpkg/archive/extract.hpp"
#include "libpkg/archive/source.hpp"
#include "libpkg/archive/zip_reader.hpp"
#include "libpkg/archive/zip_writer.hpp"
#include "libpkg/base/error.hpp"
#include "libpkg/base/overlay.hpp"
#include "libpkg/base/sha256.hpp"
#include "writer_fixtures.hpp"

namespace {

using namespace libpkg;
using namespace libpkg::archive;
using namespace writer_test;

constexpr u64 kChunk = 64 * 1024;

struct Input {
  std::string name;
  std::vector<u8> bytes;
};

std::vector<Input> chunk_edge_inputs() {
  std::vector<Input> in;
  const u64 sizes[] = {0,          1,          kChunk - 1,       kChunk,
                       kChunk + 1, 2 * kChunk, 7 * kChunk + 4321};
  for (u64 size : sizes) {
    const std::string s = std::to_string(size);
    in.push_back({"random/" + s, random_bytes(size, static_cast<u32>(size))});
    in.push_back({"zero/" + s, zero_bytes(size)});
    in.push_back({"text/" + s, text_bytes(size)});
    in.push_back({"elf/" + s, elf_bytes(size)});
  }
  return in;
}

// Reads `zip` back and checks every member against `inputs`, with the
// reader and (for deflated members) with zlib on the raw bytes.
void check_archive(const std::filesystem::path& zip,
                   const std::vector<Input>& inputs) {
  ZipReader reader = ZipReader::open(zip);
  ASSERT_EQ(reader.entries().size(), inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    const ZipEntry& e = reader.entries()[i];
    SCOPED_TRACE(inputs[i].name);
    EXPECT_EQ(e.name, inputs[i].name);
    EXPECT_EQ(e.uncompressed_size, inputs[i].bytes.size());
    EXPECT_EQ(e.crc32, zlib_crc32(inputs[i].bytes));
    EXPECT_EQ(e.flags & zipfmt::kFlagDataDescriptor, 0);
    EXPECT_TRUE(reader.read_all(e) == inputs[i].bytes);
    if (e.method == 8) {
      EXPECT_TRUE(zlib_inflate_raw(reader.raw(e)) == inputs[i].bytes);
    } else {
      EXPECT_EQ(e.method, 0);
      auto raw = reader.raw(e);
      EXPECT_TRUE(std::equal(raw.begin(), raw.end(), inputs[i].bytes.begin(),
                             inputs[i].bytes.end()));
    }
  }
}

std::vector<ZipMemberResult> write_inputs(const std::filesystem::path& zip,
                                          const std::vector<Input>& inputs,
                                          ZipWriterOptions options) {
  ZipWriter w(zip, options);
  for (const Input& in : inputs)
    w.add(in.name, bytes_source(in.bytes, in.name));
  return w.commit();
}

TEST(ZipWriter, SmallAndEmptyMembers) {
  TempDir dir;
  std::vector<Input> inputs = {{"empty", {}},
                               {"small.txt", {'h', 'i', '\n'}},
                               {"dir/text", text_bytes(5000)}};
  for (int level : {0, 1, 6, 9}) {
    SCOPED_TRACE(level);
    ZipWriterOptions o;
    o.level = level;
    auto results = write_inputs(dir / "a.zip", inputs, o);
    ASSERT_EQ(results.size(), 3u);
    for (size_t i = 0; i < inputs.size(); ++i) {
      EXPECT_EQ(results[i].name, inputs[i].name);
      EXPECT_EQ(results[i].size, inputs[i].bytes.size());
      EXPECT_EQ(results[i].crc32, zlib_crc32(inputs[i].bytes));
      ASSERT_TRUE(results[i].sha256.has_value());
      EXPECT_EQ(*results[i].sha256, Sha256::of(inputs[i].bytes));
      EXPECT_FALSE(results[i].copied_raw);
    }
    // Empty and tiny members do not shrink: stored. Text does at level > 0.
    EXPECT_EQ(results[0].method, 0);
    EXPECT_EQ(results[1].method, 0);
    EXPECT_EQ(results[2].method, level == 0 ? 0 : 8);
    check_archive(dir / "a.zip", inputs);
  }
}

TEST(ZipWriter, MembersSpanningChunksInflateExactly) {
  TempDir dir;
  const std::vector<Input> inputs = chunk_edge_inputs();
  for (int level : {0, 1, 6, 9}) {
    SCOPED_TRACE(level);
    ZipWriterOptions o;
    o.level = level;
    o.chunk_size = kChunk;
    o.threads = 2;
    auto results = write_inputs(dir / "c.zip", inputs, o);
    for (size_t i = 0; i < inputs.size(); ++i) {
      EXPECT_EQ(*results[i].sha256, Sha256::of(inputs[i].bytes));
      // Joined chunk streams of compressible content stay deflated.
      if (level > 0 && inputs[i].bytes.size() > 1000 &&
          inputs[i].name.rfind("random/", 0) != 0) {
        EXPECT_EQ(results[i].method, 8) << inputs[i].name;
      }
    }
    check_archive(dir / "c.zip", inputs);
  }
}

TEST(ZipWriter, IdenticalBytesForAnyThreadCount) {
  TempDir dir;
  const std::vector<Input> inputs = chunk_edge_inputs();
  std::vector<u8> first;
  for (unsigned threads : {1u, 2u, 4u}) {
    ZipWriterOptions o;
    o.chunk_size = kChunk;
    o.threads = threads;
    o.timestamp = 1700000000;
    const auto zip = dir / ("t" + std::to_string(threads) + ".zip");
    write_inputs(zip, inputs, o);
    std::vector<u8> bytes = read_file(zip);
    if (first.empty())
      first = bytes;
    else
      EXPECT_TRUE(bytes == first) << "threads=" << threads;
  }
}

TEST(ZipWriter, StoreIfNotSmallerOnRandomData) {
  TempDir dir;
  const std::vector<Input> inputs = {{"one", random_bytes(kChunk / 2, 1)},
                                     {"many", random_bytes(3 * kChunk + 5, 2)},
                                     {"text", text_bytes(3 * kChunk)}};
  ZipWriterOptions o;
  o.chunk_size = kChunk;
  auto results = write_inputs(dir / "s.zip", inputs, o);
  EXPECT_EQ(results[0].method, 0);
  EXPECT_EQ(results[0].compressed_size, kChunk / 2);
  EXPECT_EQ(results[1].method, 0);
  EXPECT_EQ(results[1].compressed_size, 3 * kChunk + 5);
  EXPECT_EQ(results[2].method, 8);
  check_archive(dir / "s.zip", inputs);

  o.store_if_not_smaller = false;
  results = write_inputs(dir / "d.zip", inputs, o);
  for (const auto& r : results) EXPECT_EQ(r.method, 8);
  EXPECT_GE(results[1].compressed_size, results[1].size);
  check_archive(dir / "d.zip", inputs);
}

TEST(ZipWriter, ForcedZip64ReadsBack) {
  TempDir dir;
  std::vector<Input> inputs = chunk_edge_inputs();
  ZipWriterOptions o;
  o.force_zip64 = true;
  o.chunk_size = kChunk;
  write_inputs(dir / "z.zip", inputs, o);
  check_archive(dir / "z.zip", inputs);
  // The ZIP64 end record and locator precede the end record.
  std::vector<u8> bytes = read_file(dir / "z.zip");
  ASSERT_GT(bytes.size(), 22u + 20u + 56u);
  const u8* loc = bytes.data() + bytes.size() - 22 - 20;
  EXPECT_EQ(loc[0], 0x50);
  EXPECT_EQ(loc[1], 0x4b);
  EXPECT_EQ(loc[2], 0x06);
  EXPECT_EQ(loc[3], 0x07);
  // Every local header has version 4.5 and a ZIP64 extra with both sizes.
  ZipReader reader = ZipReader::open(dir / "z.zip");
  for (const ZipEntry& e : reader.entries()) {
    const u8* h = bytes.data() + e.local_header_offset;
    EXPECT_EQ(h[4], 45);
    const u16 name_len = static_cast<u16>(h[26] | h[27] << 8);
    const u16 extra_len = static_cast<u16>(h[28] | h[29] << 8);
    EXPECT_EQ(extra_len, 20);
    EXPECT_EQ(h[30 + name_len], 1);  // extra id 0x0001
    u64 usize = 0;
    for (int b = 7; b >= 0; --b) usize = usize << 8 | h[30 + name_len + 4 + b];
    EXPECT_EQ(usize, e.uncompressed_size);
  }
}

TEST(ZipWriter, RefusesHostileNames) {
  TempDir dir;
  ZipWriter w(dir / "n.zip");
  for (std::string bad :
       {std::string(), std::string("/etc/passwd"), std::string("a/../../b"),
        std::string(".."), std::string("a\\b"), std::string("a\0b", 3),
        std::string("a//b"), std::string("./a"), std::string("dir/")}) {
    try {
      w.add_bytes(bad, "x");
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Errc::usage) << bad;
    }
  }
  w.add_bytes("ok", "x");
  EXPECT_THROW(w.add_bytes("ok", "y"), Error);
  EXPECT_THROW(w.add_directory("d"), Error);  // directories end in '/'
  w.add_directory("d/");
  EXPECT_THROW(w.add_directory("d/"), Error);
  EXPECT_THROW(w.add_bytes("d", "x"), Error);  // a directory's path
  // Nothing may live below a file or symlink member, in either order: an
  // extractor following "lib" -> /etc would write /etc/passwd.
  w.add_symlink("lib", "/etc");
  EXPECT_THROW(w.add_bytes("lib/passwd", "x"), Error);
  EXPECT_THROW(w.add_directory("lib/sub/"), Error);
  EXPECT_THROW(w.add_directory("lib/"), Error);
  w.add_bytes("x/y/z", "x");
  EXPECT_THROW(w.add_bytes("x/y", "x"), Error);
  EXPECT_THROW(w.add_symlink("x", "/tmp"), Error);
  w.add_directory("x/");  // a real directory there is fine
  w.commit();
  ZipReader r = ZipReader::open(dir / "n.zip");
  EXPECT_EQ(r.entries().size(), 5u);
}

// Symlink targets the extractor refuses whatever the rest of the archive
// holds (empty, a NUL byte, longer than PATH_MAX) are refused when added, so
// the writer never emits an archive its own reader rejects (found by
// fuzz_zip_roundtrip; fuzz/crashers/zip_roundtrip/symlink-target-nul).
TEST(ZipWriter, RefusesSymlinkTargetsItsReaderRefuses) {
  TempDir dir;
  ZipWriter w(dir / "l.zip");
  for (const std::string& bad :
       {std::string(), std::string("a\0b", 3), std::string(4096, 'x')}) {
    try {
      w.add_symlink("link", bad);
      ADD_FAILURE() << "accepted a target of " << bad.size() << " bytes";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Errc::usage);
      EXPECT_EQ(e.file(), "link");
    }
  }
  w.add_symlink("link", std::string(4095, 'x'));
  w.commit();
  ZipReader r = ZipReader::open(dir / "l.zip");
  ASSERT_EQ(r.entries().size(), 1u);
  EXPECT_EQ(r.read_text(r.entries()[0]).size(), 4095u);
}

// The writer and the extractor share one name rule: the writer flags every
// non-ASCII name UTF-8, so it refuses names that are not UTF-8, and it
// refuses names the extractor would take for one file. Whatever it accepts,
// check_member_names accepts.
TEST(ZipWriter, WritesOnlyNamesItsReaderAccepts) {
  TempDir dir;
  ZipWriter w(dir / "u.zip");
  for (std::string bad : {std::string("caf\xe9.txt"),      // Latin-1, not UTF-8
                          std::string("d\xff/x.txt"),      // in a directory
                          std::string("ok/\xc3(.txt")}) {  // broken sequence
    try {
      w.add_bytes(bad, "x");
      ADD_FAILURE() << "accepted a non-UTF-8 name";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Errc::usage);
      EXPECT_NE(e.message().find("UTF-8"), std::string::npos) << e.message();
    }
  }
  w.add_bytes("pkg/Readme.txt", "x");
  EXPECT_THROW(w.add_bytes("pkg/README.TXT", "y"), Error);
  w.add_bytes("pkg/caf\xc3\xa9.txt", "x");                        // NFC
  EXPECT_THROW(w.add_bytes("pkg/cafe\xcc\x81.txt", "y"), Error);  // NFD
  w.add_bytes("pkg/\xef\xac\x81le", "x");  // U+FB01 ligature "fi"
  EXPECT_THROW(w.add_bytes("pkg/file", "y"), Error);
  w.commit();
  ZipReader r = ZipReader::open(dir / "u.zip");
  EXPECT_EQ(r.entries().size(), 3u);
  EXPECT_NO_THROW(check_member_names(r));
}

TEST(ZipWriter, SourceThatVanishesOrShrinksFailsWithoutTarget) {
  TempDir dir;
  for (bool remove : {true, false}) {
    SCOPED_TRACE(remove ? "removed" : "shrunk");
    const auto input = dir / "input.bin";
    write_file(input, text_bytes(10 * kChunk));
    const auto zip = dir / "e.zip";
    ZipWriterOptions o;
    o.chunk_size = kChunk;
    ZipWriter w(zip, o);
    w.add_bytes("first", "fine");
    w.add_file("input.bin", input);
    if (remove)
      std::filesystem::remove(input);
    else
      std::filesystem::resize_file(input, 3 * kChunk + 17);
    try {
      w.commit();
      ADD_FAILURE() << "commit succeeded";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(input.string()), std::string::npos)
          << e.what();
      EXPECT_EQ(e.code(), Errc::io);
    }
    EXPECT_FALSE(std::filesystem::exists(zip));
    EXPECT_THROW(w.commit(), Error);  // a failed writer stays failed
  }
  EXPECT_THROW(file_source(dir / "missing"), Error);
  EXPECT_THROW(file_source(dir.path()), Error);  // not a regular file
}

// A queued file's name may lead elsewhere by the time it is read (another
// file of the same size renamed over it): its bytes would go into the
// archive under the queued file's name. The writer reads only the file it
// queued (same device and inode).
TEST(ZipWriter, SourceReplacedByRenameFailsWithoutTarget) {
  TempDir dir;
  const auto input = dir / "input.bin";
  write_file(input, text_bytes(3 * kChunk));
  const auto zip = dir / "r.zip";
  ZipWriterOptions o;
  o.chunk_size = kChunk;
  ZipWriter w(zip, o);
  w.add_file("input.bin", input);
  write_file(dir / "other.bin", random_bytes(3 * kChunk, 5));
  std::filesystem::rename(dir / "other.bin", input);
  try {
    w.commit();
    ADD_FAILURE() << "the replacement was archived";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::io);
    EXPECT_NE(e.message().find("replaced since it was queued"),
              std::string::npos)
        << e.what();
  }
  EXPECT_FALSE(std::filesystem::exists(zip));
}

// More members than the queue holds: the add*() that fills it writes the
// batch (bounded per-member memory); the archive is the same as ever, every
// member in add order, every result returned.
TEST(ZipWriter, MoreMembersThanTheQueueHolds) {
  TempDir dir;
  const std::size_t n = ZipWriter::kMaxQueued * 2 + 5;
  const auto zip = dir / "many.zip";
  ZipWriterOptions o;
  o.threads = 2;
  std::size_t results = 0;
  {
    ZipWriter w(zip, o);
    for (std::size_t i = 0; i < n; ++i)
      w.add_bytes(fmt::format("d/f{:05}", i), fmt::format("content {}\n", i));
    results = w.commit().size();
  }
  EXPECT_EQ(results, n);
  ZipReader r = ZipReader::open(zip);
  ASSERT_EQ(r.entries().size(), n);
  for (std::size_t i : {std::size_t{0}, ZipWriter::kMaxQueued - 1,
                        ZipWriter::kMaxQueued, n - 1}) {
    EXPECT_EQ(r.entries()[i].name, fmt::format("d/f{:05}", i));
    EXPECT_EQ(r.read_text(r.entries()[i]), fmt::format("content {}\n", i));
  }
}

TEST(ZipWriter, TimestampsModesAndSymlinks) {
  TempDir dir;
  ZipWriterOptions o;
  {
    ZipWriter w(dir / "m.zip", o);
    ZipMemberAttrs exe;
    exe.mode = 0755;
    exe.mtime = 1700000000;  // 2023-11-14T22:13:20Z
    w.add_bytes("bin/tool", "#!/bin/sh\n", exe);
    ZipMemberAttrs old;
    old.mtime = 0;  // before 1980: clipped
    w.add_bytes("old", "x", old);
    w.add_directory("bin/", exe);
    w.add_symlink("link", "bin/tool");
    w.add_bytes("caf\xc3\xa9", "utf8 name");
    w.commit();
  }
  ZipReader r = ZipReader::open(dir / "m.zip");
  ASSERT_EQ(r.entries().size(), 5u);
  const auto& e = r.entries();
  EXPECT_EQ(e[0].external_attr >> 16, S_IFREG | 0755u);
  EXPECT_EQ(e[0].version_made_by >> 8, 3);
  EXPECT_EQ(e[0].mtime(), 1700000000);
  EXPECT_EQ(e[1].mtime(), 315532800);
  EXPECT_EQ(e[2].external_attr, ((S_IFDIR | 0755u) << 16) | 0x10u);
  EXPECT_TRUE(e[2].is_directory());
  EXPECT_EQ(e[3].external_attr >> 16, S_IFLNK | 0777u);
  EXPECT_TRUE(e[3].is_symlink());
  EXPECT_EQ(r.read_text(e[3]), "bin/tool");
  EXPECT_EQ(e[4].flags & zipfmt::kFlagUtf8, zipfmt::kFlagUtf8);
  EXPECT_EQ(e[0].flags & zipfmt::kFlagUtf8, 0);

  // options.timestamp overrides every member's mtime, clipped to 1980.
  o.timestamp = 100;
  {
    ZipWriter w(dir / "t.zip", o);
    ZipMemberAttrs a;
    a.mtime = 1700000000;
    w.add_bytes("a", "a", a);
    w.commit();
  }
  EXPECT_EQ(ZipReader::open(dir / "t.zip").entries()[0].mtime(), 315532800);
}

// The members of the raw-copy tests' source archive: a 3-chunk text member
// and a small random one.
std::vector<Input> raw_copy_inputs() {
  return {{"a.txt", text_bytes(3 * kChunk)}, {"b.bin", random_bytes(1000, 3)}};
}

ZipWriterOptions small_chunks() {
  ZipWriterOptions o;
  o.chunk_size = kChunk;
  return o;
}

TEST(ZipWriter, RawCopyKeepsCompressedBytes) {
  TempDir dir;
  const std::vector<Input> inputs = raw_copy_inputs();
  const ZipWriterOptions o = small_chunks();
  write_inputs(dir / "src.zip", inputs, o);
  ZipReader src = ZipReader::open(dir / "src.zip");
  std::array<u8, 32> digest = Sha256::of(inputs[0].bytes);
  {
    ZipWriter w(dir / "copy.zip", o);
    w.add_bytes("new.txt", "fresh");
    w.add_raw("renamed/a.txt", src, src.entries()[0], {}, digest);
    w.add_raw("b.bin", src, src.entries()[1], {});
    const auto& results = w.commit();
    EXPECT_TRUE(results[1].copied_raw);
    EXPECT_EQ(results[1].sha256, digest);
    EXPECT_FALSE(results[2].sha256.has_value());
    EXPECT_EQ(results[1].compressed_size, src.entries()[0].compressed_size);
  }
  ZipReader copy = ZipReader::open(dir / "copy.zip");
  ASSERT_EQ(copy.entries().size(), 3u);
  for (int i = 0; i < 2; ++i) {
    const ZipEntry& a = src.entries()[static_cast<size_t>(i)];
    const ZipEntry& b = copy.entries()[static_cast<size_t>(i) + 1];
    EXPECT_EQ(a.method, b.method);
    EXPECT_EQ(a.crc32, b.crc32);
    auto ra = src.raw(a);
    auto rb = copy.raw(b);
    EXPECT_TRUE(std::equal(ra.begin(), ra.end(), rb.begin(), rb.end()));
    EXPECT_TRUE(copy.read_all(b) == inputs[static_cast<size_t>(i)].bytes);
  }
  EXPECT_EQ(copy.entries()[1].name, "renamed/a.txt");
}

// The copy comes from the archive the reader validated: replacing the file
// at its path between add_raw and commit (a rebuild renaming a new wheel
// into place) must not change what is written, and a reader over bytes (no
// path at all) can be copied from too.
TEST(ZipWriter, RawCopyReadsTheValidatedArchiveNotItsPath) {
  TempDir dir;
  const std::vector<Input> inputs = raw_copy_inputs();
  const ZipWriterOptions o = small_chunks();
  write_inputs(dir / "src.zip", inputs, o);
  ZipReader src = ZipReader::open(dir / "src.zip");
  ZipReader in_memory =
      ZipReader::from_bytes(read_file(dir / "src.zip"), "<memory>");
  {
    ZipWriter w(dir / "copy.zip", o);
    w.add_raw("a.txt", src, src.entries()[0], {});
    w.add_raw("b.bin", src, src.entries()[1], {});
    w.add_raw("mem/a.txt", in_memory, in_memory.entries()[0], {});
    // Same size, other bytes, renamed over the source's path.
    std::vector<u8> other = read_file(dir / "src.zip");
    for (u8& b : other) b = static_cast<u8>(b ^ 0x5a);
    write_file(dir / "other.zip", other);
    std::filesystem::rename(dir / "other.zip", dir / "src.zip");
    w.commit();
  }
  ZipReader copy = ZipReader::open(dir / "copy.zip");
  ASSERT_EQ(copy.entries().size(), 3u);
  EXPECT_TRUE(copy.read_all(copy.entries()[0]) == inputs[0].bytes);
  EXPECT_TRUE(copy.read_all(copy.entries()[1]) == inputs[1].bytes);
  EXPECT_TRUE(copy.read_all(copy.entries()[2]) == inputs[0].bytes);
}

TEST(ZipWriter, ProgressReachesTotal) {
  TempDir dir;
  std::vector<std::pair<u64, u64>> calls;
  bool other_thread = false;
  const auto caller = std::this_thread::get_id();
  ZipWriterOptions o;
  o.chunk_size = kChunk;
  o.threads = 2;
  o.progress = [&](u64 done, u64 total) {
    calls.emplace_back(done, total);
    other_thread |= std::this_thread::get_id() != caller;
  };
  write_inputs(dir / "p.zip", chunk_edge_inputs(), o);
  ASSERT_FALSE(calls.empty());
  EXPECT_FALSE(other_thread) << "progress must be called from the writer";
  for (size_t i = 1; i < calls.size(); ++i)
    EXPECT_GE(calls[i].first, calls[i - 1].first);
  EXPECT_EQ(calls.back().first, calls.back().second);
}

TEST(ZipWriter, FlushReturnsResultsInOrder) {
  TempDir dir;
  ZipWriter w(dir / "f.zip");
  w.add_bytes("b", "1");
  w.add_bytes("a", "22");
  const auto& first = w.flush();
  ASSERT_EQ(first.size(), 2u);
  EXPECT_EQ(first[0].name, "b");
  w.add_bytes("c", "333");
  const auto& all = w.commit();
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[2].size, 3u);
  EXPECT_THROW(w.add_bytes("d", "x"), Error);  // committed
}

// A streamed member lands between the members added before and after it,
// stored, with the CRC of what was written, in pieces of any size.
TEST(ZipWriter, StreamedMemberBetweenQueuedOnes) {
  TempDir dir;
  const std::vector<u8> big = random_bytes(3 * kChunk + 17, 7);
  const std::vector<u8> after = text_bytes(5000);
  for (bool zip64 : {false, true}) {
    SCOPED_TRACE(zip64);
    ZipWriterOptions o;
    o.chunk_size = kChunk;
    o.force_zip64 = zip64;
    ZipWriter w(dir / "s.zip", o);
    w.add_bytes("before.txt", "first\n");
    w.add_stream("stream.bin", big.size(),
                 [&](const ZipWriter::StreamSink& sink) {
                   std::span<const u8> all(big);
                   // Uneven pieces, including an empty one.
                   sink(all.subspan(0, 1));
                   sink(all.subspan(1, 0));
                   sink(all.subspan(1, kChunk));
                   sink(all.subspan(kChunk + 1));
                 });
    w.add("after.txt", bytes_source(after, "after.txt"));
    const auto& results = w.commit();
    ASSERT_EQ(results.size(), 3u);
    EXPECT_EQ(results[1].name, "stream.bin");
    EXPECT_EQ(results[1].method, 0);
    EXPECT_EQ(results[1].size, big.size());
    EXPECT_EQ(results[1].compressed_size, big.size());
    EXPECT_EQ(results[1].crc32, zlib_crc32(big));
    EXPECT_FALSE(results[1].sha256.has_value());
    check_archive(dir / "s.zip",
                  {{"before.txt", {'f', 'i', 'r', 's', 't', '\n'}},
                   {"stream.bin", big},
                   {"after.txt", text_bytes(5000)}});
  }
}

// Writing more than announced, or failing inside the producer, abandons the
// archive: no target appears and the writer refuses further use.
TEST(ZipWriter, StreamedMemberOverrunOrFailureLeavesNoTarget) {
  TempDir dir;
  {
    ZipWriter w(dir / "over.zip");
    w.add_bytes("a", "1");
    EXPECT_THROW(w.add_stream("s", 4,
                              [](const ZipWriter::StreamSink& sink) {
                                const u8 five[5] = {1, 2, 3, 4, 5};
                                sink(five);
                              }),
                 Error);
    EXPECT_THROW(w.commit(), Error);
  }
  EXPECT_FALSE(std::filesystem::exists(dir / "over.zip"));
  {
    ZipWriter w(dir / "fail.zip");
    EXPECT_THROW(w.add_stream("s", 100,
                              [](const ZipWriter::StreamSink&) {
                                throw Error(Errc::io, "producer", "broken");
                              }),
                 Error);
  }
  EXPECT_FALSE(std::filesystem::exists(dir / "fail.zip"));
  ZipWriter w(dir / "dup.zip");
  w.add_bytes("s", "1");
  EXPECT_THROW(w.add_stream("s", 1, [](const ZipWriter::StreamSink&) {}),
               Error);
}

TEST(ZipWriter, BadLevelAndNullSource) {
  TempDir dir;
  ZipWriterOptions o;
  o.level = 13;
  EXPECT_THROW(ZipWriter(dir / "x.zip", o), Error);
  ZipWriter w(dir / "y.zip");
  EXPECT_THROW(w.add("n", nullptr), Error);
  ZipMemberAttrs a;
  a.level = -1;
  EXPECT_THROW(w.add_bytes("n", "x", a), Error);
}

// Joining: every non-final chunk loses its BFINAL and gains an empty stored
// block (4 bytes when the 3 header bits fit in the last byte's padding, 5
// when they do not); the concatenation must inflate (zlib) to the inputs.
TEST(DeflateChunk, JoinedChunksInflateToConcatenation) {
  CompressorPool pool;
  int fitted = 0, spilled = 0, stored = 0;
  for (int level : {1, 6, 9, 12}) {
    for (u64 size :
         {u64{1}, u64{2}, u64{100}, u64{4097}, u64{70000}, u64{300001}}) {
      for (int kind = 0; kind < 4; ++kind) {
        SCOPED_TRACE(testing::Message() << level << "/" << size << "/" << kind);
        const std::vector<u8> a =
            kind == 0   ? text_bytes(size)
            : kind == 1 ? random_bytes(size, static_cast<u32>(size))
            : kind == 2 ? zero_bytes(size)
                        : elf_bytes(size);
        const std::vector<u8> b = text_bytes(size / 2 + 1);
        std::vector<u8> first, final_a, second;
        deflate_chunk(pool, level, a, false, "a", first);
        deflate_chunk(pool, level, a, true, "a", final_a);
        // Chunks deflate can't shrink are written as stored blocks (same
        // size final or not); the others grow by the empty stored block.
        const u64 pieces = (a.size() + 65534) / 65535;
        if (first.size() == a.size() + 5 * pieces) {
          EXPECT_EQ(first.size(), final_a.size());
          EXPECT_EQ(first[0] & 1, 0);  // BFINAL clear on a non-final chunk
          ++stored;
        } else {
          const u64 grown = first.size() - final_a.size();
          EXPECT_TRUE(grown == 4 || grown == 5) << grown;
          (grown == 4 ? fitted : spilled)++;
        }
        deflate_chunk(pool, level, b, true, "b", second);
        first.insert(first.end(), second.begin(), second.end());
        std::vector<u8> expected = a;
        expected.insert(expected.end(), b.begin(), b.end());
        EXPECT_TRUE(zlib_inflate_raw(first) == expected);
      }
    }
  }
  EXPECT_GT(fitted, 0);
  EXPECT_GT(spilled, 0);
  EXPECT_GT(stored, 0);
  std::vector<u8> not_deflate = {0xff, 0xff, 0xff};
  EXPECT_THROW(make_non_final(not_deflate, 0, "junk"), Error);
}

// `input` deflated by one libdeflate call at `level`, made non-final unless
// `final`: what a chunk of a single deflated run must equal.
std::vector<u8> one_libdeflate_call(CompressorPool& pool, int level,
                                    std::span<const u8> input, bool final) {
  CompressorPool::Lease lease(pool, level);
  std::vector<u8> out(
      libdeflate_deflate_compress_bound(lease.get(), input.size()) + 6);
  const size_t n = libdeflate_deflate_compress(
      lease.get(), input.data(), input.size(), out.data(), out.size());
  EXPECT_GT(n, 0u);
  out.resize(n);
  if (!final) make_non_final(out, 0, "direct");
  return out;
}

// `deflated` inflated by zlib, after a final chunk of text joined to it
// unless it is `final` itself (a non-final chunk is no stream on its own);
// the text's bytes are dropped again, so the result must be the chunk.
std::vector<u8> inflate_joined(CompressorPool& pool,
                               std::span<const u8> deflated, bool final) {
  std::vector<u8> joined(deflated.begin(), deflated.end());
  const std::vector<u8> next = text_bytes(1000);
  if (!final) {
    std::vector<u8> last;
    deflate_chunk(pool, 6, next, true, "next", last);
    joined.insert(joined.end(), last.begin(), last.end());
  }
  std::vector<u8> inflated = zlib_inflate_raw(joined);
  if (!final) {
    const bool next_at_end =
        inflated.size() >= next.size() &&
        std::equal(next.begin(), next.end(), inflated.end() - next.size());
    EXPECT_TRUE(next_at_end);
    if (next_at_end) inflated.resize(inflated.size() - next.size());
  }
  return inflated;
}

// A chunk mixing compressible bytes with incompressible ones (code next to
// packed device code in a CUDA library): the incompressible pieces are
// stored without running the compressor (plan_chunk()), the rest is
// deflated, and the runs join like chunks do, final or not.
TEST(DeflateChunk, MixedChunkStoresItsIncompressiblePieces) {
  constexpr u64 kMiB = u64{1} << 20;
  std::vector<u8> chunk = text_bytes(kMiB);
  const std::vector<u8> noise = random_bytes(3 * kMiB, 17);
  chunk.insert(chunk.end(), noise.begin(), noise.end());
  const std::vector<u8> tail = elf_bytes(kMiB + kMiB / 2);
  chunk.insert(chunk.end(), tail.begin(), tail.end());
  const std::vector<ChunkRun> plan = plan_chunk(chunk);
  ASSERT_EQ(plan.size(), 3u);
  EXPECT_FALSE(stores_whole_chunk(plan));
  CompressorPool pool;
  for (bool final : {false, true}) {
    SCOPED_TRACE(final);
    std::vector<u8> out;
    deflate_chunk(pool, 6, chunk, final, "mixed", out);
    // Stored blocks carry their bytes verbatim, 65 535 at a time from the
    // run's start: the third block of the noise, whole.
    const auto stored_at =
        std::search(out.begin(), out.end(), noise.begin() + 2 * 65535,
                    noise.begin() + 3 * 65535);
    EXPECT_NE(stored_at, out.end());
    EXPECT_LT(out.size(), noise.size() + kMiB);  // the text and ELF shrank
    EXPECT_TRUE(inflate_joined(pool, out, final) == chunk);
  }
  // A nearly random chunk that is not stored (a zero run repeats) is
  // deflated by igzip (fast_deflate.hpp) whatever the writer's level, final
  // or not: non-final straight from its sync flush, with no scan.
  std::vector<u8> near = random_bytes(kMiB + kMiB / 2, 18);  // one piece
  std::fill(near.begin() + 4096, near.begin() + 4096 + (32 << 10), 0);
  ASSERT_EQ(plan_chunk(near).size(), 1u);
  ASSERT_TRUE(plan_chunk(near).front().fast);
  for (bool final : {false, true}) {
    SCOPED_TRACE(final);
    std::vector<u8> at1, at6, at12, by_igzip;
    deflate_chunk(pool, 1, near, final, "near", at1);
    deflate_chunk(pool, 6, near, final, "near", at6);
    deflate_chunk(pool, 12, near, final, "near", at12);
    ASSERT_TRUE(FastDeflater().append(near, final, near.size(), by_igzip));
    EXPECT_EQ(at6, by_igzip);
    EXPECT_EQ(at1, at6);
    EXPECT_EQ(at12, at6);
    EXPECT_NE(at6, one_libdeflate_call(pool, 6, near, final));
    EXPECT_LT(at6.size(), near.size());
    EXPECT_TRUE(inflate_joined(pool, at6, final) == near);
  }
  // Level 0 stores, fast runs included.
  std::vector<u8> at0;
  deflate_chunk(pool, 0, near, true, "near", at0);
  EXPECT_GT(at0.size(), near.size());
  EXPECT_TRUE(zlib_inflate_raw(at0) == near);

  // Nothing in the plan is incompressible or nearly random: one libdeflate
  // call at the writer's level, made non-final, as before the plan existed.
  const std::vector<u8> text = text_bytes(3 * kMiB);
  ASSERT_EQ(plan_chunk(text).size(), 1u);
  ASSERT_FALSE(plan_chunk(text).front().fast);
  for (bool final : {false, true}) {
    std::vector<u8> whole;
    deflate_chunk(pool, 6, text, final, "text", whole);
    EXPECT_EQ(whole, one_libdeflate_call(pool, 6, text, final));
  }
}

TEST(Sources, OverlayServesEditedRanges) {
  TempDir dir;
  std::vector<u8> input = text_bytes(100000);
  write_file(dir / "in", input);
  Overlay overlay(input.size());
  std::vector<u8> p1(300, 0xaa), p2(50, 0xbb), p3(1000, 0xcc);
  overlay.write(10, p1);
  overlay.write(5000, p2);
  overlay.write(5020, p1);   // overlaps p2
  overlay.write(99500, p3);  // grows the file
  overlay.resize(120000);    // and zero-extends further
  std::vector<u8> expected = input;
  expected.resize(120000, 0);
  std::copy(p1.begin(), p1.end(), expected.begin() + 10);
  std::copy(p2.begin(), p2.end(), expected.begin() + 5000);
  std::copy(p1.begin(), p1.end(), expected.begin() + 5020);
  std::copy(p3.begin(), p3.end(), expected.begin() + 99500);
  SourcePtr s = overlay_source(dir / "in", overlay);
  ASSERT_EQ(s->size(), expected.size());
  for (auto [off, len] : std::vector<std::pair<u64, u64>>{{0, 120000},
                                                          {0, 11},
                                                          {9, 2},
                                                          {305, 10},
                                                          {5010, 100},
                                                          {99000, 1000},
                                                          {100400, 200},
                                                          {119999, 1},
                                                          {120000, 0}}) {
    std::vector<u8> got(len);
    s->read(off, got);
    EXPECT_TRUE(std::equal(got.begin(), got.end(),
                           expected.begin() + static_cast<long>(off)))
        << off << "+" << len;
  }
  std::vector<u8> past(2);
  EXPECT_THROW(s->read(119999, past), Error);
  // Through the writer, with chunks that cut patches.
  ZipWriterOptions o;
  o.chunk_size = 4096;
  {
    ZipWriter w(dir / "o.zip", o);
    w.add("edited", s);
    w.commit();
  }
  EXPECT_TRUE(ZipReader::open(dir / "o.zip")
                  .read_all(ZipReader::open(dir / "o.zip").entries()[0]) ==
              expected);
  // An overlay made for another size is refused.
  EXPECT_THROW(overlay_source(dir / "in", Overlay(5)), Error);
}

TEST(Sources, FileSourceReadsRanges) {
  TempDir dir;
  std::vector<u8> bytes = random_bytes(5000, 9);
  write_file(dir / "f", bytes);
  SourcePtr s = file_source(dir / "f");
  EXPECT_EQ(s->size(), 5000u);
  EXPECT_EQ(s->name(), (dir / "f").string());
  std::vector<u8> got(100);
  s->read(4900, got);
  EXPECT_TRUE(std::equal(got.begin(), got.end(), bytes.begin() + 4900));
  EXPECT_THROW(s->read(4950, got), Error);
}

TEST(SourceDateEpoch, ParsesDigitsOnly) {
  ::unsetenv("SOURCE_DATE_EPOCH");
  EXPECT_FALSE(source_date_epoch().has_value());
  ::setenv("SOURCE_DATE_EPOCH", "1700000000", 1);
  EXPECT_EQ(source_date_epoch(), 1700000000);
  for (const char* bad : {"", "12a", "-5", " 1", "1.5"}) {
    ::setenv("SOURCE_DATE_EPOCH", bad, 1);
    try {
      source_date_epoch();
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Errc::usage);
    }
  }
  ::unsetenv("SOURCE_DATE_EPOCH");
}

}  // namespace
