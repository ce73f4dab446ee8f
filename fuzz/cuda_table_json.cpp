// SPDX-License-Identifier: BSD-3-Clause
// libFuzzer target for the CUDA table loader (config::CudaTables::parse, the
// format of data/cuda/cuda.json and of user table files). Any input must
// load or fail with libpkg::Error naming the file; a loaded set must overlay
// the built-in tables, list its versions and answer queries (a query may
// refuse with libpkg::Error, e.g. no pypi RPATH list for a version). Anything
// else is a bug.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "libpkg/base/error.hpp"
#include "libpkg/config/cuda_table.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data,
                                      std::size_t size) {
  using libpkg::config::CudaTables;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    CudaTables tables = CudaTables::parse(text, "fuzz-input");
    CudaTables merged = CudaTables::builtin().overlaid(tables);
    for (const auto& table : tables.tables()) {
      bool kept = false;  // every version of the overlay is in the result
      for (const auto& m : merged.tables()) kept |= m.version == table.version;
      if (!kept) std::abort();
      table.keeps_name("libcudart.so.12");
      try {
        table.pypi_rpath_string();
      } catch (const libpkg::Error&) {
        // A version without a pypi RPATH list: a query error, not a parse one.
      }
    }
    tables.versions();
  } catch (const libpkg::Error& e) {
    if (e.file() != "fuzz-input") std::abort();  // every error names the file
  }
  return 0;
}
