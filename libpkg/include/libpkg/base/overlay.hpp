// SPDX-License-Identifier: BSD-3-Clause
// An edit of a file expressed as patches over the unchanged input.
//
// Editors never copy their input. They describe the output as the input's
// bytes with some ranges replaced and, possibly, bytes appended past its end.
// The overlay can then be written to a new path (kernel-side copy of the
// unchanged bulk plus the patches), applied to the input file in place (only
// the patched bytes are written), or streamed chunk by chunk into a
// compressor without ever materialising the whole file.
#pragma once

#include <filesystem>
#include <functional>
#include <span>
#include <vector>

#include "libpkg/base/callbacks.hpp"
#include "libpkg/base/integers.hpp"
#include "libpkg/base/mapped_file.hpp"

namespace libpkg {

/// Replacement bytes at an output offset.
struct Patch {
  u64 offset = 0;
  std::vector<u8> bytes;
};

/// The edits to a file as byte patches over its unchanged input, so the output
/// is written without copying the input into memory.
class Overlay {
 public:
  /// An overlay with no patches over an input of `input_size` bytes.
  explicit Overlay(u64 input_size)
      : input_size_(input_size), size_(input_size) {}

  /// Replaces bytes at `offset` (may extend past the input: that is growth).
  /// Later patches win where they overlap earlier ones.
  void write(u64 offset, std::span<const u8> bytes);
  /// Sets the output size (truncating or zero-extending the input).
  void resize(u64 size) { size_ = size; }

  /// The size of the input the overlay applies to.
  u64 input_size() const { return input_size_; }
  /// The size of the output.
  u64 size() const { return size_; }
  /// True when the output size differs from the input's.
  bool grows() const { return size_ != input_size_; }
  /// Patches sorted by offset, non-overlapping, merged where adjacent.
  const std::vector<Patch>& patches() const;
  /// True when applying the overlay changes no byte of the input.
  bool is_identity(std::span<const u8> input) const;
  /// The same output without the patched bytes that equal the input's at
  /// their offset: a patch is cut where at least `min_gap` such bytes run
  /// (shorter runs stay inside it); bytes past the input's end are kept.
  /// Editors rewrite whole structures (a .dynamic section of which one
  /// entry changed, or none); a splicing zip writer compresses again every
  /// chunk a patch touches, and the .dynamic of a large library lies in
  /// its data segment, behind all its code.
  Overlay without_unchanged(std::span<const u8> input, u64 min_gap = 16) const;

  /// Streams the output bytes in order: unchanged input ranges as views into
  /// `input`, patched ranges from the overlay, zeros for gaps past the input.
  void for_each_chunk(std::span<const u8> input, const ByteSinkFn& sink) const;

 private:
  void normalize() const;

  u64 input_size_;
  u64 size_;
  mutable std::vector<Patch> patches_;
  mutable bool normalized_ = true;
};

/// How write_overlay writes its output.
enum class WriteMode {
  // Temp file + rename, even in place. Safe against being killed at any point.
  // In place, a hard-linked file gets a new inode under this name; its other
  // links keep the old bytes.
  atomic,
  // In place only: when the overlay does not change the file size, write just
  // the patched ranges into the file (with SIGINT/SIGTERM/SIGHUP held off).
  // When the file must grow or shrink it is rewritten through a temporary
  // file: renamed over the target, or, when the target has several hard
  // links, written back into the same inode so every link sees the edit.
  patch_in_place,
};

/// What write_overlay did.
struct WriteResult {
  bool changed = false;   // false: identical output, nothing was written
  bool in_place = false;  // true: patched the existing file directly
  u64 bytes_written = 0;  // patch bytes written (not counting a bulk copy)
};

/// Writes `overlay` over `input` to `output` (which may be the input's path).
/// An identity overlay written in place does nothing at all.
WriteResult write_overlay(const MappedFile& input, const Overlay& overlay,
                          const std::filesystem::path& output, WriteMode mode);

}  // namespace libpkg
