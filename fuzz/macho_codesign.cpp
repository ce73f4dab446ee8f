// SPDX-License-Identifier: BSD-3-Clause
// libFuzzer target for the code-signature code: any byte string, taken as a
// thin slice, must be signed, verified and re-signed or fail with
// libpkg::Error. Anything else (a crash, a sanitizer report, another
// exception) is a bug to pin in tests/macho/codesign_test.cpp.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "libpkg/base/bytes.hpp"
#include "libpkg/base/error.hpp"
#include "libpkg/macho/codesign.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace libpkg;
  if (size > (1u << 20)) return 0;  // hashing cost, not parsing, beyond this
  ByteView input({data, size}, "fuzz");
  try {
    (void)macho::parse_signature(input);
  } catch (const Error&) {
  }
  try {
    macho::SliceLayout layout = macho::find_slice_layout(input);
    if (layout.signed_()) {
      (void)macho::verify_signature(input, layout);
      (void)macho::resign_all_pages(input, layout);
    }
  } catch (const Error&) {
  }
  try {
    std::vector<u8> slice(data, data + size);
    macho::sign_slice(slice, "fuzz", "fuzz");
  } catch (const Error&) {
  }
  return 0;
}
