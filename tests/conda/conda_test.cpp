// SPDX-License-Identifier: BSD-3-Clause
// conda library unit tests: text/binary classification, prefix search,
// metadata parsing and defaults, info/ rendering and parsing, softlink
// resolution, pack -> verify -> extract -> transmute round trips.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "../base/temp_dir.hpp"
#include "conda/tree.hpp"
#include "libpkg/base/error.hpp"
#include "libpkg/conda/info.hpp"
#include "libpkg/conda/package.hpp"
#include "libpkg/conda/prefix.hpp"

namespace libpkg::conda {
namespace {

namespace fs = std::filesystem;
using libpkg::testing::TempDir;

std::span<const u8> bytes(std::string_view s) {
  return {reinterpret_cast<const u8*>(s.data()), s.size()};
}

void put(const fs::path& p, std::string_view text, unsigned mode = 0644) {
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary)
      .write(text.data(), static_cast<std::streamsize>(text.size()));
  fs::permissions(p, static_cast<fs::perms>(mode));
}

std::string read_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

TEST(CondaIsText, Utf8Rules) {
  EXPECT_TRUE(is_text(bytes("")));
  EXPECT_TRUE(is_text(bytes("plain ascii\n")));
  EXPECT_TRUE(is_text(bytes("\xEF\xBB\xBFwith BOM")));
  EXPECT_TRUE(is_text(bytes("caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80")));
  EXPECT_FALSE(is_text(bytes(std::string_view("nul\0inside", 10))));
  EXPECT_FALSE(is_text(bytes("\xC0\xAF")));          // overlong
  EXPECT_FALSE(is_text(bytes("\xED\xA0\x80")));      // surrogate
  EXPECT_FALSE(is_text(bytes("\xF4\x90\x80\x80")));  // > U+10FFFF
  EXPECT_FALSE(is_text(bytes("cut \xE2\x82")));      // truncated
  // Control characters are still text: the rule is UTF-8 without NUL.
  EXPECT_TRUE(
      is_text(bytes("\x7F"
                    "ELF\x02\x01\x01")));
  EXPECT_FALSE(
      is_text(bytes("\x7F"
                    "ELF\x02\x01\x01\xFF")));
}

TEST(CondaScanContent, FindsPlaceholder) {
  FileScan s = scan_content(bytes("#!/opt/prefix/bin/python\n"), "/opt/prefix");
  EXPECT_TRUE(s.has_prefix);
  EXPECT_EQ(s.mode, FileMode::text);
  EXPECT_EQ(s.size, 25u);
  EXPECT_EQ(Sha256::hex(s.sha256),
            Sha256::hex(Sha256::of(bytes("#!/opt/prefix/bin/python\n"))));
  FileScan b = scan_content(
      bytes(std::string_view("\0\0/opt/prefix/lib\0", 18)), "/opt/prefix");
  EXPECT_TRUE(b.has_prefix);
  EXPECT_EQ(b.mode, FileMode::binary);
  EXPECT_FALSE(scan_content(bytes("/opt/prefi"), "/opt/prefix").has_prefix);
  EXPECT_FALSE(scan_content(bytes("/opt/prefix"), "").has_prefix);
}

// Every way of cutting the input into pieces gives the whole-buffer answer.
TEST(CondaContentScanner, PiecesMatchWholeBuffer) {
  const std::string prefix = "/opt/prefix";
  const std::vector<std::string> inputs = {
      "caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80 at /opt/prefix/lib end",
      "\xEF\xBB\xBF/opt/prefix",
      std::string("bin\0ary /opt/prefix\0", 21),
      "cut at the end \xE2\x82",
      "bad \xF0\x28\x8C\x28 seq",
      "/opt/prefi /opt/prefiX no match \xC3\xA9",
      "",
  };
  for (const std::string& in : inputs) {
    FileScan whole = scan_content(bytes(in), prefix);
    for (std::size_t piece = 1; piece <= in.size() + 1; ++piece) {
      ContentScanner scanner(prefix);
      for (std::size_t off = 0; off < in.size(); off += piece) {
        scanner.update(bytes(std::string_view(in).substr(off, piece)));
      }
      FileScan s = scanner.finish();
      EXPECT_EQ(s.mode, whole.mode) << in << " piece " << piece;
      EXPECT_EQ(s.has_prefix, whole.has_prefix) << in << " piece " << piece;
      EXPECT_EQ(s.size, whole.size);
      EXPECT_EQ(s.sha256, whole.sha256);
    }
  }
  EXPECT_TRUE(scan_content(bytes(inputs[0]), prefix).has_prefix);
  EXPECT_EQ(scan_content(bytes(inputs[0]), prefix).mode, FileMode::text);
  EXPECT_EQ(scan_content(bytes(inputs[3]), prefix).mode, FileMode::binary);
  EXPECT_FALSE(scan_content(bytes(inputs[5]), prefix).has_prefix);
}

TEST(CondaMeta, ParseDefaultsAndChecks) {
  CondaMetadata m = parse_metadata_json(
      R"({"name":"foo","version":"1.2","build_number":3,
          "depends":["bar >=1"],"license":"MIT","summary":"s"})",
      "meta.json");
  EXPECT_EQ(m.depends, std::vector<std::string>{"bar >=1"});
  CondaMetadata full = complete_metadata(m);
  EXPECT_EQ(full.build, "3");
  EXPECT_EQ(package_stem(full), "foo-1.2-3");
  EXPECT_EQ(full.subdir, host_platform().subdir);
  EXPECT_THROW(parse_metadata_json(R"({"nmae":"x"})", "m"), Error);
  EXPECT_THROW(parse_metadata_json(R"({"build_number":-1})", "m"), Error);
  EXPECT_THROW(parse_metadata_json("[1]", "m"), Error);
  m.version = "1-2";
  EXPECT_THROW(complete_metadata(m), Error);
  m.version = "1.2";
  m.name = "Foo";
  EXPECT_THROW(complete_metadata(m), Error);
  m.name = "foo";
  m.noarch = "generic";
  CondaMetadata na = complete_metadata(m);
  EXPECT_EQ(na.subdir, "noarch");
  auto index = nlohmann::json::parse(render_index_json(na, 1000));
  EXPECT_TRUE(index["arch"].is_null());
  EXPECT_EQ(index["noarch"], "generic");
  EXPECT_EQ(index["timestamp"], 1000);
}

// Non-empty text fields of the overlay win; empty ones, build_number and
// the lists stay the base's.
TEST(CondaMeta, OverlayTextFields) {
  CondaMetadata base = parse_metadata_json(
      R"({"name":"a","version":"1","license":"MIT","summary":"s",)"
      R"("build_number":3,"depends":["x"],"noarch":"python"})",
      "base");
  CondaMetadata over;
  over.version = "2";
  over.home = "https://example.org";
  over.noarch = "generic";
  over.build_number = 9;
  over.depends = {"y"};
  overlay_text_fields(base, over);
  EXPECT_EQ(base.name, "a");
  EXPECT_EQ(base.version, "2");
  EXPECT_EQ(base.license, "MIT");
  EXPECT_EQ(base.summary, "s");
  EXPECT_EQ(base.home, "https://example.org");
  EXPECT_EQ(base.noarch, "generic");
  EXPECT_EQ(base.build_number, 3u);
  EXPECT_EQ(base.depends, std::vector<std::string>{"x"});
}

TEST(CondaPathsJson, RoundTripAndHasPrefix) {
  std::vector<PathRecord> records(3);
  records[0].path = "bin/x";
  records[0].sha256 = std::string(64, 'a');
  records[0].size = 5;
  records[0].prefix_placeholder = "/p";
  records[0].file_mode = FileMode::text;
  records[1].path = "lib/l";
  records[1].type = PathType::softlink;
  records[1].sha256 = std::string(64, 'b');
  records[2].path = "share/empty";
  records[2].type = PathType::directory;
  std::string text = render_paths_json(records);
  std::vector<PathRecord> back = parse_paths_json(text, "paths.json");
  ASSERT_EQ(back.size(), 3u);
  EXPECT_EQ(back[0].prefix_placeholder, "/p");
  EXPECT_EQ(back[0].file_mode, FileMode::text);
  EXPECT_EQ(back[1].type, PathType::softlink);
  EXPECT_EQ(back[2].type, PathType::directory);
  EXPECT_EQ(render_has_prefix(records), "/p text bin/x\n");
  EXPECT_EQ(render_files(records), "bin/x\nlib/l\nshare/empty\n");
  EXPECT_THROW(parse_paths_json(R"({"paths":[],"paths_version":2})", "p"),
               Error);
  EXPECT_THROW(
      parse_paths_json(
          R"({"paths":[{"_path":"a","path_type":"hardlink","sha256":"zz"}],"paths_version":1})",
          "p"),
      Error);
}

TEST(CondaResolveSoftlink, LexicalChains) {
  std::map<std::string, detail::MemberKind> members = {
      {"lib/libf.so", {archive::TarKind::file, ""}},
      {"lib/libf.so.1", {archive::TarKind::symlink, "libf.so"}},
      {"lib/libf.so.1.0", {archive::TarKind::symlink, "libf.so.1"}},
      {"bin/up", {archive::TarKind::symlink, "../lib/libf.so"}},
      {"loop", {archive::TarKind::symlink, "loop"}},
  };
  auto kind_of =
      [&](const std::string& p) -> std::optional<detail::MemberKind> {
    auto it = members.find(p);
    if (it == members.end()) return std::nullopt;
    return it->second;
  };
  EXPECT_EQ(detail::resolve_softlink("lib/libf.so.1.0", "libf.so.1", kind_of),
            "lib/libf.so");
  EXPECT_EQ(detail::resolve_softlink("bin/up", "../lib/libf.so", kind_of),
            "lib/libf.so");
  EXPECT_EQ(detail::resolve_softlink("x", "../../etc/passwd", kind_of),
            std::nullopt);
  EXPECT_EQ(detail::resolve_softlink("x", "/etc/passwd", kind_of),
            std::nullopt);
  EXPECT_EQ(detail::resolve_softlink("loop", "loop", kind_of), std::nullopt);
}

class CondaPackage : public ::testing::Test {
 protected:
  void SetUp() override {
    prefix_ = dir_ / "prefix";
    put(prefix_ / "bin/tool", "#!/bin/sh\nexec " + prefix_.string() + "/lib\n",
        0755);
    put(prefix_ / "lib/data.bin", std::string("\x7f\0\x01 ", 4) +
                                      prefix_.string() + std::string("\0", 1));
    put(prefix_ / "share/doc.txt", "no prefix here\n");
    fs::create_directories(prefix_ / "share/empty");
    fs::create_symlink("data.bin", prefix_ / "lib/link.bin");
    put(prefix_ / "info/licenses/LICENSE", "MIT\n");
    meta_.name = "pkg";
    meta_.version = "1.0";
    meta_.depends = {"libc"};
    options_.formats = {PackageFormat::conda, PackageFormat::tar_bz2};
    options_.timestamp_ms = 1700000000123;
    options_.placeholder = prefix_.string();
    options_.out_dir = dir_ / "out";
    options_.threads = 2;
  }
  TempDir dir_;
  fs::path prefix_;
  CondaMetadata meta_;
  PackOptions options_;
};

TEST_F(CondaPackage, PackVerifyExtract) {
  PackResult r = pack(prefix_, meta_, options_);
  ASSERT_EQ(r.outputs.size(), 2u);
  EXPECT_EQ(r.outputs[0].filename(), "pkg-1.0-0.conda");
  EXPECT_EQ(r.outputs[1].filename(), "pkg-1.0-0.tar.bz2");
  ASSERT_EQ(r.paths.size(), 5u);
  EXPECT_EQ(r.paths[0].path, "bin/tool");
  EXPECT_EQ(r.paths[0].file_mode, FileMode::text);
  EXPECT_EQ(r.paths[1].path, "lib/data.bin");
  EXPECT_EQ(r.paths[1].file_mode, FileMode::binary);
  EXPECT_EQ(r.paths[2].type, PathType::softlink);
  EXPECT_EQ(r.paths[2].sha256, r.paths[1].sha256);
  EXPECT_FALSE(r.paths[3].prefix_placeholder);
  EXPECT_EQ(r.paths[4].type, PathType::directory);
  for (const fs::path& out : r.outputs) {
    std::vector<Finding> findings = verify(out);
    EXPECT_TRUE(findings.empty()) << out << ": " << findings.front().where
                                  << ": " << findings.front().message;
    fs::path dest = dir_ / ("x-" + out.filename().string());
    extract(out, dest);
    EXPECT_EQ(read_text(dest / "bin/tool"), read_text(prefix_ / "bin/tool"));
    EXPECT_EQ(read_text(dest / "info/licenses/LICENSE"), "MIT\n");
    EXPECT_EQ(fs::read_symlink(dest / "lib/link.bin"), "data.bin");
    EXPECT_TRUE(fs::is_directory(dest / "share/empty"));
    struct stat st {};
    ASSERT_EQ(::stat((dest / "bin/tool").c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0755u);
    std::string has_prefix = read_text(dest / "info/has_prefix");
    EXPECT_NE(has_prefix.find(" text bin/tool\n"), std::string::npos);
    EXPECT_NE(has_prefix.find(" binary lib/data.bin\n"), std::string::npos);
  }
  // Transmuting .conda -> .tar.bz2 gives the bytes pack wrote directly.
  fs::path t = transmute(r.outputs[0], dir_ / "t", PackageFormat::tar_bz2);
  EXPECT_EQ(read_text(t), read_text(r.outputs[1]));
  fs::path back = transmute(t, dir_ / "t2", PackageFormat::conda);
  EXPECT_EQ(read_text(back), read_text(r.outputs[0]));
}

TEST_F(CondaPackage, Determinism) {
  PackResult a = pack(prefix_, meta_, options_);
  std::string conda = read_text(a.outputs[0]);
  std::string bz2 = read_text(a.outputs[1]);
  options_.threads = 1;
  options_.out_dir = dir_ / "out1";
  PackResult b = pack(prefix_, meta_, options_);
  EXPECT_EQ(read_text(b.outputs[0]), conda);
  EXPECT_EQ(read_text(b.outputs[1]), bz2);
}

TEST_F(CondaPackage, Errors) {
  put(prefix_ / "info/index.json", "{}");
  EXPECT_THROW(pack(prefix_, meta_, options_), Error);
  fs::remove(prefix_ / "info/index.json");
  EXPECT_THROW(pack(dir_ / "missing", meta_, options_), Error);
  EXPECT_THROW(format_of("x.zip"), Error);
  EXPECT_EQ(stem_of("a/b-1-0.tar.bz2"), "b-1-0");
}

TEST_F(CondaPackage, VerifyFindsRenamedPackage) {
  options_.formats = {PackageFormat::tar_bz2};
  PackResult r = pack(prefix_, meta_, options_);
  fs::path renamed = dir_ / "out/pkg-2.0-0.tar.bz2";
  fs::copy_file(r.outputs[0], renamed);
  std::vector<Finding> findings = verify(renamed);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].where, "info/index.json");
}

}  // namespace
}  // namespace libpkg::conda
