// SPDX-License-Identifier: BSD-3-Clause
// Where the bytes of an archive member come from.
//
// The zip writer and the tar writer read member content in chunks, on several
// threads, at arbitrary offsets, long after the member was queued. A torch
// wheel has ~10 000 files, more than a process may keep open, so a file
// source opens its file only while it is being read. A source must return
// the same bytes every time it is read (the writer may read twice: once to
// compress, once to store a member that did not shrink).
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "libpkg/archive/zip_reader.hpp"
#include "libpkg/base/integers.hpp"

namespace libpkg {
class Overlay;
}

namespace libpkg::archive {

/// A member of a zip archive as edited by an overlay (edited_member_source).
struct MemberEdit {
  std::shared_ptr<const ZipReader> zip;
  ZipEntry entry;
  std::shared_ptr<const Overlay> overlay;
};

/// Bytes a zip writer reads a member's content from, at any offset, from any
/// thread.
class ContentSource {
 public:
  virtual ~ContentSource() = default;

  /// The content's size in bytes, fixed when the source was made; never throws.
  virtual u64 size() const = 0;
  /// Fills `out` with the bytes at [offset, offset + out.size()), which must
  /// lie inside size(). Thread-safe. Throws libpkg::Error naming the source
  /// (e.g. when a file shrank since it was queued).
  virtual void read(u64 offset, std::span<u8> out) const = 0;
  /// For error messages: a path, or "<archive>:<member>" for in-memory data.
  /// Never throws.
  virtual const std::string& name() const = 0;
  /// Set when the content is a zip member as edited by an overlay: the zip
  /// writer then re-uses the member's compressed bytes where the edit
  /// leaves them valid instead of compressing everything again
  /// (docs/archives.md, "Splice"). Null for other sources; never throws.
  virtual const MemberEdit* member_edit() const { return nullptr; }
  /// A name for the content that changes whenever the content does, known
  /// without reading it: set for a file, or an edit of one, that had not
  /// changed for two seconds when the source was made (its device, inode,
  /// size, times and path, and the edit). A zip writer with a chunk cache
  /// memoizes what it learnt writing such a member (its chunks' keys and
  /// CRC-32s, its SHA-256) under it, and the next archive made from the same
  /// file reads and hashes only what the cache lacks (docs/archives.md,
  /// "Member memos"). nullopt for other sources; never throws.
  virtual std::optional<std::string> content_identity() const {
    return std::nullopt;
  }
  /// Whether the content is still the one content_identity() names (the
  /// file's state is unchanged; stat'ed now). False for sources without an
  /// identity; never throws.
  virtual bool still_identified() const { return false; }
};

/// A shared, immutable content source.
using SourcePtr = std::shared_ptr<const ContentSource>;

/// A regular file, opened per read (size taken now; a later size change is an
/// error at read time).
/// Throws Error(Errc::io) when `path` cannot be stat'ed and Errc::usage when it
/// is not a regular file.
SourcePtr file_source(const std::filesystem::path& path);
/// Bytes owned by the source.
/// Never throws; read() throws Errc::usage for a range past the end.
SourcePtr bytes_source(std::vector<u8> bytes, std::string name);
SourcePtr bytes_source(std::string_view text, std::string name);
/// `input` as edited by `overlay` (the ELF editor's output), streamed without
/// materialising the edited file.
/// Throws Errc::usage when `input`'s size is not the one the overlay was made
/// for (or it is not a regular file), Errc::io when it cannot be stat'ed.
SourcePtr overlay_source(const std::filesystem::path& input, Overlay overlay);
/// `entry` of `zip` as edited by `overlay` (made for the member's
/// uncompressed size). A ZipWriter writes it by splicing: the member's
/// deflate data is re-used where the edit leaves it valid. read() inflates
/// the member from its start (never through its restart index), so reads
/// at increasing offsets cost one pass and a read behind the last one
/// starts over.
/// Throws Errc::usage when the overlay was made for another size and
/// Errc::unsupported for a member neither stored nor deflated.
SourcePtr edited_member_source(std::shared_ptr<const ZipReader> zip,
                               const ZipEntry& entry,
                               std::shared_ptr<const Overlay> overlay);

}  // namespace libpkg::archive
