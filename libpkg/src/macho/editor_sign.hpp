// SPDX-License-Identifier: BSD-3-Clause
// Keeping the code signature of an edited slice valid (private to the
// editor): the planned edit is extended with the signature's new bytes, so
// whatever writes the plan (temp file + rename, or in place) writes the
// edit and its signature together and never leaves a stale signature.
#pragma once

#include <optional>
#include <span>
#include <string_view>

#include "libpkg/base/overlay.hpp"
#include "libpkg/macho/editor.hpp"
#include "libpkg/macho/view.hpp"

namespace libpkg::macho {

// Writes the bytes of `now` that differ from `before` (one range, first to
// last difference) at file offset `at` and returns that range (nullopt when
// nothing differs): an in-place write then touches only what changed. The
// editor's load commands and the re-signed signature both go through it.
std::optional<ByteRange> write_differences(std::span<const u8> before,
                                           std::span<const u8> now, u64 at,
                                           Overlay& overlay);

// After `slice`'s edit is planned into `overlay` (`report`): a changed
// signed slice is re-signed over the changed ranges (every CodeDirectory's
// fields kept, same size, same offset); a changed unsigned arm64 slice gets
// an ad-hoc signature named `identifier` (LC_CODE_SIGNATURE added in the
// header padding: throws, before anything is written, when it does not
// fit). With `opts.sign` false a changed signed slice is only marked stale.
void sign_edited_slice(const Slice& slice, const EditOptions& opts,
                       std::string_view identifier, SliceReport& report,
                       Overlay& overlay);

}  // namespace libpkg::macho
