// SPDX-License-Identifier: BSD-3-Clause
// ZipReader over archives built in memory by reader_zip_builder.hpp: every
// valid layout must read back exactly, every malformed one must fail with a
// libpkg::Error whose message names the member (when there is one) and the
// problem.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <string>

#include "libpkg/archive/zip_reader.hpp"
#include "libpkg/base/error.hpp"
#include "reader_zip_builder.hpp"

namespace {

using namespace libpkg::archive;
using namespace reader_testing;
using libpkg::Errc;
using libpkg::Error;

ZipReader open_bytes(const Bytes& bytes, const ZipLimits& limits = {}) {
  return ZipReader::from_bytes(bytes, "test.zip", limits);
}

Bytes pattern(std::size_t n, unsigned seed = 1) {
  Bytes b(n);
  unsigned x = seed;
  for (auto& c : b) {
    x = x * 1103515245 + 12345;
    c = static_cast<std::uint8_t>((x >> 16) % 7 + 'a');  // compressible
  }
  return b;
}

// Expects `f` to throw libpkg::Error with `code` and a message containing
// every string in `parts`.
template <typename F>
void expect_error(F&& f, Errc code, std::initializer_list<std::string> parts) {
  try {
    f();
    ADD_FAILURE() << "no error thrown";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), code) << e.what();
    EXPECT_EQ(e.file(), "test.zip") << e.what();
    for (const std::string& p : parts)
      EXPECT_NE(std::string(e.what()).find(p), std::string::npos)
          << "'" << p << "' not in: " << e.what();
  }
}

void expect_open_error(const Bytes& bytes,
                       std::initializer_list<std::string> parts,
                       Errc code = Errc::format, const ZipLimits& limits = {}) {
  expect_error([&] { open_bytes(bytes, limits); }, code, parts);
}

void expect_read_error(const Bytes& bytes, const std::string& member,
                       std::initializer_list<std::string> parts) {
  ZipReader zip = open_bytes(bytes);
  const ZipEntry* e = zip.find(member);
  ASSERT_NE(e, nullptr);
  expect_error([&] { zip.read_all(*e); }, Errc::format, parts);
}

// ---------------------------------------------------------------- valid

TEST(ZipReader, StoredAndDeflatedReadBack) {
  Bytes big = pattern(1 << 20);
  Built b = build_zip({file("a.txt", to_bytes("hello"), 0),
                       file("dir/big.bin", big, 8), file("empty", {}, 8),
                       file("empty-stored", {}, 0)});
  ZipReader zip = open_bytes(b.bytes);
  ASSERT_EQ(zip.entries().size(), 4u);
  EXPECT_EQ(zip.entries()[0].name, "a.txt");
  EXPECT_EQ(zip.read_text(*zip.find("a.txt")), "hello");
  EXPECT_EQ(zip.read_all(*zip.find("dir/big.bin")), big);
  EXPECT_TRUE(zip.read_all(*zip.find("empty")).empty());
  EXPECT_TRUE(zip.read_all(*zip.find("empty-stored")).empty());
  EXPECT_EQ(zip.find("missing"), nullptr);
  EXPECT_EQ(zip.file_size(), b.bytes.size());
  const ZipEntry& e = *zip.find("dir/big.bin");
  EXPECT_EQ(e.method, 8);
  EXPECT_EQ(e.uncompressed_size, big.size());
  EXPECT_EQ(e.local_header_offset, b.local_offsets[1]);
  EXPECT_EQ(zip.raw(e).size(), e.compressed_size);
  EXPECT_EQ(e.unix_mode(), 0100644u);
  EXPECT_FALSE(e.is_directory());
  // 2025-01-01 12:00:00 UTC
  EXPECT_EQ(e.mtime(), 1735732800);
}

TEST(ZipReader, StreamsInBoundedPieces) {
  Bytes big = pattern(3 << 20, 7);
  Built b = build_zip({file("big", big, 8), file("big-stored", big, 0)});
  ZipReader zip = open_bytes(b.bytes);
  for (const ZipEntry& e : zip.entries()) {
    std::size_t pieces = 0, total = 0, largest = 0;
    zip.read(e, [&](std::span<const std::uint8_t> p) {
      ++pieces;
      total += p.size();
      largest = std::max(largest, p.size());
    });
    EXPECT_EQ(total, big.size());
    EXPECT_GT(pieces, 3u);
    EXPECT_LE(largest, 512u * 1024);
  }
}

TEST(ZipReader, DataDescriptorsWithAndWithoutSignature) {
  Member a = file("a", pattern(5000), 8);
  a.data_descriptor = true;
  Member b = file("b", pattern(300), 0);
  b.data_descriptor = true;
  b.descriptor_signature = false;
  Member c = file("c", pattern(70000, 3), 8);
  c.data_descriptor = true;
  c.zip64 = true;
  Built built = build_zip({a, b, c});
  ZipReader zip = open_bytes(built.bytes);
  EXPECT_EQ(zip.read_all(*zip.find("a")), a.data);
  EXPECT_EQ(zip.read_all(*zip.find("b")), b.data);
  EXPECT_EQ(zip.read_all(*zip.find("c")), c.data);
  EXPECT_TRUE(zip.find("a")->flags & 8);
}

TEST(ZipReader, Zip64ExtraFieldsAndEndRecords) {
  Member a = file("a", pattern(1000), 8);
  a.zip64 = true;
  Member b = file("b", pattern(10), 0);
  Built built = build_zip({a, b}, {.zip64_end = true});
  ZipReader zip = open_bytes(built.bytes);
  ASSERT_EQ(zip.entries().size(), 2u);
  EXPECT_EQ(zip.find("a")->uncompressed_size, 1000u);
  EXPECT_EQ(zip.find("a")->local_header_offset, built.local_offsets[0]);
  EXPECT_EQ(zip.read_all(*zip.find("a")), a.data);
  EXPECT_EQ(zip.read_all(*zip.find("b")), b.data);
}

TEST(ZipReader, MoreThan65535Entries) {
  std::vector<Member> members;
  for (int i = 0; i < 70000; ++i)
    members.push_back(file("f" + std::to_string(i), {}, 0));
  members.back().data = to_bytes("last");
  Built built = build_zip(members, {.zip64_end = true});
  ZipReader zip = open_bytes(built.bytes);
  ASSERT_EQ(zip.entries().size(), 70000u);
  EXPECT_EQ(zip.read_text(*zip.find("f69999")), "last");
}

TEST(ZipReader, CommentsIncludingAFakeEndSignature) {
  Built plain = build_zip({file("x", to_bytes("x"))}, {.comment = "hi"});
  EXPECT_EQ(open_bytes(plain.bytes).entries().size(), 1u);
  // A comment holding a bogus end record: the real one (whose comment
  // reaches the end of the file) must win.
  std::string fake("PK\x05\x06", 4);
  fake += std::string(18, '\0');
  Built tricky = build_zip({file("x", to_bytes("x"))},
                           {.comment = "junk" + fake + "tail"});
  ZipReader zip = open_bytes(tricky.bytes);
  ASSERT_EQ(zip.entries().size(), 1u);
  EXPECT_EQ(zip.read_text(zip.entries()[0]), "x");
  Built max = build_zip({file("y", to_bytes("y"))},
                        {.comment = std::string(65535, 'c')});
  EXPECT_EQ(open_bytes(max.bytes).entries().size(), 1u);
}

TEST(ZipReader, DataOffsetUsesTheLocalExtraLength) {
  Member m = file("padded", pattern(100), 0);
  m.local_extra = Bytes{0x34, 0x12, 3, 0, 0, 0, 0};  // id 0x1234, 3 bytes
  Built built = build_zip({m});
  ZipReader zip = open_bytes(built.bytes);
  EXPECT_EQ(zip.entries()[0].data_offset, 30u + 6 + 7);
  EXPECT_EQ(zip.read_all(zip.entries()[0]), m.data);
}

TEST(ZipReader, EmptyArchiveAndUnixAttributes) {
  EXPECT_TRUE(open_bytes(build_zip({}).bytes).entries().empty());
  Member d = file("d/", {}, 0);
  d.external_attr = 040755u << 16;
  Member l = file("l", to_bytes("target"), 0);
  l.external_attr = 0120777u << 16;
  Member dos = file("dos", to_bytes("x"), 0);
  dos.made_by = 20;  // MS-DOS: no unix mode
  dos.external_attr = 0x20;
  ZipReader zip = open_bytes(build_zip({d, l, dos}).bytes);
  EXPECT_TRUE(zip.find("d/")->is_directory());
  EXPECT_TRUE(zip.find("l")->is_symlink());
  EXPECT_FALSE(zip.find("l")->is_directory());
  EXPECT_EQ(zip.find("dos")->unix_mode(), 0u);
}

TEST(ZipReader, OpenFromFile) {
  Built built = build_zip({file("a", to_bytes("file data"))});
  std::string path = ::testing::TempDir() + "/reader_open.zip";
  FILE* f = std::fopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  std::fwrite(built.bytes.data(), 1, built.bytes.size(), f);
  std::fclose(f);
  ZipReader zip = ZipReader::open(path);
  EXPECT_EQ(zip.read_text(zip.entries()[0]), "file data");
  EXPECT_EQ(zip.path(), path);
  std::remove(path.c_str());
  EXPECT_THROW(ZipReader::open(path), Error);
}

// ---------------------------------------------------------------- malformed

TEST(ZipReaderMalformed, NotAZipOrTruncated) {
  expect_open_error({}, {"not a zip archive"});
  expect_open_error(to_bytes(std::string(100, 'x')),
                    {"no end of central directory"});
  Built b = build_zip({file("a", pattern(100)), file("b", pattern(100))});
  Bytes cut(b.bytes.begin(), b.bytes.begin() + b.cd_offset + 20);
  expect_open_error(cut, {"no end of central directory"});
}

TEST(ZipReaderMalformed, TruncatedCentralDirectory) {
  Built b = build_zip({file("a", pattern(100)), file("b", pattern(100))});
  // Remove the second central header but keep the end record.
  Bytes bytes(b.bytes.begin(), b.bytes.begin() + b.cd_offset + 46 + 1);
  bytes.insert(bytes.end(), b.bytes.begin() + b.end_offset, b.bytes.end());
  expect_open_error(bytes, {"central directory"});
}

TEST(ZipReaderMalformed, CountsThatDoNotMatch) {
  // Long names, so the central directory could hold a third header.
  std::vector<Member> ms = {file("a-long-member-name-000001", pattern(10)),
                            file("a-long-member-name-000002", pattern(10))};
  expect_open_error(build_zip(ms, {.declared_entries = 1}).bytes,
                    {"left in the central directory", "1 entries"});
  expect_open_error(build_zip(ms, {.declared_entries = 3}).bytes,
                    {"central directory ends after 2 of the 3"});
  expect_open_error(build_zip(ms, {.declared_entries = 60000}).bytes,
                    {"60000 entries", "can hold at most"});
  expect_open_error(
      build_zip(ms, {.zip64_end = true, .declared_entries = 1}).bytes,
      {"left in the central directory"});
}

TEST(ZipReaderMalformed, BadDirectoryOffsets) {
  std::vector<Member> ms = {file("a", pattern(10))};
  Built b = build_zip(ms);
  expect_open_error(
      build_zip(ms, {.declared_cd_offset = b.cd_offset + 1}).bytes,
      {"does not end where the end records start"});
  expect_open_error(build_zip(ms, {.declared_cd_size = b.cd_size - 1}).bytes,
                    {"does not end where the end records start"});
  expect_open_error(build_zip(ms, {.declared_cd_offset = 0xfffffff0u}).bytes,
                    {"central directory"});
  expect_open_error(build_zip(ms, {.zip64_end = true,
                                   .declared_cd_offset = ~std::uint64_t{0} - 3})
                        .bytes,
                    {"overflows"});
  // Leading bytes (a self-extractor stub) are fine while the offsets count
  // them; offsets relative to the zip start are refused, not guessed.
  Built stub = build_zip(ms, {.prefix = Bytes(7, 'p')});
  EXPECT_EQ(open_bytes(stub.bytes).entries().size(), 1u);
  expect_open_error(build_zip(ms, {.declared_cd_offset = stub.cd_offset - 7,
                                   .prefix = Bytes(7, 'p')})
                        .bytes,
                    {"does not end where the end records start"});
}

TEST(ZipReaderMalformed, BadLocalHeaderOffsets) {
  Member a = file("a", pattern(10));
  Member b = file("b", pattern(10));
  b.local_offset = 3;
  expect_open_error(
      build_zip({a, b}).bytes,
      {"central directory entry 2 (b): bad local header signature"});
  b.local_offset = 1u << 30;
  const Bytes far = build_zip({a, b}).bytes;
  expect_open_error(far, {fmt::format("central directory entry 2 (b): local "
                                      "header offset 0x40000000 past end of "
                                      "file (size 0x{:x})",
                                      far.size())});
  // Inside the file but after the start of the central directory.
  b.local_offset = build_zip({a, b}).end_offset - 10;
  expect_open_error(build_zip({a, b}).bytes,
                    {"central directory entry 2 (b): local header offset",
                     "not before the central"});
}

TEST(ZipReaderMalformed, LocalCentralNameMismatch) {
  Member a = file("good.txt", pattern(10));
  a.local_name = "evil.txt";
  expect_open_error(
      build_zip({a}).bytes,
      {"central directory entry 1 (good.txt): local header names 'evil.txt'"});
}

TEST(ZipReaderMalformed, Zip64FieldsLying) {
  Member big = file("z", pattern(5000));
  big.zip64 = true;
  big.declared_size = 6000;  // more than the data inflates to
  expect_read_error(build_zip({big}).bytes, "z",
                    {"z: inflates to 5000 bytes but declares 6000"});
  big.declared_size = 4000;  // less
  expect_read_error(build_zip({big}).bytes, "z",
                    {"z: inflates to more than the declared 4000"});
  big.declared_size.reset();
  big.declared_compressed = 1u << 20;  // runs into the central directory
  expect_open_error(build_zip({big}).bytes,
                    {"central directory entry 1 (z): data", "runs into"});
  big.declared_compressed = ~std::uint64_t{0};
  expect_open_error(build_zip({big}).bytes, {"overflows"});

  Member marker = file("m", pattern(10));
  marker.zip64_marker_without_extra = true;
  expect_open_error(
      build_zip({marker}).bytes,
      {"central directory entry 1 (m): central header has a ZIP64 marker",
       "no ZIP64 extra"});
  Member short_extra = file("s", pattern(10));
  short_extra.zip64 = true;
  short_extra.zip64_extra_short = true;
  expect_open_error(build_zip({short_extra}).bytes,
                    {"central directory entry 1 (s): ZIP64 extra field is too "
                     "short for the compressed"});
  // A bogus ZIP64 end record behind a valid locator.
  Built z = build_zip({file("a", pattern(10))}, {.zip64_end = true});
  Bytes bad = z.bytes;
  bad[z.end_offset - 20 - 56] = 'X';  // ZIP64 end record signature
  expect_open_error(bad, {"bad ZIP64 end record signature"});
}

TEST(ZipReaderMalformed, OverlappingMembers) {
  Member a = file("a", pattern(1000));
  Bytes comp = raw_deflate(a.data);
  a.declared_compressed = comp.size() + 40;  // reaches into b's header
  Member b = file("b", pattern(1000, 2));
  expect_open_error(build_zip({a, b}).bytes,
                    {"central directory entry 1 (a): overlaps member 'b'"});
  // Two central entries sharing one local header (the "overlap" bomb); the
  // local name matches only one, so give both the same name... which is a
  // duplicate; a same-offset different-name pair fails the name check.
  Member c = file("b", pattern(1000, 2));
  c.local_offset = 0;
  Member a2 = file("a", pattern(1000));
  expect_open_error(build_zip({a2, c}).bytes,
                    {"central directory entry 2 (b): local header names 'a'"});
}

TEST(ZipReaderMalformed, SameLocalHeaderTwice) {
  Member a = file("a", pattern(1000));
  Member a2 = file("a", pattern(1000));
  a2.local_offset = 0;
  expect_open_error(build_zip({a, a2}).bytes, {"(a): overlaps member 'a'"});
}

TEST(ZipReaderMalformed, DuplicateNames) {
  Member a = file("same", pattern(10));
  Member b = file("same", pattern(20));
  expect_open_error(build_zip({a, b}).bytes,
                    {"same: duplicate member name (entries 1 and 2)"});
}

TEST(ZipReaderMalformed, EncryptedAndUnknownMethods) {
  Member enc = file("secret", pattern(10));
  enc.flags = 1;
  expect_open_error(build_zip({enc}).bytes,
                    {"central directory entry 1 (secret): encrypted members "
                     "are not supported"},
                    Errc::unsupported);
  Member bz = file("b.bz", pattern(10), 0);
  bz.method_field = 12;
  expect_open_error(build_zip({bz}).bytes,
                    {"central directory entry 1 (b.bz): compression bzip2"},
                    Errc::unsupported);
  Member aes = file("aes", pattern(10), 0);
  aes.method_field = 99;
  expect_open_error(build_zip({aes}).bytes,
                    {"central directory entry 1 (aes): compression AES"},
                    Errc::unsupported);
  Member odd = file("odd", pattern(10), 0);
  odd.method_field = 42;
  expect_open_error(build_zip({odd}).bytes,
                    {"central directory entry 1 (odd): compression method 42"},
                    Errc::unsupported);
}

TEST(ZipReaderMalformed, StoredSizesDisagree) {
  Member s = file("s", pattern(10), 0);
  s.declared_size = 11;
  expect_open_error(build_zip({s}).bytes,
                    {"central directory entry 1 (s): stored member declares 10 "
                     "compressed but 11"});
}

TEST(ZipReaderMalformed, CorruptData) {
  Member crc = file("crc", pattern(1000));
  crc.crc = 0x12345678;
  expect_read_error(build_zip({crc}).bytes, "crc", {"crc: CRC-32 mismatch"});
  Member crc0 = file("crc0", pattern(1000), 0);
  crc0.crc = 1;
  expect_read_error(build_zip({crc0}).bytes, "crc0", {"crc0: CRC-32 mismatch"});

  Member cut = file("cut", pattern(100000));
  Bytes comp = raw_deflate(cut.data);
  comp.resize(comp.size() / 2);
  cut.compressed = comp;
  expect_read_error(build_zip({cut}).bytes, "cut",
                    {"cut: compressed data", "ends before the deflate stream"});

  Member garbage = file("garbage", pattern(100));
  garbage.compressed = Bytes(64, 0xff);
  expect_read_error(build_zip({garbage}).bytes, "garbage",
                    {"garbage: corrupt deflate data"});

  Member trailing = file("trailing", pattern(100));
  Bytes comp2 = raw_deflate(trailing.data);
  comp2.push_back(0);
  trailing.compressed = comp2;
  expect_read_error(build_zip({trailing}).bytes, "trailing",
                    {"trailing: 1 bytes of compressed data follow"});
}

TEST(ZipReaderMalformed, BombsBeyondLimits) {
  // Ratio: 64 MiB of zeros deflate to ~64 KiB (1000:1); declare 4 GiB.
  Member bomb = file("bomb", Bytes(1 << 20, 0));
  bomb.declared_size = std::uint64_t{4} << 30;
  bomb.zip64 = true;
  expect_open_error(
      build_zip({bomb}).bytes,
      {"central directory entry 1 (bomb): compression ratio", "zip bomb"});
  // Beyond ratio checks: the declared size still bounds the output.
  ZipLimits generous;
  generous.max_ratio = ~std::uint64_t{0};
  Member liar = file("liar", Bytes(4 << 20, 0));
  liar.declared_size = 2 << 20;
  ZipReader zip = open_bytes(build_zip({liar}).bytes, generous);
  expect_error([&] { zip.read_all(zip.entries()[0]); }, Errc::format,
               {"liar: inflates to more than the declared 2097152"});

  ZipLimits small;
  small.max_total_uncompressed = 1000;
  expect_open_error(
      build_zip({file("a", pattern(600)), file("b", pattern(600))}).bytes,
      {"central directory entry 2 (b): total declared size exceeds the limit "
       "of 1000"},
      Errc::format, small);
  ZipLimits per_entry;
  per_entry.max_entry_uncompressed = 100;
  expect_open_error(build_zip({file("a", pattern(600))}).bytes,
                    {"central directory entry 1 (a): declared size 600 bytes "
                     "exceeds the per-member"},
                    Errc::format, per_entry);
  ZipLimits few;
  few.max_entries = 2;
  expect_open_error(
      build_zip({file("a", {}), file("b", {}), file("c", {})}).bytes,
      {"3 entries, more than the limit of 2"}, Errc::format, few);
  ZipLimits short_names;
  short_names.max_name_length = 8;
  expect_open_error(build_zip({file("a-very-long-name", {})}).bytes,
                    {"name of 16 bytes exceeds the limit of 8"}, Errc::format,
                    short_names);
}

TEST(ZipReaderMalformed, EveryTruncationFailsCleanly) {
  Member a = file("a", pattern(3000));
  a.zip64 = true;
  Member b = file("b", pattern(50), 0);
  b.data_descriptor = true;
  Built built = build_zip({a, b}, {.comment = "c", .zip64_end = true});
  for (std::size_t n = 0; n < built.bytes.size(); ++n) {
    Bytes cut(built.bytes.begin(), built.bytes.begin() + n);
    EXPECT_THROW(open_bytes(cut), Error) << n;
  }
  // Every single-byte corruption either opens (and reads or fails with an
  // Error) or fails to open with an Error.
  for (std::size_t i = 0; i < built.bytes.size(); ++i) {
    Bytes bad = built.bytes;
    bad[i] ^= 0x5a;
    try {
      ZipReader zip = open_bytes(bad);
      for (const ZipEntry& e : zip.entries()) {
        try {
          zip.read_all(e);
        } catch (const Error&) {
        }
      }
    } catch (const Error&) {
    }
  }
}

}  // namespace
