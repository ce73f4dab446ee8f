// SPDX-License-Identifier: BSD-3-Clause
// Editing the dynamic-linking metadata of ELF files: RPATH/RUNPATH, NEEDED
// (with the matching .gnu.version_r file names), SONAME and PT_INTERP.
//
// All operations for a file are planned together and produce one Overlay
// (see base/overlay.hpp); the input is never copied into memory.
//
// Layout strategy, in order of preference:
//  1. In place: a new string is found already in .dynstr (as a whole string or
//     a suffix of one), or fits over the old one when nothing else references
//     those bytes; removed dynamic entries are compacted and new ones use
//     spare DT_NULL slots. The file size does not change.
//  2. Append-only growth: a new .dynstr (old contents + new strings), a new
//     .dynamic and, if needed, the interpreter string go into one new PT_LOAD
//     at the end of the file, aligned so p_offset = p_vaddr (mod p_align) with
//     p_align at least the machine's largest page size (64 KiB on
//     aarch64/ppc64). The program header table gets its extra entry by
//     moving the note/interp segments that follow it into the new segment,
//     or else moves itself there. Nothing already in the file shifts, and
//     section headers are updated so readelf, strip and eu-elflint agree.
//     A file already grown by us reuses (rebuilds) its own appended segment,
//     so repeated edits do not keep growing the file.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "libpkg/base/overlay.hpp"
#include "libpkg/elf/view.hpp"

namespace libpkg::elf {

/// Which dynamic tag holds the search path after an rpath operation.
enum class RpathTag {
  runpath,  // DT_RUNPATH (patchelf's default: converts an existing DT_RPATH)
  rpath,    // DT_RPATH (patchelf --force-rpath; what auditwheel writes)
  keep,     // whatever tag the file has; DT_RUNPATH if it has none
};

/// The operation on the search path: none, set it, add entries, remove it, or
/// shrink it to the directories that supply a NEEDED library.
enum class RpathOp { none, set, add, remove, shrink };

/// The edits plan_edit makes, patchelf's options as fields; with none
/// (empty()), edit_file writes the input's bytes unchanged.
struct EditOptions {
  std::optional<std::string> set_soname;
  std::optional<std::string> set_interpreter;

  RpathOp rpath_op = RpathOp::none;
  std::string rpath;  // the value for set / the entries to append for add
  RpathTag rpath_tag = RpathTag::runpath;
  // shrink: keep only entries starting with one of these (when non-empty)
  std::vector<std::string> allowed_rpath_prefixes;

  // Applied in this order: remove, replace, add (as patchelf does).
  std::vector<std::string> remove_needed;
  std::vector<std::pair<std::string, std::string>> replace_needed;
  std::vector<std::string> add_needed;

  // Alignment for a new segment; 0 = max(machine's max page size, p_align).
  u64 page_size = 0;

  // patchelf 0.18's header and flag edits.
  std::optional<u8> os_abi;       // EI_OSABI
  std::optional<bool> execstack;  // PF_X of PT_GNU_STACK (must exist)
  bool no_default_lib = false;    // DF_1_NODEFLIB in DT_FLAGS_1
  bool add_debug_tag = false;     // a DT_DEBUG entry if there is none
  // Dynamic symbols (by name, without @version) whose .gnu.version entry
  // becomes 1 (global, unversioned).
  std::vector<std::string> clear_symbol_version;
  // --rename-dynamic-symbols: (old name, new name) pairs applied to every
  // .dynsym entry (defined or undefined) with that name; the hash tables are
  // rebuilt and .dynsym reordered as .gnu.hash requires.
  std::vector<std::pair<std::string, std::string>> rename_dynamic_symbols;

  /// True when an edit changes the dynamic section (soname, rpath, NEEDED
  /// entries, DF_1_NODEFLIB, DT_DEBUG).
  bool touches_dynamic() const {
    return set_soname || rpath_op != RpathOp::none || !remove_needed.empty() ||
           !replace_needed.empty() || !add_needed.empty() || no_default_lib ||
           add_debug_tag;
  }
  /// True when no edit at all is requested.
  bool empty() const {
    return !touches_dynamic() && !set_interpreter && !os_abi && !execstack &&
           clear_symbol_version.empty() && rename_dynamic_symbols.empty();
  }
};

/// A planned edit: the byte patches over the input, whether the file grows, and
/// notes on what was done.
struct EditPlan {
  Overlay overlay;
  bool grows = false;  // appended a segment (or rebuilt ours)
  // Human-readable notes on what was done ("RUNPATH set in place", ...).
  std::vector<std::string> notes;
};

/// Plans the edit of `elf` (read from `base_dir` for --shrink-rpath lookups).
/// Throws libpkg::Error for impossible requests (no PT_INTERP to set, a
/// statically linked file without .dynamic, an unknown NEEDED to replace is
/// not an error: like patchelf it is ignored).
EditPlan plan_edit(const ElfFile& elf, const EditOptions& options);

/// What edit_file did: whether bytes changed, the file grew or was patched in
/// place, and the sizes before and after.
struct EditReport {
  bool changed = false;
  bool grew = false;
  bool in_place = false;
  u64 old_size = 0, new_size = 0;
};

/// Opens `input`, plans, and writes to `output` (== input for in place).
EditReport edit_file(const std::filesystem::path& input,
                     const std::filesystem::path& output,
                     const EditOptions& options,
                     WriteMode mode = WriteMode::patch_in_place);

}  // namespace libpkg::elf
