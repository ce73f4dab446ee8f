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

/// One slice as sign_file saw it.
struct SignedSlice {
  std::string name;   // "FILE (arm64)"
  bool is_64 = true;  // false: a 32-bit slice, left unsigned
};

/// What sign_file did to each slice and whether it rewrote the file.
struct SignFileResult {
  std::vector<SignedSlice> slices;
  bool rewritten = false;  // false: the file already was signed so
};

/// Signs the slices of the file at \p path in place (see above); throws
/// Error(Errc::format) when it is not a 64-bit Mach-O or fat file or a
/// fat_arch is out of range or overlaps another, and Error from the signer.
SignFileResult sign_file(const std::filesystem::path& path);

/// One slice of a thin or fat file as signing sees it: its bytes (named
/// "FILE (arch)", base = its offset) and whether it is 64-bit.
struct FileSlice {
  ByteView bytes;
  bool is_64 = false;
};
/// The slices of \p file (named after \p path); throws Error(Errc::format)
/// as sign_file does for a file that is not 64-bit Mach-O or fat.
std::vector<FileSlice> signature_slices(const ByteView& file,
                                        const std::string& path);

}  // namespace libpkg::macho
