// SPDX-License-Identifier: BSD-3-Clause
// elf_read_bench: in-process time to read the dynamic section of ELF files.
//
//   elf_read_bench ITERATIONS FILE...
//
// For each file and iteration: ElfFile::open (mmap + ELF header), needed(),
// soname() and runpath()/rpath(), timed with steady_clock. Every iteration
// maps the file anew, so page-table setup and the page faults on the header,
// program headers, dynamic section and strings are part of each sample (the
// pages themselves are in the page cache: warm-cache figures). Prints one
// JSON object per file on stdout. Compiled by elf_bench.py against the
// libpkg static library of the build being benchmarked.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "libpkg/elf/view.hpp"

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: elf_read_bench ITERATIONS FILE...\n");
    return 2;
  }
  int iterations = std::max(1, std::atoi(argv[1]));
  for (int f = 2; f < argc; ++f) {
    std::vector<double> us;
    size_t checksum = 0;
    try {
      for (int i = 0; i < iterations; ++i) {
        auto t0 = std::chrono::steady_clock::now();
        auto elf = libpkg::elf::ElfFile::open(argv[f]);
        auto needed = elf.needed();
        auto soname = elf.soname();
        auto runpath = elf.runpath();
        auto rpath = runpath ? runpath : elf.rpath();
        auto t1 = std::chrono::steady_clock::now();
        checksum += needed.size() + (soname ? soname->size() : 0) +
                    (rpath ? rpath->size() : 0);
        us.push_back(
            std::chrono::duration<double, std::micro>(t1 - t0).count());
      }
    } catch (const std::exception& e) {
      std::printf("{\"file\": \"%s\", \"error\": \"%s\"}\n", argv[f], e.what());
      continue;
    }
    std::vector<double> sorted = us;
    std::sort(sorted.begin(), sorted.end());
    double median = sorted[sorted.size() / 2];
    if (sorted.size() % 2 == 0)
      median = (sorted[sorted.size() / 2 - 1] + median) / 2;
    std::printf(
        "{\"file\": \"%s\", \"iterations\": %d, \"first_us\": %.1f, "
        "\"median_us\": %.1f, "
        "\"min_us\": %.1f, \"max_us\": %.1f, \"checksum\": %zu}\n",
        argv[f], iterations, us.front(), median, sorted.front(), sorted.back(),
        checksum);
  }
  return 0;
}
