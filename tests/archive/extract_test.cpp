// SPDX-License-Identifier: BSD-3-Clause
// check_member_names and extract over in-memory archives: hostile names are
// refused before anything is written, and extraction creates exactly the
// archive's tree (modes masked, symlinks last) or nothing at all.
#include "libpkg/archive/extract.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "libpkg/base/error.hpp"
#include "libpkg/base/sha256.hpp"
#include "reader_zip_builder.hpp"

namespace {

namespace fs = std::filesystem;
using namespace libpkg::archive;
using namespace reader_testing;
using libpkg::Errc;
using libpkg::Error;
using libpkg::Sha256;

Member file(std::string name, std::string data, unsigned mode = 0100644) {
  Member m;
  m.name = std::move(name);
  m.data = to_bytes(data);
  m.external_attr = mode << 16;
  return m;
}

Member dir(std::string name, unsigned mode = 040755) {
  Member m = file(std::move(name), "", mode);
  m.method = 0;
  return m;
}

Member link(std::string name, std::string target) {
  Member m = file(std::move(name), std::move(target), 0120777);
  m.method = 0;
  return m;
}

ZipReader zip_of(const std::vector<Member>& members) {
  return ZipReader::from_bytes(build_zip(members).bytes, "test.zip");
}

void expect_refused(const std::vector<Member>& members,
                    std::initializer_list<std::string> parts,
                    bool allow_symlinks = true) {
  ZipReader zip = zip_of(members);
  try {
    check_member_names(zip, allow_symlinks);
    ADD_FAILURE() << "names accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::format) << e.what();
    EXPECT_EQ(e.file(), "test.zip");
    for (const std::string& p : parts)
      EXPECT_NE(std::string(e.what()).find(p), std::string::npos)
          << "'" << p << "' not in: " << e.what();
  }
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

class Extract : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::path(::testing::TempDir()) /
            ("extract_test_" + std::to_string(::getpid()) + "_" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::create_directories(root_);
  }
  void TearDown() override { fs::remove_all(root_); }
  // Only `keep` (and what is inside it) may exist below root_.
  void expect_only(const std::string& keep) {
    for (const auto& e : fs::directory_iterator(root_))
      EXPECT_EQ(e.path().filename().string(), keep) << e.path();
  }
  fs::path root_;
};

// ---------------------------------------------------------------- names

TEST(MemberNames, AcceptsOrdinaryTrees) {
  ZipReader zip = zip_of({dir("pkg/"), file("pkg/__init__.py", "x"),
                          file("pkg/sub/mod.py", "y"), link("pkg/l", "sub"),
                          link("pkg/sub/up", "../__init__.py"),
                          file("./dot.txt", "z"), dir("./")});
  EXPECT_NO_THROW(check_member_names(zip));
}

TEST(MemberNames, RefusesTraversalAndOddNames) {
  expect_refused({file("../evil", "x")}, {"../evil: '..' segment"});
  expect_refused({file("a/../../evil", "x")}, {"'..' segment"});
  expect_refused({file("/etc/passwd", "x")}, {"/etc/passwd: absolute path"});
  expect_refused({file("a\\..\\b", "x")}, {"backslash"});
  expect_refused({file(std::string("a\0b", 3), "x")},
                 {"a\\x00b: name contains a NUL byte"});
  expect_refused({file("a//b", "x")}, {"a//b: empty path segment"});
  expect_refused({file(".", "x")}, {"names the target directory itself"});
}

TEST(MemberNames, RefusesCollisions) {
  expect_refused({file("a/b", "1"), file("a/./b", "2")},
                 {"a/./b: names the same path as 'a/b'"});
  expect_refused({file("x", "1"), dir("x/")}, {"x/: names the same path"});
  expect_refused({file("README", "1"), file("readme", "2")},
                 {"readme: differs from 'README' only in case"});
  // NFC "é" vs NFD "e" + COMBINING ACUTE.
  expect_refused({file("caf\xc3\xa9", "1"), file("cafe\xcc\x81", "2")},
                 {"differs from", "Unicode normalisation"});
  // Compatibility forms: "ﬁ" (U+FB01) folds to "fi".
  expect_refused({file("fi", "1"), file("\xef\xac\x81", "2")},
                 {"differs from 'fi'"});
  // Case-insensitive parent: "Dir" is a file, "dir/x" would go through it
  // on macOS.
  expect_refused({file("Dir", "1"), file("dir/x", "2")},
                 {"dir/x: is below 'Dir', which is a file"});
  expect_refused({file("a", "1"), file("a/b", "2")},
                 {"a/b: is below 'a', which is a file"});
}

TEST(MemberNames, Utf8Handling) {
  Member flagged = file("bad\xff", "x");
  flagged.flags = 1 << 11;
  expect_refused({flagged}, {"flagged UTF-8 but is not valid UTF-8"});
  // Legacy bytes without the flag are accepted while unique.
  ZipReader ok = zip_of({file("caf\xe9", "x"), file("CAF\xe9-2", "y")});
  EXPECT_NO_THROW(check_member_names(ok));
  expect_refused({file("caf\xe9", "x"), file("CAF\xe9", "y")},
                 {"only in case"});
}

TEST(MemberNames, RefusesSymlinkTricks) {
  expect_refused({link("l", "/etc"), file("x", "1")},
                 {"l: symlink to the absolute path '/etc'"});
  expect_refused({link("a/l", "../../outside")},
                 {"a/l: symlink target '../../outside' escapes"});
  expect_refused({link("l", "."), file("l/x", "1")},
                 {"l/x: is below symlink member 'l'"});
  expect_refused({link("d", "sub"), dir("sub/"), link("e", "d/../..")},
                 {"e: symlink target 'd/../..' goes through symlink member "
                  "'d'"});
  expect_refused({link("l", "")}, {"l: empty symlink target"});
  expect_refused({link("ok", "target")},
                 {"ok: is a symlink and symlinks are not allowed"},
                 /*allow_symlinks=*/false);
  Member huge = link("long", std::string(5000, 'a'));
  expect_refused({huge}, {"long: symlink target of 5000 bytes is too long"});
}

// ---------------------------------------------------------------- extract

TEST_F(Extract, CreatesTreeModesSymlinksAndTimes) {
  Bytes big(3 << 20);
  for (std::size_t i = 0; i < big.size(); ++i)
    big[i] = static_cast<std::uint8_t>(i * 7 / 3);
  Member bigm;
  bigm.name = "pkg/data/big.bin";
  bigm.data = big;
  bigm.external_attr = 0100600u << 16;
  Member setuid = file("pkg/bin/tool", "#!/bin/sh\n", 0104755);
  Member dosfile = file("pkg/dos.txt", "dos");
  dosfile.made_by = 20;
  dosfile.external_attr = 0;
  ZipReader zip = zip_of({dir("pkg/", 040750), file("pkg/a.py", "print(1)\n"),
                          bigm, setuid, dosfile, link("pkg/link", "a.py"),
                          link("pkg/bin/up", "../data")});
  std::vector<std::pair<std::uint64_t, std::uint64_t>> progress;
  ExtractOptions options;
  options.threads = 3;
  options.progress = [&](std::uint64_t done, std::uint64_t total) {
    progress.emplace_back(done, total);
  };
  fs::path out = root_ / "out";
  ExtractReport r = extract(zip, out, options);
  EXPECT_EQ(r.files, 4u);
  EXPECT_EQ(r.symlinks, 2u);
  EXPECT_EQ(r.directories, 3u);  // pkg, pkg/data, pkg/bin
  EXPECT_EQ(r.bytes, big.size() + 9 + 10 + 3);
  EXPECT_EQ(slurp(out / "pkg/a.py"), "print(1)\n");
  EXPECT_EQ(slurp(out / "pkg/data/big.bin"),
            std::string(big.begin(), big.end()));
  EXPECT_EQ(fs::read_symlink(out / "pkg/link"), "a.py");
  EXPECT_EQ(fs::read_symlink(out / "pkg/bin/up"), "../data");
  struct stat st;
  ASSERT_EQ(::stat((out / "pkg/bin/tool").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0755u);  // setuid dropped
  ASSERT_EQ(::stat((out / "pkg/data/big.bin").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
  EXPECT_EQ(st.st_mtime, 1735732800);
  ASSERT_EQ(::stat((out / "pkg/dos.txt").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0644u);
  ASSERT_EQ(::stat((out / "pkg").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0750u);
  ASSERT_FALSE(progress.empty());
  EXPECT_EQ(progress.back().first, progress.back().second);
  EXPECT_EQ(progress.back().second, r.bytes);
  expect_only("out");  // no temporary directory left behind
}

// A 01777 (or 0777) directory would lose its sticky bit and stay writable by
// every user: the world-write bit is dropped instead.
TEST_F(Extract, DirectoriesNeverWorldWritable) {
  ZipReader zip =
      zip_of({dir("t/", 041777), dir("w/", 040777), file("t/f", "x", 0100666)});
  extract(zip, root_ / "out");
  struct stat st;
  ASSERT_EQ(::stat((root_ / "out/t").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0775u);
  ASSERT_EQ(::stat((root_ / "out/w").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0775u);
}

TEST_F(Extract, DefaultModesWithoutKeepModes) {
  ZipReader zip = zip_of({file("x", "1", 0100600), file("y", "2", 0100700)});
  ExtractOptions options;
  options.keep_modes = false;
  extract(zip, root_ / "out", options);
  struct stat st;
  ASSERT_EQ(::stat((root_ / "out/x").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0644u);
  ASSERT_EQ(::stat((root_ / "out/y").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0755u);
}

TEST_F(Extract, SelectWritesOnlyTheChosenFiles) {
  // repair's ELF members go through this path (O_NOFOLLOW walks, O_EXCL
  // files, staged then renamed) instead of a second, unhardened extractor.
  ZipReader zip =
      zip_of({dir("pkg/"), file("pkg/a/lib.so", "ELF"), file("pkg/b.py", "py"),
              link("pkg/l", "b.py"), dir("pkg/empty/")});
  ExtractOptions options;
  options.select = [](const ZipEntry& e) { return e.name == "pkg/a/lib.so"; };
  ExtractReport r = extract(zip, root_ / "out", options);
  EXPECT_EQ(r.files, 1u);
  std::ifstream in(root_ / "out/pkg/a/lib.so");
  std::string text((std::istreambuf_iterator<char>(in)), {});
  EXPECT_EQ(text, "ELF");
  EXPECT_FALSE(fs::exists(root_ / "out/pkg/b.py"));
  EXPECT_FALSE(fs::exists(fs::symlink_status(root_ / "out/pkg/l")));
  EXPECT_FALSE(fs::exists(root_ / "out/pkg/empty"));
  expect_only("out");
}

TEST_F(Extract, SelectStillChecksEveryName) {
  // A hostile name among the members left out still refuses the archive.
  ZipReader zip = zip_of({file("ok.so", "x"), file("../evil", "y")});
  ExtractOptions options;
  options.select = [](const ZipEntry& e) { return e.name == "ok.so"; };
  EXPECT_THROW(extract(zip, root_ / "out", options), Error);
  EXPECT_FALSE(fs::exists(root_ / "out"));
}

TEST_F(Extract, TargetMustBeAbsentOrEmpty) {
  ZipReader zip = zip_of({file("new", "archive")});
  fs::path out = root_ / "out";
  fs::create_directories(out);
  extract(zip, out);  // empty: fine
  EXPECT_EQ(slurp(out / "new"), "archive");
  try {
    extract(zip, out);
    ADD_FAILURE() << "non-empty target accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::usage);
    EXPECT_NE(std::string(e.what()).find("not empty"), std::string::npos);
  }
  std::ofstream(out / "old") << "old";
  ExtractOptions options;
  options.overwrite = true;
  extract(zip, out, options);
  EXPECT_FALSE(fs::exists(out / "old"));  // replaced as a whole
  EXPECT_EQ(slurp(out / "new"), "archive");
  expect_only("out");
}

TEST_F(Extract, HostileArchiveCreatesNothing) {
  ZipReader zip = zip_of({file("ok", "1"), file("../escape", "2")});
  fs::path out = root_ / "out";
  EXPECT_THROW(extract(zip, out), Error);
  EXPECT_FALSE(fs::exists(out));
  EXPECT_FALSE(fs::exists(root_ / "escape"));
  EXPECT_TRUE(fs::is_empty(root_));
}

TEST_F(Extract, CorruptMemberLeavesTargetUntouched) {
  Member bad = file("b/bad", std::string(100000, 'q'));
  bad.crc = 1;
  ZipReader zip = zip_of({file("a/good", "1"), bad});
  fs::path out = root_ / "out";
  try {
    extract(zip, out);
    ADD_FAILURE() << "corrupt member extracted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("b/bad: CRC-32 mismatch"),
              std::string::npos)
        << e.what();
  }
  EXPECT_TRUE(fs::is_empty(root_));
}

TEST_F(Extract, PreExistingSymlinkInTargetDoesNotRedirect) {
  fs::path outside = root_ / "outside";
  fs::create_directories(outside);
  fs::path out = root_ / "out";
  fs::create_directories(out);
  fs::create_directory_symlink(outside, out / "lib");
  ZipReader zip = zip_of({file("lib/payload.so", "payload")});
  ExtractOptions options;
  options.overwrite = true;
  extract(zip, out, options);
  EXPECT_TRUE(fs::is_empty(outside));
  EXPECT_FALSE(fs::is_symlink(out / "lib"));
  EXPECT_EQ(slurp(out / "lib/payload.so"), "payload");
}

TEST_F(Extract, TargetThatIsASymlinkIsRefused) {
  fs::create_directories(root_ / "real");
  fs::create_directory_symlink(root_ / "real", root_ / "out");
  ZipReader zip = zip_of({file("x", "1")});
  EXPECT_THROW(extract(zip, root_ / "out"), Error);
  EXPECT_TRUE(fs::is_empty(root_ / "real"));
}

// ---------------------------------------------------------------- digests

std::size_t index_of(const ZipReader& zip, const std::string& name) {
  return zip.find(name) - zip.entries().data();
}

TEST_F(Extract, DigestsAreSha256OfTheWrittenFiles) {
  const std::string big(3 << 20, 'z');  // several inflate pieces
  ZipReader zip = zip_of({dir("d/"), file("d/a", "alpha"), file("d/big", big),
                          file("empty", ""), link("d/l", "a")});
  fs::path out = root_ / "out";
  ExtractOptions options;
  options.digests = true;
  ExtractReport report = extract(zip, out, options);
  ASSERT_EQ(report.digests.size(), zip.entries().size());
  for (const char* name : {"d/a", "d/big", "empty"}) {
    const MemberDigest& d = report.digests[index_of(zip, name)];
    libpkg::u64 size = 0;
    EXPECT_TRUE(d.present) << name;
    EXPECT_TRUE(d.error.empty()) << name;
    EXPECT_EQ(d.sha256, Sha256::of_file(out / name, &size)) << name;
    EXPECT_EQ(d.size, size) << name;
  }
  EXPECT_EQ(report.digests[index_of(zip, "d/big")].size, big.size());
  // Directories and symlinks are not file content.
  EXPECT_FALSE(report.digests[index_of(zip, "d/")].present);
  EXPECT_FALSE(report.digests[index_of(zip, "d/l")].present);
  // Without the option, nothing is hashed.
  options.overwrite = true;
  options.digests = false;
  EXPECT_TRUE(extract(zip, out, options).digests.empty());
}

TEST_F(Extract, CorruptMemberWithDigestsIsRecordedThenThrown) {
  Member bad = file("b/bad", std::string(100000, 'q'));
  bad.crc = 1;
  ZipReader zip = zip_of({file("a/good", "1"), bad, file("c/good", "3")});
  fs::path out = root_ / "out";
  ExtractOptions options;
  options.digests = true;
  options.threads = 1;  // the bad member does not stop the ones after it
  bool hook_ran = false;
  try {
    extract(zip, out, options,
            [&](const ExtractReport& report, const fs::path& staged) {
              hook_ran = true;
              const MemberDigest& b = report.digests[index_of(zip, "b/bad")];
              EXPECT_FALSE(b.present);
              EXPECT_NE(b.error.find("CRC-32 mismatch"), std::string::npos)
                  << b.error;
              EXPECT_TRUE(report.digests[index_of(zip, "a/good")].present);
              EXPECT_TRUE(report.digests[index_of(zip, "c/good")].present);
              EXPECT_EQ(slurp(staged / "c/good"), "3");
            });
    ADD_FAILURE() << "corrupt member extracted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::format);
    EXPECT_NE(std::string(e.what()).find("b/bad: CRC-32 mismatch"),
              std::string::npos)
        << e.what();
  }
  EXPECT_TRUE(hook_ran);
  EXPECT_TRUE(fs::is_empty(root_));
}

TEST_F(Extract, BeforeInstallThatThrowsLeavesTargetUntouched) {
  ZipReader zip = zip_of({file("x", "new")});
  fs::path out = root_ / "out";
  auto refuse = [](const ExtractReport&, const fs::path& staged) {
    EXPECT_EQ(slurp(staged / "x"), "new");
    throw Error(libpkg::Errc::format, "t", "refused");
  };
  EXPECT_THROW(extract(zip, out, {}, refuse), Error);
  EXPECT_TRUE(fs::is_empty(root_));
  // An existing tree being replaced stays as it was.
  fs::create_directories(out);
  std::ofstream(out / "old") << "old";
  ExtractOptions options;
  options.overwrite = true;
  EXPECT_THROW(extract(zip, out, options, refuse), Error);
  expect_only("out");
  EXPECT_EQ(slurp(out / "old"), "old");
  EXPECT_FALSE(fs::exists(out / "x"));
}

}  // namespace
