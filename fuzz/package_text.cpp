// SPDX-License-Identifier: BSD-3-Clause
// libFuzzer target for the text formats packages carry: wheel RECORD (CSV),
// METADATA and WHEEL (RFC 822-style headers), wheel file names, conda
// info/paths.json and pack metadata JSON. The first byte picks the parser,
// the rest is its input. Any input must parse or fail with libpkg::Error
// naming the file; what parses must survive format() and parse again to the
// same text (a writer must never emit what its reader refuses). Anything
// else (a crash, a sanitizer report, another exception type) is a bug.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "libpkg/base/error.hpp"
#include "libpkg/conda/info.hpp"
#include "libpkg/conda/metadata.hpp"
#include "libpkg/wheel/metadata.hpp"
#include "libpkg/wheel/name.hpp"
#include "libpkg/wheel/record.hpp"

namespace {

const std::string kFile = "fuzz-input";

template <typename T>
void round_trip(std::string_view text) {
  T parsed = T::parse(text, kFile);
  std::string once = parsed.format();
  std::string twice = T::parse(once, kFile).format();
  if (once != twice) std::abort();  // format() is not a fixed point
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data,
                                      std::size_t size) {
  if (size == 0) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data + 1),
                              size - 1);
  try {
    switch (data[0] % 6) {
      case 0:
        round_trip<libpkg::wheel::Record>(text);
        break;
      case 1:
        round_trip<libpkg::wheel::HeaderFields>(text);
        break;
      case 2:
        round_trip<libpkg::wheel::WheelFile>(text);
        break;
      case 3:
        libpkg::conda::parse_paths_json(text, kFile);
        break;
      case 4:
        libpkg::conda::parse_metadata_json(text, kFile);
        break;
      case 5:
        // Errors name the file name itself, which is the input here.
        try {
          libpkg::wheel::WheelName::parse(text);
        } catch (const libpkg::Error&) {
        }
        return 0;
    }
  } catch (const libpkg::Error& e) {
    if (e.file() != kFile) std::abort();  // every error names the file
  }
  return 0;
}
