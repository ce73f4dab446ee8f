// SPDX-License-Identifier: BSD-3-Clause
// Code signatures on Mach-O files that ld64.lld-14 links at test time (no
// SDK: -nostdlib, undefined symbols looked up at run time). lld's own
// signature is the oracle for the byte-for-byte check; the page checks
// compare against hashes computed here independently of the code under test.
#include "libpkg/macho/codesign.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <random>

#include "libpkg/base/digest.hpp"
#include "libpkg/base/error.hpp"
#include "libpkg/base/scratch_dir.hpp"
#include "libpkg/base/subprocess.hpp"
#include "libpkg/macho/editor.hpp"
#include "libpkg/macho/view.hpp"

namespace libpkg::macho {
namespace {

namespace fs = std::filesystem;

std::vector<u8> read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

// A path ctest puts in the environment (tests/CMakeLists.txt
// LIBPKG_TEST_ENV); unset means the test was not run through ctest.
std::string test_env(const char* name) {
  const char* v = std::getenv(name);
  EXPECT_NE(v, nullptr) << name << " is not set: run the test through ctest";
  return v ? v : "";
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

// SliceBytes::read is bounds-checked: a range past the slice (a code limit
// or page table that points past it) is an error, never a read.
TEST_F(CodesignTest, SliceBytesReadPastTheEndThrows) {
  std::vector<u8> bytes(100, 7);
  SpanSliceBytes in(bytes);
  EXPECT_EQ(in.read(90, 10).size(), 10u);
  EXPECT_EQ(in.read(100, 0).size(), 0u);
  for (auto [offset, size] :
       {std::pair<u64, u64>{95, 6}, {101, 0}, {0, 101}, {~u64{0}, 2}}) {
    try {
      in.read(offset, size);
      ADD_FAILURE() << "read " << offset << "+" << size << " did not throw";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Errc::format);
      EXPECT_NE(e.message().find("past the slice (0x64 bytes)"),
                std::string::npos)
          << e.message();
    }
  }
}

// verify_pages reads and checks only the pages it is given.
TEST_F(CodesignTest, VerifyPagesChecksOnlyTheSample) {
  auto bytes = read_file(link("a.c", "liba.dylib", {}));
  SliceLayout layout = find_slice_layout(ByteView(bytes, "liba.dylib"));
  std::vector<u8> sig(bytes.begin() + layout.sig_offset, bytes.end());
  ByteView sig_view(sig, "liba.dylib");
  ASSERT_GE(parse_signature(sig_view).code_directories[0].n_code_slots, 4u);
  bytes[0x2000 + 9] ^= 1;  // page 2 stale
  SpanSliceBytes in(bytes);
  const ByteRange page1{0x1000, 1}, page2{0x2fff, 1};
  EXPECT_TRUE(verify_pages(in, sig_view, {&page1, 1}).empty());
  auto problems = verify_pages(in, sig_view, {&page2, 1});
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems[0].slot, 2);
  EXPECT_EQ(problems[0].what, "page 2 (0x2000-0x3000): hash mismatch");
}

// Re-signing keeps the hashes of pages an edit does not touch; a signature
// that is already stale where the re-signer looks (the edited header page,
// the first page after it, the last page) is refused before anything is
// written, naming the page, unless signing is off. A stale page outside
// that sample is not seen (pkgtool macho verify reads every page).
TEST_F(CodesignTest, EditOfAStaleSignatureIsRefused) {
  auto lib = link("a.c", "libs.dylib", {"-Wl,-headerpad_max_install_names"});
  const auto good = read_file(lib);
  SliceLayout layout = find_slice_layout(ByteView(good, "libs.dylib"));
  ASSERT_GE(layout.code_limit, 0x5000u);
  EditOptions o;
  o.add_rpaths = {"@loader_path/x"};
  struct Case {
    u64 offset;
    const char* page;  // expected in the message; null: not detected
  };
  const u64 last = layout.code_limit - 1;
  // A byte of __text in the header page (the load commands stay intact).
  const u64 text = MachOFile::parse(ByteView(good, "libs.dylib"))
                       .slices()[0]
                       .first_content_offset() +
                   4;
  ASSERT_LT(text, 0x1000u);
  for (Case c : {Case{text, "page 0 (0x0-0x1000)"},
                 Case{0x1000 + 3, "page 1 (0x1000-0x2000)"},
                 Case{last, "hash mismatch"}, Case{0x3000 + 3, nullptr}}) {
    auto bytes = good;
    bytes[c.offset] ^= 0x40;
    auto file = MachOFile::parse(ByteView(bytes, "libs.dylib"));
    if (!c.page) {
      EXPECT_EQ(plan_edit(file, o).slices[0].signing,
                SliceReport::Signing::resigned);
      continue;
    }
    try {
      plan_edit(file, o);
      ADD_FAILURE() << "stale byte at " << c.offset << " not refused";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Errc::format);
      EXPECT_EQ(e.file(), "libs.dylib (arm64)");
      EXPECT_NE(e.message().find("does not verify before the edit"),
                std::string::npos)
          << e.message();
      EXPECT_NE(e.message().find(c.page), std::string::npos) << e.message();
      EXPECT_NE(e.message().find("--no-sign"), std::string::npos);
    }
    EditOptions no_sign = o;
    no_sign.sign = false;
    EXPECT_EQ(plan_edit(file, no_sign).slices[0].signing,
              SliceReport::Signing::stale);
  }
}

// has_operations() asks whether an install_name_tool operation is
// requested; empty() whether the options are all defaults, archs and sign
// included.
TEST(MachoEditOptions, EmptyCountsArchsAndSign) {
  EditOptions o;
  EXPECT_TRUE(o.empty());
  EXPECT_FALSE(o.has_operations());
  o.archs = {"arm64"};
  EXPECT_FALSE(o.empty());
  EXPECT_FALSE(o.has_operations());
  o.archs.clear();
  o.sign = false;
  EXPECT_FALSE(o.empty());
  EXPECT_FALSE(o.has_operations());
  o.sign = true;
  o.delete_all_rpaths = true;
  EXPECT_FALSE(o.empty());
  EXPECT_TRUE(o.has_operations());
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
  const auto good = read_file(link("a.c", "liba.dylib", {}));
  auto expect_error = [](std::vector<u8> bytes, const std::string& needle) {
    const auto before = bytes;
    try {
      place_signature(bytes, "liba.dylib", 400);
      ADD_FAILURE() << "no error for " << needle;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos)
          << e.what();
    }
    EXPECT_EQ(bytes, before);  // nothing changed on failure
  };
  auto bytes = good;
  bytes.resize(bytes.size() + 16, 0);  // data after __LINKEDIT
  expect_error(bytes, "0x10 bytes after __LINKEDIT");
  // __LINKEDIT grown past the signature: the signature is no longer last.
  bytes = good;
  const std::string seg = "__LINKEDIT";
  auto it = std::search(bytes.begin(), bytes.end(), seg.begin(), seg.end());
  ASSERT_NE(it, bytes.end());
  size_t cmd = static_cast<size_t>(it - bytes.begin()) - 8;
  ul64 filesize;
  std::memcpy(&filesize, &bytes[cmd + 48], 8);
  filesize = filesize + 16;
  std::memcpy(&bytes[cmd + 48], &filesize, 8);
  bytes.resize(bytes.size() + 16, 0);
  expect_error(bytes, "is not at the end of __LINKEDIT");
}

// A signature as codesign writes one for a re-signed file: requirements, a
// SHA-1 CodeDirectory with special slots, a SHA-256 alternate and an empty
// CMS wrapper; built here from the format description (not by the code
// under test) over lld's file, moved into place by place_signature.
namespace crafted {

void put32(std::vector<u8>& b, size_t at, u32 v) {
  for (int i = 0; i < 4; ++i) b[at + i] = static_cast<u8>(v >> (24 - 8 * i));
}
void put64(std::vector<u8>& b, size_t at, u64 v) {
  put32(b, at, static_cast<u32>(v >> 32));
  put32(b, at + 4, static_cast<u32>(v));
}

std::vector<u8> code_directory(std::span<const u8> slice, u64 limit, u8 type,
                               const std::vector<u8>& requirements,
                               const SliceLayout& layout) {
  DigestKind kind = type == kHashSha1 ? DigestKind::sha1 : DigestKind::sha256;
  u64 hs = type == kHashSha1 ? 20 : 32;
  u64 pages = (limit + 4095) / 4096;
  const std::string ident = "com.example.crafted";
  u64 hash_offset = 88 + ident.size() + 1 + 2 * hs;
  std::vector<u8> cd(hash_offset + pages * hs, 0);
  put32(cd, 0, kMagicCodeDirectory);
  put32(cd, 4, static_cast<u32>(cd.size()));
  put32(cd, 8, 0x20400);
  put32(cd, 12, kFlagAdhoc | 0x10000);  // adhoc | runtime
  put32(cd, 16, static_cast<u32>(hash_offset));
  put32(cd, 20, 88);
  put32(cd, 24, 2);
  put32(cd, 28, static_cast<u32>(pages));
  put32(cd, 32, static_cast<u32>(limit));
  cd[36] = static_cast<u8>(hs);
  cd[37] = type;
  cd[39] = 12;
  put64(cd, 64, layout.text_fileoff);
  put64(cd, 72, layout.text_filesize);
  std::copy(ident.begin(), ident.end(), cd.begin() + 88);
  auto req = digest_of(kind, requirements);
  std::copy(req.begin(), req.begin() + hs, cd.begin() + hash_offset - 2 * hs);
  for (u64 i = 0; i < pages; ++i) {
    u64 end = std::min<u64>((i + 1) * 4096, limit);
    auto h = digest_of(kind, slice.subspan(i * 4096, end - i * 4096));
    std::copy(h.begin(), h.begin() + hs, cd.begin() + hash_offset + i * hs);
  }
  return cd;
}

// Replaces the slice's signature with the crafted one; `cms` is the CMS
// wrapper's payload (empty: ad-hoc; not a real CMS message, which nothing
// here parses: only its presence matters).
void resign_with_alternates(std::vector<u8>& bytes, const std::string& name,
                            const std::vector<u8>& cms_payload = {}) {
  std::vector<u8> requirements(12, 0);
  put32(requirements, 0, kMagicRequirements);
  put32(requirements, 4, 12);
  std::vector<u8> cms(8, 0);
  put32(cms, 0, kMagicCmsWrapper);
  put32(cms, 4, static_cast<u32>(8 + cms_payload.size()));
  cms.insert(cms.end(), cms_payload.begin(), cms_payload.end());
  SliceLayout layout = find_slice_layout(ByteView(bytes, name));
  u64 limit = layout.code_limit;
  // Sizes first (the hashes do not change them), then the real hashes.
  auto size_of = [&] {
    return 12 + 4 * 8 + requirements.size() + cms.size() +
           code_directory(bytes, limit, kHashSha1, requirements, layout)
               .size() +
           code_directory(bytes, limit, kHashSha256, requirements, layout)
               .size();
  };
  Placement p = place_signature(bytes, name, size_of());
  auto cd1 = code_directory(bytes, limit, kHashSha1, requirements, p.layout);
  auto cd2 = code_directory(bytes, limit, kHashSha256, requirements, p.layout);
  std::vector<u8> sig(12 + 4 * 8, 0);
  put32(sig, 0, kMagicEmbeddedSignature);
  put32(sig, 8, 4);
  u32 types[] = {kSlotCodeDirectory, kSlotRequirements,
                 kSlotAlternateCodeDirectories, kSlotCmsSignature};
  const std::vector<u8>* blobs[] = {&cd1, &requirements, &cd2, &cms};
  for (int i = 0; i < 4; ++i) {
    put32(sig, 12 + 8 * i, types[i]);
    put32(sig, 16 + 8 * i, static_cast<u32>(sig.size()));
    sig.insert(sig.end(), blobs[i]->begin(), blobs[i]->end());
  }
  put32(sig, 4, static_cast<u32>(sig.size()));
  ASSERT_EQ(sig.size(), p.layout.sig_size);
  std::copy(sig.begin(), sig.end(), bytes.begin() + p.layout.sig_offset);
}

}  // namespace crafted

TEST_F(CodesignTest, AlternateCodeDirectoriesAndSpecialSlots) {
  auto bytes = read_file(link("a.c", "liba.dylib", {}));
  crafted::resign_with_alternates(bytes, "liba.dylib");
  ByteView slice(bytes, "liba.dylib");
  SliceLayout layout = find_slice_layout(slice);
  VerifyReport r = verify_signature(slice, layout);
  for (const auto& p : r.problems) ADD_FAILURE() << p.what;
  ASSERT_EQ(r.signature.code_directories.size(), 2u);
  EXPECT_EQ(r.signature.code_directories[0].hash_type, kHashSha1);
  EXPECT_EQ(r.signature.code_directories[1].slot,
            kSlotAlternateCodeDirectories);
  EXPECT_EQ(r.signature.code_directories[1].identifier, "com.example.crafted");
  EXPECT_EQ(r.signature.blobs.size(), 4u);
  EXPECT_FALSE(r.signature.has_cms());  // empty wrapper: ad-hoc

  // The independent verifier agrees.
  fs::path out = dir_.path() / "crafted.dylib";
  std::ofstream(out, std::ios::binary)
      .write(reinterpret_cast<const char*>(bytes.data()),
             static_cast<std::streamsize>(bytes.size()));
  RunResult py = run_process(
      {test_env("LIBPKG_PYTHON"),
       test_env("LIBPKG_SOURCE_DIR") + "/tests/tools/macho_cs_verify.py",
       out.string()});
  EXPECT_TRUE(py.ok()) << py.output;

  // A changed requirements blob fails special slot -2 of both CDs.
  auto reqs = std::find_if(r.signature.blobs.begin(), r.signature.blobs.end(),
                           [](const BlobEntry& b) { return b.type == 2; });
  std::vector<u8> broken = bytes;
  broken[layout.sig_offset + reqs->offset + 8] ^= 1;
  VerifyReport bad = verify_signature(ByteView(broken, "x"), layout);
  ASSERT_EQ(bad.problems.size(), 2u);
  EXPECT_EQ(bad.problems[0].slot, -2);
  EXPECT_EQ(bad.problems[1].cd, 1u);

  // Resign after a change of page 1 keeps every CD, its hash type and the
  // other blobs, and fixes page 1 in both.
  bytes[0x1000 + 3] ^= 0x20;
  EXPECT_EQ(verify_signature(ByteView(bytes, "x"), layout).problems.size(), 2u);
  ByteView old_sig = slice.slice(layout.sig_offset, layout.sig_size, "sig");
  std::vector<u8> old(old_sig.span().begin(), old_sig.span().end());
  const ByteRange changed{0x1000 + 3, 1};
  auto sig = resign(bytes, layout, ByteView(old, "x"), {&changed, 1});
  ASSERT_EQ(sig.size(), old.size());
  std::copy(sig.begin(), sig.end(), bytes.begin() + layout.sig_offset);
  VerifyReport after = verify_signature(ByteView(bytes, "x"), layout);
  EXPECT_TRUE(after.ok());
  ASSERT_EQ(after.signature.code_directories.size(), 2u);
  EXPECT_EQ(after.signature.code_directories[0].hash_type, kHashSha1);
  EXPECT_EQ(after.signature.code_directories[0].flags, kFlagAdhoc | 0x10000u);
  size_t differing = 0;
  for (size_t i = 0; i < sig.size(); ++i) differing += sig[i] != old[i];
  EXPECT_LE(differing, 20u + 32u);  // page 1's hash in each CD, nothing else
  EXPECT_GE(differing, 40u);
}

// A CodeDirectory claiming two pages more than its code limit holds (hash
// area, codeLimit, blob and SuperBlob lengths grown by 64 bytes, filled
// with 0xee) re-signs 64 bytes smaller: zero-padded to datasize, so the
// slice keeps its size and no stale byte of the old signature remains.
TEST_F(CodesignTest, ResignSmallerThanDatasizeIsZeroPadded) {
  auto bytes = read_file(link("a.c", "libs.dylib", {}));
  SliceLayout layout = find_slice_layout(ByteView(bytes, "libs.dylib"));
  auto get32 = [](const std::vector<u8>& b, size_t at) {
    return u32{b[at]} << 24 | u32{b[at + 1]} << 16 | u32{b[at + 2]} << 8 |
           u32{b[at + 3]};
  };
  std::vector<u8> sig(bytes.begin() + layout.sig_offset,
                      bytes.begin() + layout.sig_offset + layout.sig_size);
  u32 sb_len = get32(sig, 4), cd = get32(sig, 16);
  ASSERT_EQ(get32(sig, 8), 1u);                // lld: one CodeDirectory
  ASSERT_EQ(cd + get32(sig, cd + 4), sb_len);  // ending the SuperBlob
  sig.resize(sb_len);
  sig.insert(sig.end(), 64, 0xee);
  crafted::put32(sig, 4, sb_len + 64);
  crafted::put32(sig, cd + 4, get32(sig, cd + 4) + 64);
  crafted::put32(sig, cd + 28, get32(sig, cd + 28) + 2);       // nCodeSlots
  crafted::put32(sig, cd + 32, get32(sig, cd + 32) + 0x2000);  // codeLimit
  Placement p = place_signature(bytes, "libs.dylib", sig.size());
  std::copy(sig.begin(), sig.end(), bytes.begin() + p.layout.sig_offset);
  const auto size = bytes.size();

  auto resigned = resign_all_pages(ByteView(bytes, "libs.dylib"), p.layout);
  EXPECT_EQ(resigned.size(), p.layout.sig_size);
  sign_slice(bytes, "libs.dylib", "libs.dylib");
  ASSERT_EQ(bytes.size(), size);
  EXPECT_TRUE(std::equal(resigned.begin(), resigned.end(),
                         bytes.begin() + p.layout.sig_offset));
  EXPECT_TRUE(
      std::all_of(bytes.end() - 64, bytes.end(), [](u8 b) { return b == 0; }));
  ByteView v(bytes, "libs.dylib");
  VerifyReport r = verify_signature(v, find_slice_layout(v));
  for (const auto& problem : r.problems) ADD_FAILURE() << problem.what;
  EXPECT_EQ(get32(bytes, p.layout.sig_offset + 4), sb_len);
}

// Editing a slice signed with an identity (a non-empty CMS blob) would keep
// that CMS over a rehashed CodeDirectory it does not sign: refused, naming
// file and slice, unless --no-sign (then reported stale). An empty CMS
// wrapper (ad-hoc) is re-signed as before.
TEST_F(CodesignTest, EditOfCmsSignedSliceRefusedUnlessNoSign) {
  auto lib = link("a.c", "libc.dylib", {"-Wl,-headerpad_max_install_names"});
  auto adhoc = read_file(lib);
  auto cms = adhoc;
  crafted::resign_with_alternates(adhoc, "libc.dylib");
  crafted::resign_with_alternates(cms, "libc.dylib", std::vector<u8>(64, 0x5a));
  {
    ByteView v(cms, "libc.dylib");
    VerifyReport r = verify_signature(v, find_slice_layout(v));
    for (const auto& p : r.problems) ADD_FAILURE() << p.what;
    EXPECT_TRUE(r.signature.has_cms());
  }
  EditOptions o;
  o.add_rpaths = {"/new/rpath"};
  auto with_cms = MachOFile::parse(ByteView(cms, "libc.dylib"));
  try {
    plan_edit(with_cms, o);
    ADD_FAILURE() << "edit of a CMS-signed slice was not refused";
  } catch (const Error& e) {
    EXPECT_EQ(e.file(), "libc.dylib (arm64)");
    EXPECT_EQ(e.message(),
              "signed with an identity (CMS); re-signing would invalidate "
              "it: re-sign with codesign after editing, or pass --no-sign");
  }
  o.sign = false;
  EditPlan stale = plan_edit(with_cms, o);
  ASSERT_EQ(stale.slices.size(), 1u);
  EXPECT_TRUE(stale.slices[0].changed);
  EXPECT_EQ(stale.slices[0].signing, SliceReport::Signing::stale);

  o.sign = true;
  auto without = MachOFile::parse(ByteView(adhoc, "libc.dylib"));
  EditPlan resigned = plan_edit(without, o);
  ASSERT_EQ(resigned.slices.size(), 1u);
  EXPECT_EQ(resigned.slices[0].signing, SliceReport::Signing::resigned);
}

// Random corruption of the load commands and the signature (fixed seed):
// every call either works or throws libpkg::Error; under the coordinator's
// ASan/UBSan run this is the in-suite counterpart of
// fuzz/macho_codesign.cpp.
TEST_F(CodesignTest, CorruptedSlicesThrowOnlyError) {
  const auto good = read_file(link("a.c", "liba.dylib", {}));
  SliceLayout layout = find_slice_layout(ByteView(good, "liba.dylib"));
  std::mt19937 rng(17);
  int errors = 0;
  for (int i = 0; i < 1500; ++i) {
    std::vector<u8> bytes = good;
    int flips = 1 + static_cast<int>(rng() % 4);
    for (int f = 0; f < flips; ++f) {
      // Half in the header and load commands, half in the signature.
      u64 at = rng() % 2 ? rng() % 0x400
                         : layout.sig_offset + rng() % layout.sig_size;
      bytes[at] = static_cast<u8>(rng());
    }
    if (rng() % 8 == 0) bytes.resize(rng() % bytes.size());
    try {
      ByteView slice(bytes, "x");
      SliceLayout l = find_slice_layout(slice);
      if (l.signed_()) {
        (void)verify_signature(slice, l);
        (void)resign_all_pages(slice, l);
      }
      sign_slice(bytes, "x", "x");
    } catch (const Error&) {
      ++errors;
    }
  }
  EXPECT_GT(errors, 100);  // the corruption does reach the checks
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
