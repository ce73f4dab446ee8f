// SPDX-License-Identifier: BSD-3-Clause
// install_name_tool's edits of Mach-O load commands, planned then applied.
//
// `plan_edit` applies every requested operation to a model of each selected
// slice's load commands, serialises the result and checks that it fits in
// the header padding (the bytes between the load commands and the first
// section). Nothing moves: sections, segments and __LINKEDIT keep their
// offsets, so an edit is a few patched bytes at the start of each slice. A
// slice whose new load commands do not fit fails the whole plan before
// anything is written. The plan is an Overlay; `apply_edit` writes it once,
// atomically (temp file + rename), and writes nothing for a no-op edit.
//
// Code signatures: LC_CODE_SIGNATURE and its data are kept as they are
// (same offset and size, still the last thing in __LINKEDIT), so the file
// stays valid in structure; the hashes of the pages in `changed` no longer
// match. `SliceReport` tells a signer which slices were signed and which
// byte ranges changed, so it can rehash just those pages (the codesign part
// of the library regenerates the signature from this report).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "libpkg/base/overlay.hpp"
#include "libpkg/macho/byte_range.hpp"
#include "libpkg/macho/view.hpp"

namespace libpkg::macho {

/// The install_name_tool operations to apply, and to which slices.
struct EditOptions {
  std::optional<std::string> id;                             // -id
  std::vector<std::pair<std::string, std::string>> changes;  // -change A B
  std::vector<std::string> add_rpaths;                       // -add_rpath
  std::vector<std::string> prepend_rpaths;                   // -prepend_rpath
  std::vector<std::string> delete_rpaths;                    // -delete_rpath
  std::vector<std::pair<std::string, std::string>> rename_rpaths;  // -rpath
  bool delete_all_rpaths = false;  // -delete_all_rpaths
  // Architectures to edit ("arm64", "x86_64"); empty: every 64-bit slice.
  std::vector<std::string> archs;
  // Re-sign changed signed slices and ad-hoc sign changed unsigned arm64
  // ones (editor_sign.cpp); false (--no-sign) leaves signatures stale.
  bool sign = true;

  /// True when some install_name_tool operation is requested. `archs` and
  /// `sign` only qualify the operations: alone they change no byte.
  bool has_operations() const {
    return id || !changes.empty() || !add_rpaths.empty() ||
           !prepend_rpaths.empty() || !delete_rpaths.empty() ||
           !rename_rpaths.empty() || delete_all_rpaths;
  }
  /// True when every field has its default value: no operation, every
  /// 64-bit slice, signing on. Never throws.
  bool empty() const { return !has_operations() && archs.empty() && sign; }
};

/// What the plan does to one slice: whether it was edited or changed, the byte
/// ranges changed and its signature.
struct SliceReport {
  std::string arch;
  u64 slice_offset = 0;
  // false: a 32-bit or PowerPC slice, or one not in EditOptions::archs.
  bool edited = false;
  bool changed = false;
  // The slice's LC_CODE_SIGNATURE (slice-relative dataoff/datasize), if it
  // has one: a signer must regenerate it when `changed`.
  std::optional<LinkeditData> code_signature;
  std::vector<ByteRange> changed_ranges;  // file offsets
  /// What happened to the code signature of a changed slice.
  enum class Signing { none, resigned, adhoc_signed, stale };
  Signing signing = Signing::none;
  u64 sizeofcmds_before = 0, sizeofcmds_after = 0;
  u64 padding_free_before = 0;  // bytes free before the edit
};

/// The planned edit: the file's bytes as an Overlay of patches, and one report
/// per slice.
struct EditPlan {
  /// An empty plan over a file of \p size bytes.
  explicit EditPlan(u64 size) : overlay(size) {}
  Overlay overlay;
  std::vector<SliceReport> slices;
  /// True when some slice's report says it changed.
  bool changed() const;
};

/// Plans `opts` over every selected slice of `file`. Throws (nothing
/// written) on a usage error (rpath to delete or rename not found, an rpath
/// that would be duplicated, an unknown or unparsed arch) or when the new
/// load commands of a slice do not fit its padding: Error(Errc::usage) for
/// the usage errors, Errc::unsupported for no room or an unparsed slice.
EditPlan plan_edit(const MachOFile& file, const EditOptions& opts);

/// Writes the plan over the file (or to `output`). An edit never changes the
/// file size (the load commands stay in the header padding), so in place with
/// WriteMode::patch_in_place only the changed header bytes are written into
/// the existing inode (hard links see the edit), which costs nothing like a
/// copy of a large dylib; WriteMode::atomic writes a temp file and renames
/// it. A plan that changes nothing writes nothing in place. Throws
/// Error(Errc::usage) when `file` was not opened with MachOFile::open.
WriteResult apply_edit(const MachOFile& file, const EditPlan& plan,
                       const std::filesystem::path& output,
                       WriteMode mode = WriteMode::patch_in_place);

}  // namespace libpkg::macho
