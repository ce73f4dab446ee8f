// SPDX-License-Identifier: BSD-3-Clause
// Extracting into a directory without ever showing a partial tree.
//
// Everything is written into a fresh hidden sibling of the target
// (".NAME.extract-pid<PID>-XXXXXX", a ScratchDir: removed on error, on
// SIGINT/SIGTERM, and by the next extraction to the same target when a
// SIGKILL left it) and moved into place by one rename at the end. On any
// error the target is exactly as before, so a retry starts clean. With
// `overwrite`, a non-empty target is replaced as a whole (renameat2
// RENAME_EXCHANGE, then the old tree is removed); its old contents are not
// merged with the archive's. Used by the zip extractor (wheels) and conda
// extract.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "libpkg/base/scratch_dir.hpp"

namespace libpkg::archive {

/// A staging directory beside an extraction target that replaces the target
/// only when install() is called; destroyed without install(), it removes the
/// staging directory and leaves the target as it was.
class StagedTarget {
 public:
  /// Checks `target`: absent, an empty directory or (with `overwrite`) any
  /// directory; a symlink or a file is refused (Errc::usage). `archive` names
  /// the input in error messages.
  /// Throws Errc::io when the parent directory or the staging directory cannot
  /// be created or the target cannot be stat'ed.
  StagedTarget(const std::filesystem::path& target, bool overwrite,
               std::string archive);

  /// The staging directory to fill (mode 0700 until install()).
  /// Never throws.
  const std::filesystem::path& path() const { return staging_path_; }

  /// Gives the staging directory the target's mode (0755 for a new target)
  /// and renames it into place.
  /// Replaces a non-empty target atomically where RENAME_EXCHANGE works, else
  /// moves it aside first. Throws Error(Errc::io) naming the archive when a
  /// chmod or rename fails.
  void install();

 private:
  std::string archive_;
  std::filesystem::path target_;  // absolute, normalised
  bool exists_ = false;
  bool empty_ = true;
  unsigned mode_ = 0755;
  std::filesystem::path staging_path_;
  std::optional<ScratchDir> staging_;
};

}  // namespace libpkg::archive
