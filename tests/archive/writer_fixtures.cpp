// SPDX-License-Identifier: BSD-3-Clause
#include "writer_fixtures.hpp"

#include <gtest/gtest.h>
#include <zlib.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <random>
#include <stdexcept>
#include <thread>

namespace writer_test {

TempDir::TempDir()
    : TempDir(std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "/tmp") {}

TempDir::TempDir(const std::filesystem::path& parent) {
  std::string templ = (parent / "writer_test-XXXXXX").string();
  if (::mkdtemp(templ.data()) == nullptr)
    throw std::runtime_error("mkdtemp failed");
  path_ = templ;
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

std::vector<u8> random_bytes(u64 size, u32 seed) {
  std::mt19937 rng(seed);
  std::vector<u8> out(size);
  for (auto& b : out) b = static_cast<u8>(rng());
  return out;
}

std::vector<u8> zero_bytes(u64 size) { return std::vector<u8>(size, 0); }

std::vector<u8> text_bytes(u64 size) {
  static const char* words[] = {"wheel",  "archive", "deflate", "chunk",
                                "member", "zip64",   "record",  "header"};
  std::mt19937 rng(7);
  std::string s;
  while (s.size() < size) {
    s += words[rng() % 8];
    s += ' ';
    s += std::to_string(rng() % 100000);
    s += (rng() % 5 == 0) ? '\n' : ' ';
  }
  return std::vector<u8>(s.begin(), s.begin() + static_cast<long>(size));
}

std::vector<u8> elf_bytes(u64 size) {
  std::vector<std::filesystem::path> candidates = {
      "/usr/lib/x86_64-linux-gnu/libc.so.6"};
  for (const auto& e : std::filesystem::directory_iterator("/usr/bin"))
    if (e.is_regular_file()) candidates.push_back(e.path());
  std::sort(candidates.begin() + 1, candidates.end());
  std::vector<u8> out;
  for (const auto& p : candidates) {
    if (out.size() >= size) break;
    std::vector<u8> bytes = read_file(p);
    if (bytes.size() < 4 || bytes[0] != 0x7f || bytes[1] != 'E') continue;
    out.insert(out.end(), bytes.begin(), bytes.end());
  }
  if (out.size() < size) throw std::runtime_error("not enough ELF files");
  out.resize(size);
  return out;
}

std::vector<u8> read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open " + path.string());
  return std::vector<u8>(std::istreambuf_iterator<char>(in), {});
}

void write_file(const std::filesystem::path& path, std::span<const u8> bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

std::filesystem::path settled_file(const std::filesystem::path& path,
                                   std::span<const u8> bytes) {
  write_file(path, bytes);
  std::this_thread::sleep_for(std::chrono::milliseconds(2100));
  return path;
}

std::vector<u8> zlib_inflate_raw(std::span<const u8> deflated) {
  z_stream strm{};
  EXPECT_EQ(inflateInit2(&strm, -MAX_WBITS), Z_OK);
  strm.next_in = const_cast<u8*>(deflated.data());
  strm.avail_in = static_cast<uInt>(deflated.size());
  std::vector<u8> out;
  std::vector<u8> buf(1 << 16);
  int ret = Z_OK;
  while (ret == Z_OK) {
    strm.next_out = buf.data();
    strm.avail_out = static_cast<uInt>(buf.size());
    ret = inflate(&strm, Z_NO_FLUSH);
    out.insert(out.end(), buf.data(),
               buf.data() + (buf.size() - strm.avail_out));
  }
  EXPECT_EQ(ret, Z_STREAM_END) << "zlib: " << (strm.msg ? strm.msg : "");
  EXPECT_EQ(strm.avail_in, 0u) << "bytes after the end of the deflate stream";
  inflateEnd(&strm);
  return out;
}

u32 zlib_crc32(std::span<const u8> bytes) {
  return static_cast<u32>(
      crc32(0, bytes.data(), static_cast<uInt>(bytes.size())));
}

}  // namespace writer_test
