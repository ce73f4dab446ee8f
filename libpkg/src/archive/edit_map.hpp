// SPDX-License-Identifier: BSD-3-Clause
// The content of an edited member in terms of the original's: the same
// offsets, an Overlay's patches laid over them, the output cut at its size
// or extended with zeros (and patches) past the original's end. Private to
// the archive layer (edited_member.cpp, splice.cpp).
#pragma once

#include <span>
#include <vector>

#include "libpkg/base/integers.hpp"
#include "libpkg/base/overlay.hpp"

namespace libpkg::archive {

class EditMap {
 public:
  // `patches` sorted, non-overlapping (Overlay::patches()).
  EditMap(std::vector<Patch> patches, u64 input_size, u64 output_size);

  u64 input_size() const { return input_size_; }
  u64 output_size() const { return output_size_; }
  // Where the content stops being the original's: past it the output is
  // cut (smaller) or extended (larger).
  u64 end_of_original() const {
    return input_size_ < output_size_ ? input_size_ : output_size_;
  }
  // Whether [begin, end) holds a byte that may differ from the original:
  // a patch, or anything at or past end_of_original().
  bool changes(u64 begin, u64 end) const;
  // The output bytes at [at, at + original.size()) given the original's
  // bytes there (`at` + size <= input_size): copies the part inside the
  // output into `out` (resized) and applies the patches.
  void edited(u64 at, std::span<const u8> original, std::vector<u8>& out) const;
  // Applies the patches over `out`, which holds output bytes from `at`.
  void patch(u64 at, std::span<u8> out) const;
  // Output bytes at [at, at + out.size()) past the original's end: zeros
  // and the patches there.
  void tail(u64 at, std::span<u8> out) const;

 private:
  std::vector<Patch> patches_;
  u64 input_size_;
  u64 output_size_;
};

}  // namespace libpkg::archive
