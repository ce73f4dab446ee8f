// SPDX-License-Identifier: BSD-3-Clause
// Signing a whole thin or fat Mach-O file in place (`pkgtool macho sign`,
// libpkg.macho.sign): every signed 64-bit slice is re-signed keeping its
// CodeDirectories' fields (all pages rehashed), every unsigned one gets an
// ad-hoc signature named after the file; 32-bit slices are left as they
// are. When only signature bytes change the file is copied in the kernel and
// patched; otherwise slices are laid out again at their alignment. A file
// already signed as it would be is not rewritten; writes are atomic.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "libpkg/base/bytes.hpp"

namespace libpkg::macho {

struct SignedSlice {
  std::string name;   // "FILE (arm64)"
  bool is_64 = true;  // false: a 32-bit slice, left unsigned
};

struct SignFileResult {
  std::vector<SignedSlice> slices;
  bool rewritten = false;  // false: the file already was signed so
};

SignFileResult sign_file(const std::filesystem::path& path);

// The slices of a thin or fat file as signing sees them: each slice's bytes
// (named "FILE (arch)", base = its offset) and whether it is 64-bit.
struct FileSlice {
  ByteView bytes;
  bool is_64 = false;
};
std::vector<FileSlice> signature_slices(const ByteView& file,
                                        const std::string& path);

}  // namespace libpkg::macho
