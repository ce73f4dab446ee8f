// SPDX-License-Identifier: BSD-3-Clause
// A byte range, shared by the editor's report and the signer's input (the
// ranges an edit changed are the ranges a re-signature rehashes).
#pragma once

#include "libpkg/base/integers.hpp"

namespace libpkg::macho {

/// A half-open range [offset, offset + size) of bytes in a file or slice.
struct ByteRange {
  u64 offset = 0;
  u64 size = 0;
};

}  // namespace libpkg::macho
