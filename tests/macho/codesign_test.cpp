// SPDX-License-Identifier: BSD-3-Clause
// Code signatures on Mach-O files that ld64.lld-14 links at test time (no
// SDK: -nostdlib, undefined symbols looked up at run time). lld's own
// signature is the oracle for the byte-for-byte check; the page checks
// compare against hashes computed here independently of the code under test.
#include "libpkg/macho/codesign.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <iterator>

#include "libpkg/base/digest.hpp"
#include "libpkg/base/error.hpp"
#include "libpkg/base/scratch_dir.hpp"
#include "libpkg/base/subprocess.hpp"

namespace libpkg::macho {
namespace {

namespace fs = std::filesystem;

std::vector<u8> read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

class CodesignTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::ofstream(dir_.path() / "a.c")
        << "int f(int x) { return x * 3 + 1; }\n"
           "static const char big[20000] = {1};\n"
           "int g(int i) { return big[i]; }\n";
    std::ofstream(dir_.path() / "m.c") << "int main(void) { return 0; }\n";
  }

  // Links `src` with clang-14/ld64.lld-14 into `out` (-shared for dylibs).
  fs::path link(const std::string& src, const std::string& out,
                std::vector<std::string> extra, bool shared = true,
                const std::string& target = "arm64-apple-macos11") {
    std::vector<std::string> argv = {"clang-14",
                                     "-target",
                                     target,
                                     "-fuse-ld=lld",
                                     "-nostdlib",
                                     "-Wl,-undefined,dynamic_lookup",
                                     (dir_.path() / src).string(),
                                     "-o",
                                     (dir_.path() / out).string()};
    if (shared) argv.push_back("-shared");
    argv.insert(argv.end(), extra.begin(), extra.end());
    RunResult r = run_process(argv);
    EXPECT_TRUE(r.ok()) << r.describe() << "\n" << r.output;
    return dir_.path() / out;
  }

  ScratchDir dir_ = ScratchDir::in_temp("codesign-test-");
};

TEST_F(CodesignTest, ParsesLldSignature) {
  auto bytes = read_file(link("a.c", "liba.dylib", {}));
  ByteView slice(bytes, "liba.dylib");
  SliceLayout layout = find_slice_layout(slice);
  ASSERT_TRUE(layout.signed_());
  EXPECT_EQ(layout.code_limit, layout.sig_offset);
  EXPECT_EQ(layout.sig_offset + layout.sig_size, bytes.size());
  Signature sig = parse_signature(
      slice.slice(layout.sig_offset, layout.sig_size, "signature"));
  ASSERT_EQ(sig.code_directories.size(), 1u);
  const CodeDirectory& cd = sig.code_directories[0];
  EXPECT_EQ(cd.version, kVersionExecSeg);
  EXPECT_EQ(cd.flags, kFlagAdhoc | kFlagLinkerSigned);
  EXPECT_EQ(cd.hash_type, kHashSha256);
  EXPECT_EQ(cd.hash_size, 32);
  EXPECT_EQ(cd.page_size(), 4096u);
  EXPECT_EQ(cd.identifier, "liba.dylib");
  EXPECT_EQ(cd.code_limit, layout.code_limit);
  EXPECT_EQ(cd.n_code_slots, (layout.code_limit + 4095) / 4096);
  EXPECT_EQ(cd.exec_seg_base, layout.text_fileoff);
  EXPECT_EQ(cd.exec_seg_limit, layout.text_filesize);
  EXPECT_EQ(cd.exec_seg_flags, 0u);
  EXPECT_FALSE(sig.has_cms());
  // Page 0 checked against a hash computed here.
  auto h = digest_of(DigestKind::sha256, std::span(bytes).first(4096));
  const u8* stored =
      bytes.data() + layout.sig_offset + cd.offset + cd.hash_offset;
  EXPECT_TRUE(std::equal(h.begin(), h.end(), stored));
}

TEST_F(CodesignTest, VerifiesLldSignatureAndNamesTheChangedPage) {
  auto bytes = read_file(link("a.c", "liba.dylib", {}));
  SliceLayout layout = find_slice_layout(ByteView(bytes, "liba.dylib"));
  EXPECT_TRUE(verify_signature(ByteView(bytes, "liba.dylib"), layout).ok());
  ASSERT_GT(layout.text_filesize, 0x1000u);
  bytes[0x1000 + 17] ^= 0xff;  // page 1, inside __TEXT
  VerifyReport r = verify_signature(ByteView(bytes, "liba.dylib"), layout);
  ASSERT_EQ(r.problems.size(), 1u);
  EXPECT_EQ(r.problems[0].slot, 1);
  EXPECT_NE(r.problems[0].what.find("page 1 (0x1000-0x2000)"),
            std::string::npos)
      << r.problems[0].what;
}

// ld64.lld's signature is reproduced byte for byte from the slice with the
// signature zeroed, for a dylib and an executable (main-binary flag), with
// the output named by a path (identifier = file name only).
TEST_F(CodesignTest, AdhocMatchesLldByteForByte) {
  for (auto [src, out, shared] :
       {std::tuple{"a.c", "liba.dylib", true}, {"m.c", "prog", false}}) {
    auto bytes = read_file(link(src, out, {}, shared));
    ByteView slice(bytes, out);
    SliceLayout layout = find_slice_layout(slice);
    std::vector<u8> lld(bytes.begin() + layout.sig_offset, bytes.end());
    std::fill(bytes.begin() + layout.sig_offset, bytes.end(), 0);
    EXPECT_EQ(layout.is_execute, !shared);
    EXPECT_EQ(adhoc_signature_size(layout.code_limit, out), lld.size());
    auto ours = build_adhoc_signature(bytes, layout, out);
    EXPECT_EQ(ours, lld) << out;
  }
}

TEST_F(CodesignTest, SignsAnUnsignedDylib) {
  auto bytes = read_file(link("a.c", "libu.dylib", {"-Wl,-no_adhoc_codesign"}));
  ASSERT_FALSE(find_slice_layout(ByteView(bytes, "libu.dylib")).signed_());
  sign_slice(bytes, "libu.dylib", "libu.dylib");
  SliceLayout again = find_slice_layout(ByteView(bytes, "libu.dylib"));
  EXPECT_EQ(again.sig_offset % 16, 0u);
  EXPECT_EQ(again.sig_offset + again.sig_size, bytes.size());
  EXPECT_EQ(again.sig_size,
            adhoc_signature_size(again.code_limit, "libu.dylib"));
  EXPECT_TRUE(verify_signature(ByteView(bytes, "libu.dylib"), again).ok());
}

TEST_F(CodesignTest, ResignRehashesOnlyTheChangedPage) {
  auto bytes = read_file(link("a.c", "liba.dylib", {}));
  SliceLayout layout = find_slice_layout(ByteView(bytes, "liba.dylib"));
  std::vector<u8> old_sig(bytes.begin() + layout.sig_offset, bytes.end());
  ByteView old_view(old_sig, "liba.dylib");
  const CodeDirectory cd = parse_signature(old_view).code_directories[0];
  ASSERT_GE(cd.n_code_slots, 3u);
  bytes[0x2000 + 5] ^= 0x55;  // one byte of page 2
  // An unchanged range list rehashes nothing: the stale hash stays.
  EXPECT_EQ(resign(bytes, layout, old_view, {}), old_sig);
  const ByteRange changed{0x2000 + 5, 1};
  EXPECT_EQ(resign_size(old_view, layout.code_limit), old_sig.size());
  auto sig = resign(bytes, layout, old_view, {&changed, 1});
  ASSERT_EQ(sig.size(), old_sig.size());  // in place
  u64 h0 = cd.offset + cd.hash_offset;
  for (u64 i = 0; i < cd.n_code_slots; ++i) {
    bool same =
        std::equal(sig.begin() + h0 + i * 32, sig.begin() + h0 + i * 32 + 32,
                   old_sig.begin() + h0 + i * 32);
    EXPECT_EQ(same, i != 2) << "page " << i;
  }
  EXPECT_TRUE(std::equal(sig.begin(), sig.begin() + h0, old_sig.begin()));
  std::copy(sig.begin(), sig.end(), bytes.begin() + layout.sig_offset);
  EXPECT_TRUE(verify_signature(ByteView(bytes, "liba.dylib"), layout).ok());
}

// The code limit grows (data appended before the signature): the
// CodeDirectory grows by the new pages' hashes and keeps its fields.
TEST_F(CodesignTest, ResignGrowsWithTheCodeLimit) {
  auto bytes = read_file(link("m.c", "prog", {}, false));
  SliceLayout layout = find_slice_layout(ByteView(bytes, "prog"));
  std::vector<u8> old_sig(bytes.begin() + layout.sig_offset, bytes.end());
  ByteView old_view(old_sig, "prog");
  SliceLayout grown = layout;
  grown.code_limit += 0x3000;
  std::vector<u8> slice(bytes.begin(), bytes.begin() + layout.sig_offset);
  slice.resize(grown.code_limit, 0x5a);
  u64 size = resign_size(old_view, grown.code_limit);
  EXPECT_EQ(size, old_sig.size() + 3 * 32);
  auto sig = resign(slice, grown, old_view, {});
  ASSERT_EQ(sig.size(), size);
  Signature parsed = parse_signature(ByteView(sig, "prog"));
  const CodeDirectory& cd = parsed.code_directories[0];
  EXPECT_EQ(cd.identifier, "prog");
  EXPECT_EQ(cd.exec_seg_flags, kExecSegMainBinary);
  EXPECT_EQ(cd.flags, kFlagAdhoc | kFlagLinkerSigned);
  EXPECT_EQ(cd.code_limit, grown.code_limit);
  slice.insert(slice.end(), sig.begin(), sig.end());
  grown.sig_offset = grown.code_limit;
  grown.sig_size = sig.size();
  EXPECT_TRUE(verify_signature(ByteView(slice, "prog"), grown).ok());
}

TEST_F(CodesignTest, PlaceSignatureRefusesASignatureNotAtTheEnd) {
  auto bytes = read_file(link("a.c", "liba.dylib", {}));
  bytes.resize(bytes.size() + 16, 0);  // data after __LINKEDIT
  EXPECT_THROW(place_signature(bytes, "liba.dylib", 400), Error);
}

// Malformed signatures: each throws a format error naming the problem.
TEST_F(CodesignTest, MalformedSignatures) {
  auto bytes = read_file(link("a.c", "liba.dylib", {}));
  SliceLayout layout = find_slice_layout(ByteView(bytes, "liba.dylib"));
  const std::vector<u8> sig(bytes.begin() + layout.sig_offset, bytes.end());
  auto expect_error = [&](std::vector<u8> s, const std::string& needle) {
    try {
      parse_signature(ByteView(s, "x"));
      ADD_FAILURE() << "no error for " << needle;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Errc::format);
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos)
          << e.what();
    }
  };
  auto put32 = [](std::vector<u8>& s, size_t at, u32 v) {
    for (int i = 0; i < 4; ++i) s[at + i] = static_cast<u8>(v >> (24 - 8 * i));
  };
  std::vector<u8> s = sig;
  s[0] = 0;
  expect_error(s, "bad SuperBlob magic");
  expect_error(std::vector<u8>(sig.begin(), sig.begin() + 100),
               "SuperBlob length");
  s = sig;
  put32(s, 8, 1000);
  expect_error(s, "SuperBlob count 1000");
  s = sig;
  put32(s, 24 + 28, 1000);  // nCodeSlots
  expect_error(s, "CodeDirectory 0: hashOffset 0x68 + nCodeSlots*hashSize");
  s = sig;
  put32(s, 24 + 20, 0x10000);  // identOffset
  expect_error(s, "identOffset 0x10000");
  s = sig;
  put32(s, 24 + 4, 40);  // CD length
  expect_error(s, "shorter than its header");
  s = sig;
  put32(s, 24 + 32, 0x100000);  // codeLimit vs nCodeSlots
  expect_error(s, "does not cover codeLimit");
}

}  // namespace
}  // namespace libpkg::macho
