// SPDX-License-Identifier: BSD-3-Clause
// The data files compiled into the library (cmake/embed_data.cmake,
// docs/architecture.md decision 6), declared once: each is its bytes followed
// by a NUL, and its size without the NUL.
#pragma once

#include <cstddef>
#include <string_view>

namespace libpkg::embedded {

extern const unsigned char manylinux_policy_json[];
extern const std::size_t manylinux_policy_json_size;
extern const unsigned char musllinux_policy_json[];
extern const std::size_t musllinux_policy_json_size;
extern const unsigned char android_policy_json[];
extern const std::size_t android_policy_json_size;
extern const unsigned char cuda_tables_json[];
extern const std::size_t cuda_tables_json_size;
extern const unsigned char matrix_json[];
extern const std::size_t matrix_json_size;

inline std::string_view text(const unsigned char* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

}  // namespace libpkg::embedded
