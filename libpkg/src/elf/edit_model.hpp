// SPDX-License-Identifier: BSD-3-Clause
// The logical half of an ELF edit: the requested operations applied to the
// dynamic entries as strings, before any byte layout is decided.
//
// Kept apart from layout (editor.cpp) so the patchelf semantics (tag
// conversion, dedupe of --add-rpath, where new entries go) are in one place
// and the layout code only deals with "these entries, these strings".
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "libpkg/elf/editor.hpp"
#include "reader.hpp"

namespace libpkg::elf {

// Tags whose d_val is an offset into the dynamic string table.
bool is_string_tag(i64 tag);

struct ModelEntry {
  i64 tag = 0;
  u64 value = 0;                    // d_val for non-string tags
  std::optional<std::string> text;  // the string, for string tags
  std::optional<u64> old_offset;    // where the string was in .dynstr
  bool text_changed = false;  // text differs from the string at old_offset
};

struct VerneedFileChange {
  u64 record_offset = 0;  // file offset of the Verneed record
  u64 old_offset = 0;     // old vn_file
  std::string text;       // new file name
};

struct EditModel {
  std::vector<ModelEntry> entries;  // the final dynamic entries (no DT_NULL)
  // Old string offsets that lose a reference (removed or changed entries).
  std::vector<u64> released_offsets;
  std::vector<VerneedFileChange> verneed_changes;
  // Version-needs records (file offsets) of removed libraries: unlinked from
  // the chain, and symbols using their versions become unversioned.
  std::vector<u64> removed_verneeds;
  std::optional<std::string> interpreter;  // set only if it changes
  bool dynamic_changed = false;            // entries differ from the file's
  std::vector<std::string> notes;
};

template <typename E>
EditModel build_edit_model(const Reader<E>& r, const EditOptions& options);

}  // namespace libpkg::elf
