// SPDX-License-Identifier: BSD-3-Clause
// SHA-256 against the FIPS 180-2 examples, and the RECORD encoding.
#include "libpkg/base/sha256.hpp"

#include <gtest/gtest.h>

#include <string>

#include "temp_dir.hpp"

namespace libpkg {
namespace {

using testing::as_bytes;

std::string hex_of(std::string_view s) {
  return Sha256::hex(Sha256::of(as_bytes(s)));
}

TEST(Sha256, FipsVectors) {
  EXPECT_EQ(hex_of(""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(hex_of("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(hex_of("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

TEST(Sha256, MillionAsStreamedInPieces) {
  Sha256 h;
  std::string chunk(1000, 'a');
  for (int i = 0; i < 1000; ++i) h.update(chunk);
  EXPECT_EQ(Sha256::hex(h.finish()),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(Sha256, StreamingEqualsOneShot) {
  std::string data;
  for (int i = 0; i < 1000; ++i) data += static_cast<char>(i * 31);
  Sha256 h;
  h.update(std::string_view(data).substr(0, 1));
  h.update(std::string_view(data).substr(1, 63));
  h.update(std::string_view(data).substr(64, 0));
  h.update(as_bytes(std::string_view(data).substr(64)));
  EXPECT_EQ(h.finish(), Sha256::of(as_bytes(data)));
}

TEST(Sha256, MoveKeepsState) {
  Sha256 a;
  a.update(std::string_view("ab"));
  Sha256 b(std::move(a));
  b.update(std::string_view("c"));
  EXPECT_EQ(Sha256::hex(b.finish()), hex_of("abc"));
  Sha256 c;
  c = std::move(b);
}

// Expected values computed independently when this test was written, with
//   python3 -c "import hashlib,base64; print(base64.urlsafe_b64encode(
//               hashlib.sha256(DATA).digest()).rstrip(b'=').decode())"
TEST(Sha256, UrlsafeBase64NoPad) {
  auto b64 = [](std::string_view s) {
    return Sha256::urlsafe_b64_nopad(Sha256::of(as_bytes(s)));
  };
  EXPECT_EQ(b64(""), "47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU");
  EXPECT_EQ(b64("abc"), "ungWv48Bz-pBQUDeXa4iI7ADYaOWF3qctBD_YfIAFa0");
  EXPECT_EQ(b64("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "JI1qYdIGOLjlwCaTDD5gOaM85Flk_yFn9uzt1BnbBsE");
  std::string all;  // bytes 0..255
  for (int i = 0; i < 256; ++i) all += static_cast<char>(i);
  EXPECT_EQ(b64(all), "QK_y6dLYki5Hr9RkjmlnSXFYeF-9Hahw5xECZr-USIA");
}

TEST(Sha256, UrlsafeAlphabetEdges) {
  // 32 bytes of 0xff: every 6-bit group is 63 ('_'); the last two bytes give
  // 16 bits -> three characters, the last one 1111|00 = 60 ('8').
  Sha256::Digest ones;
  ones.fill(0xff);
  std::string s = Sha256::urlsafe_b64_nopad(ones);
  EXPECT_EQ(s.size(), 43u);
  EXPECT_EQ(s, std::string(42, '_') + "8");
  Sha256::Digest zeros{};
  EXPECT_EQ(Sha256::urlsafe_b64_nopad(zeros), std::string(43, 'A'));
  // 0xfb 0xef 0xbe -> 111110 111110 111110 111110: '-' is 62.
  Sha256::Digest d{};
  d[0] = 0xfb;
  d[1] = 0xef;
  d[2] = 0xbe;
  EXPECT_EQ(Sha256::urlsafe_b64_nopad(d).substr(0, 4), "----");
}

TEST(Sha256, Hex) {
  Sha256::Digest d{};
  d[0] = 0x0f;
  d[31] = 0xa0;
  std::string h = Sha256::hex(d);
  EXPECT_EQ(h.size(), 64u);
  EXPECT_EQ(h.substr(0, 2), "0f");
  EXPECT_EQ(h.substr(62), "a0");
}

}  // namespace
}  // namespace libpkg
