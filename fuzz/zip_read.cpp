// SPDX-License-Identifier: BSD-3-Clause
// libFuzzer target for the zip reader and the extraction name rules: any
// byte string must either open or fail with libpkg::Error; every member must
// either read back or fail with libpkg::Error; check_member_names likewise.
// Anything else (a crash, a sanitizer report, another exception type, a
// hang, an allocation blow-up) is a bug; crashers are pinned in
// tests/archive/reader_regression_test.cpp.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>
#include <vector>

#include "libpkg/archive/extract.hpp"
#include "libpkg/archive/zip_reader.hpp"
#include "libpkg/base/error.hpp"

namespace {

void expect_ours(const libpkg::Error& e) {
  if (e.file() != "fuzz-input") std::abort();  // every error names the file
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data,
                                      std::size_t size) {
  using namespace libpkg::archive;
  // Small limits keep each input's work bounded (a declared 16 GiB member
  // would otherwise be inflated for real).
  ZipLimits limits;
  limits.max_total_uncompressed = 64u << 20;
  limits.max_entry_uncompressed = 16u << 20;
  limits.max_entries = 1u << 16;
  try {
    ZipReader zip = ZipReader::from_bytes(
        std::vector<libpkg::u8>(data, data + size), "fuzz-input", limits);
    for (const ZipEntry& e : zip.entries()) {
      zip.find(e.name);
      try {
        std::uint64_t total = 0;
        zip.read(e, [&](std::span<const libpkg::u8> piece) {
          total += piece.size();
          if (total > e.uncompressed_size) std::abort();  // declared bound
        });
        if (total != e.uncompressed_size) std::abort();
      } catch (const libpkg::Error& err) {
        expect_ours(err);
      }
    }
    try {
      check_member_names(zip);
    } catch (const libpkg::Error& err) {
      expect_ours(err);
    }
  } catch (const libpkg::Error& e) {
    expect_ours(e);
  }
  return 0;
}
