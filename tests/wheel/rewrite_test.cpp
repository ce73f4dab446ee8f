// SPDX-License-Identifier: BSD-3-Clause
// Library-level pack / rewrite / verify / retag: the edits repair will use
// (replace from a source, add, remove, rename) and their error cases.
#include <gtest/gtest.h>

#include "../base/temp_dir.hpp"
#include "libpkg/archive/extract.hpp"
#include "libpkg/archive/zip_reader.hpp"
#include "libpkg/base/error.hpp"
#include "libpkg/wheel/metadata.hpp"
#include "libpkg/wheel/record.hpp"
#include "libpkg/wheel/wheel.hpp"

namespace fs = std::filesystem;
using libpkg::Errc;
using libpkg::Error;
using libpkg::archive::bytes_source;
using libpkg::archive::ZipReader;
using libpkg::testing::TempDir;
using libpkg::testing::write_file;
using namespace libpkg::wheel;

namespace {

// A small wheel built with pack() from a tree.
fs::path make_wheel(const TempDir& tmp) {
  fs::path tree = tmp / "tree";
  fs::create_directories(tree / "pkg");
  fs::create_directories(tree / "pkg-1.0.dist-info");
  write_file(tree / "pkg" / "__init__.py", "from .mod import f\n");
  write_file(tree / "pkg" / "mod.py", "def f():\n    return 1\n");
  write_file(tree / "pkg" / "tool.sh", "#!/bin/sh\n", 0755);
  write_file(tree / "pkg-1.0.dist-info" / "METADATA",
             "Metadata-Version: 2.1\nName: pkg\nVersion: 1.0\n");
  write_file(tree / "pkg-1.0.dist-info" / "WHEEL",
             "Wheel-Version: 1.0\nGenerator: t\nRoot-Is-Purelib: true\n"
             "Tag: py3-none-any\n\n");
  fs::create_directories(tmp / "dist");
  PackOptions opt;
  opt.timestamp = 1600000000;
  auto result = pack(tree, tmp / "dist", opt);
  EXPECT_EQ(result.members, 6u);
  EXPECT_EQ(result.path.filename(), "pkg-1.0-py3-none-any.whl");
  return result.path;
}

// Extracts `zip` (only `only` when given) into `dir`, hashing what it
// writes (ExtractOptions::digests).
libpkg::archive::ExtractReport extract_with_digests(
    const ZipReader& zip, const fs::path& dir, const std::string& only = "") {
  libpkg::archive::ExtractOptions xo;
  xo.digests = true;
  if (!only.empty())
    xo.select = [&](const libpkg::archive::ZipEntry& e) {
      return e.name == only;
    };
  return libpkg::archive::extract(zip, dir, xo);
}

std::vector<std::string> names(const fs::path& wheel) {
  auto zip = ZipReader::open(wheel);
  std::vector<std::string> out;
  for (const auto& e : zip.entries()) out.push_back(e.name);
  return out;
}

TEST(WheelPack, OrderAndRecord) {
  TempDir tmp;
  auto wheel = make_wheel(tmp);
  EXPECT_EQ(names(wheel),
            (std::vector<std::string>{
                "pkg/__init__.py", "pkg/mod.py", "pkg/tool.sh",
                "pkg-1.0.dist-info/METADATA", "pkg-1.0.dist-info/WHEEL",
                "pkg-1.0.dist-info/RECORD"}));
  auto zip = ZipReader::open(wheel);
  EXPECT_EQ(zip.find("pkg/tool.sh")->unix_mode() & 0777, 0755u);
  EXPECT_EQ(zip.find("pkg/mod.py")->unix_mode() & 0777, 0644u);
  auto record = Record::parse(
      zip.read_text(*zip.find("pkg-1.0.dist-info/RECORD")), "RECORD");
  ASSERT_EQ(record.rows().size(), 6u);
  EXPECT_EQ(record.rows().back(),
            (RecordRow{"pkg-1.0.dist-info/RECORD", "", std::nullopt}));
  EXPECT_TRUE(verify(wheel).ok());
}

TEST(WheelRewrite, ReplaceAddRemoveRename) {
  TempDir tmp;
  auto wheel = make_wheel(tmp);
  auto zip = ZipReader::open(wheel);
  WheelEdits edits;
  edits.replace["pkg/mod.py"] =
      bytes_source(std::string_view("def f():\n    return 2\n"), "new mod");
  edits.add.push_back(
      {"pkg/lib/libx.so", bytes_source(std::string_view("ELF"), "x"), 0755});
  edits.add.push_back({"pkg-1.0.dist-info/extra.txt",
                       bytes_source(std::string_view("x"), "x"), 0644});
  edits.remove.insert("pkg/tool.sh");
  edits.rename["pkg/__init__.py"] = "pkg/__init__2.py";
  fs::path out = tmp / "out.whl";
  auto result = rewrite(zip, out, edits);
  EXPECT_EQ(result.raw_copies, 3u);  // __init__, METADATA, WHEEL
  EXPECT_EQ(result.compressed, 4u);  // mod.py, two added, RECORD
  EXPECT_EQ(names(out),
            (std::vector<std::string>{
                "pkg/__init__2.py", "pkg/mod.py", "pkg/lib/libx.so",
                "pkg-1.0.dist-info/METADATA", "pkg-1.0.dist-info/WHEEL",
                "pkg-1.0.dist-info/extra.txt", "pkg-1.0.dist-info/RECORD"}));
  auto back = ZipReader::open(out);
  EXPECT_EQ(back.read_text(*back.find("pkg/mod.py")),
            "def f():\n    return 2\n");
  EXPECT_EQ(back.find("pkg/lib/libx.so")->unix_mode() & 0777, 0755u);
  // out.whl is not a valid wheel file name, so check RECORD only.
  auto report = verify(back);
  for (const auto& f : report.findings)
    EXPECT_EQ(f.kind, FindingKind::bad_file_name) << f.message();
}

TEST(WheelRewrite, RejectsBadEdits) {
  TempDir tmp;
  auto wheel = make_wheel(tmp);
  auto zip = ZipReader::open(wheel);
  auto expect_usage = [&](const WheelEdits& edits) {
    try {
      rewrite(zip, tmp / "bad.whl", edits);
      ADD_FAILURE() << "accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Errc::usage) << e.what();
    }
    EXPECT_FALSE(fs::exists(tmp / "bad.whl"));
  };
  WheelEdits absent;
  absent.remove.insert("nope.py");
  expect_usage(absent);
  WheelEdits dup;
  dup.rename["pkg/mod.py"] = "pkg/__init__.py";
  expect_usage(dup);
  WheelEdits record;
  record.add.push_back({"pkg-1.0.dist-info/RECORD",
                        bytes_source(std::string_view(""), "r"), 0644});
  expect_usage(record);
  WheelEdits two_dist_infos;
  two_dist_infos.add.push_back({"other-1.0.dist-info/METADATA",
                                bytes_source(std::string_view(""), "m"), 0644});
  expect_usage(two_dist_infos);
}

TEST(WheelRetag, NameComputation) {
  auto n = WheelName::parse("a-1.0+cu124-cp311-cp311-linux_x86_64.whl");
  RetagOptions o;
  o.platform_tags = "manylinux_2_17_x86_64.manylinux2014_x86_64";
  o.python_tags = "+py3";
  o.strip_local_version = true;
  o.build = "2";
  EXPECT_EQ(retagged_name(n, o).format(),
            "a-1.0-2-cp311.py3-cp311-manylinux2014_x86_64.manylinux_2_17_"
            "x86_64.whl");
  RetagOptions remove_all;
  remove_all.abi_tags = "-cp311";
  EXPECT_THROW(retagged_name(n, remove_all), Error);
}

// The output directory is created like pack() creates its own; a missing
// input creates nothing.
TEST(WheelRetag, CreatesTheOutputDirectory) {
  TempDir tmp;
  auto wheel = make_wheel(tmp);
  RetagOptions o;
  o.platform_tags = "manylinux_2_17_x86_64";
  o.out_dir = tmp / "new" / "dir";
  auto result = retag(wheel, o);
  EXPECT_EQ(result.path,
            tmp / "new" / "dir" / "pkg-1.0-py3-none-manylinux_2_17_x86_64.whl");
  EXPECT_TRUE(verify(result.path).ok());
  o.out_dir = tmp / "never";
  EXPECT_THROW(retag(tmp / "absent-1.0-py3-none-any.whl", o), Error);
  EXPECT_FALSE(fs::exists(tmp / "never"));
}

TEST(WheelVerify, FindsTagMismatchAndMissingRecordRow) {
  TempDir tmp;
  auto wheel = make_wheel(tmp);
  fs::path renamed = tmp / "pkg-1.0-py2-none-any.whl";
  fs::copy_file(wheel, renamed);
  auto report = verify(renamed);
  ASSERT_EQ(report.findings.size(), 1u);
  EXPECT_EQ(report.findings[0].kind, FindingKind::tag_mismatch);
  EXPECT_EQ(report.findings[0].expected, "py2-none-any");
  EXPECT_EQ(report.findings[0].actual, "py3-none-any");
}

// verify() takes each member's digest from extract() when given one instead
// of inflating the member again: a wrong digest is a hash mismatch, a
// recorded inflate error a corrupt member, and with the true digests the
// report is the one inflating gives.
TEST(WheelVerify, UsesDigestsFromExtraction) {
  TempDir tmp;
  auto wheel = make_wheel(tmp);
  auto zip = ZipReader::open(wheel);
  auto extracted = extract_with_digests(zip, tmp / "x");
  const VerifyReport inflated = verify(zip);
  ASSERT_TRUE(inflated.ok());

  VerifyOptions vo;
  vo.digests = extracted.digests;
  VerifyReport from_digests = verify(zip, vo);
  EXPECT_TRUE(from_digests.ok());
  EXPECT_EQ(from_digests.members, inflated.members);
  EXPECT_EQ(from_digests.hashed_bytes, inflated.hashed_bytes);

  auto digests = extracted.digests;
  const std::size_t mod = zip.find("pkg/mod.py") - zip.entries().data();
  const std::size_t init = zip.find("pkg/__init__.py") - zip.entries().data();
  digests[mod].sha256[0] ^= 1;
  digests[init].present = false;
  digests[init].error = "pkg/__init__.py: CRC-32 mismatch";
  vo.digests = digests;
  VerifyReport tampered = verify(zip, vo);
  ASSERT_EQ(tampered.findings.size(), 2u);
  EXPECT_EQ(tampered.findings[0].kind, FindingKind::corrupt_member);
  EXPECT_EQ(tampered.findings[0].member, "pkg/__init__.py");
  EXPECT_EQ(tampered.findings[0].actual, "pkg/__init__.py: CRC-32 mismatch");
  EXPECT_EQ(tampered.findings[1].kind, FindingKind::hash_mismatch);
  EXPECT_EQ(tampered.findings[1].member, "pkg/mod.py");

  // A member without a digest (not extracted) is inflated as before.
  digests = extracted.digests;
  digests[mod] = {};
  vo.digests = digests;
  VerifyReport partly = verify(zip, vo);
  EXPECT_TRUE(partly.ok());
  EXPECT_EQ(partly.hashed_bytes, inflated.hashed_bytes);
}

// rewrite() checks the input's RECORD with the digests the caller took
// while extracting (RewriteOptions::digests, what repair --strip passes)
// instead of inflating those members again: the true digests let it
// write, a wrong one refuses it with the hash mismatch, and nothing is
// written.
TEST(WheelRewrite, ChecksRecordWithTheCallersDigests) {
  TempDir tmp;
  auto wheel = make_wheel(tmp);
  auto zip = ZipReader::open(wheel);
  auto extracted = extract_with_digests(zip, tmp / "x", "pkg/mod.py");
  const std::size_t mod = zip.find("pkg/mod.py") - zip.entries().data();
  ASSERT_TRUE(extracted.digests.at(mod).present);

  WheelEdits edits;
  edits.replace["pkg/__init__.py"] =
      bytes_source(std::string_view("x = 1\n"), "new init");
  RewriteOptions ro;
  ro.digests = extracted.digests;
  fs::create_directories(tmp / "out");
  const fs::path good = tmp / "out" / "pkg-1.0-py3-none-any.whl";
  EXPECT_TRUE(verify(rewrite(zip, good, edits, ro).path).ok());

  auto digests = extracted.digests;
  digests[mod].sha256[0] ^= 1;
  ro.digests = digests;
  try {
    rewrite(zip, tmp / "bad.whl", edits, ro);
    ADD_FAILURE() << "a wrong digest was not used";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::format);
    EXPECT_NE(std::string(e.what()).find("pkg/mod.py"), std::string::npos)
        << e.what();
  }
  EXPECT_FALSE(fs::exists(tmp / "bad.whl"));
}

}  // namespace
