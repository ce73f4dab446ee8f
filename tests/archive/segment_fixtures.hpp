// SPDX-License-Identifier: BSD-3-Clause
// Fixtures of the segment writers' tests (tar_bz2_test.cpp,
// tar_zst_frames_test.cpp): binary-like bytes, a package-like entry list
// with one file large enough for segments of its own, a chunk cache whose
// warnings are collected.
#pragma once

#include <filesystem>
#include <fstream>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "libpkg/archive/chunk_cache.hpp"
#include "libpkg/archive/tar.hpp"

namespace libpkg::archive::testing {

namespace fs = std::filesystem;

// Bytes shaped like a binary: stretches of random bytes, repeated phrases,
// runs of one byte of every length up to 300 (the first pass's cases).
inline std::vector<u8> binary_like(size_t n, u32 seed) {
  std::mt19937 rng(seed);
  std::vector<u8> out;
  out.reserve(n);
  while (out.size() < n) {
    switch (rng() % 4) {
      case 0:
        for (u32 i = 0, k = rng() % 2000; i < k; ++i)
          out.push_back(static_cast<u8>(rng()));
        break;
      case 1:
        out.insert(out.end(), 1 + rng() % 300, static_cast<u8>(rng() % 3));
        break;
      default: {
        static const std::string phrases[] = {"cudaMalloc", "__nv_fatbin",
                                              "libcublasLt.so.13",
                                              "\x7f"
                                              "ELF"};
        const std::string& p = phrases[rng() % 4];
        out.insert(out.end(), p.begin(), p.end());
      }
    }
  }
  out.resize(n);
  return out;
}

inline std::vector<u8> read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

inline TarEntry file_entry(std::string path, std::vector<u8> bytes) {
  TarEntry e;
  e.path = std::move(path);
  e.content = bytes_source(std::move(bytes), e.path);
  return e;
}

inline TarEntry small_file(std::string path, std::string text) {
  TarEntry e;
  e.path = std::move(path);
  e.content = bytes_source(std::string_view(text), e.path);
  return e;
}

// A package-like entry list: small files, a directory, a symlink and one
// file of 9 MiB (above the 8 MiB own-blocks threshold) between them.
inline std::vector<TarEntry> package_entries(const std::vector<u8>& big,
                                             const std::string& prefix) {
  std::vector<TarEntry> e;
  e.push_back(small_file(prefix + "info/index.json", "{\"name\": \"x\"}\n"));
  TarEntry dir;
  dir.path = "include";
  dir.kind = TarKind::directory;
  dir.mode = 0755;
  e.push_back(dir);
  e.push_back(file_entry("include/" + prefix + "x.h", binary_like(30000, 3)));
  e.push_back(file_entry("lib/libbig.so.1", big));
  TarEntry link;
  link.path = "lib/libbig.so";
  link.kind = TarKind::symlink;
  link.mode = 0777;
  link.link_target = "libbig.so.1";
  e.push_back(link);
  e.push_back(file_entry("share/z", binary_like(200000, 4)));
  return e;
}

inline std::shared_ptr<ChunkCache> open_cache(const fs::path& dir,
                                              std::vector<std::string>* log) {
  ChunkCacheOptions o;
  o.dir = dir;
  o.log = [log](const std::string& line) {
    if (log) log->push_back(line);
  };
  return std::make_shared<ChunkCache>(o);
}

// The same large file in another package (another configuration of a
// nightly): other names, another file before everything.
inline std::vector<TarEntry> other_package_entries(const std::vector<u8>& big) {
  std::vector<TarEntry> e = package_entries(big, "other-config-");
  e.insert(e.begin(), file_entry("aaa", binary_like(77777, 5)));
  return e;
}

// write_tar()'s stream (padded to 10240-byte records).
inline std::vector<u8> tar_of(const std::vector<TarEntry>& entries) {
  std::vector<u8> tar;
  write_tar(entries, {1700000000}, [&](std::span<const u8> b) {
    tar.insert(tar.end(), b.begin(), b.end());
  });
  return tar;
}

// An archive's bytes and the cache's counters after writing it.
struct Written {
  std::vector<u8> bytes;
  ChunkCache::Counters counters;
};

}  // namespace libpkg::archive::testing
