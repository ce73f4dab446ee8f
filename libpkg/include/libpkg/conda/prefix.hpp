// SPDX-License-Identifier: BSD-3-Clause
// Build-prefix detection: which files embed the prefix they were built in,
// and whether conda must rewrite them as text or as binary (NUL-padded C
// strings) at install time.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "libpkg/base/integers.hpp"
#include "libpkg/base/sha256.hpp"

namespace libpkg::conda {

/// How conda replaces the prefix placeholder in a file: as text or in a binary
/// (padded with NULs).
enum class FileMode { text, binary };
/// "text" or "binary".
const char* file_mode_name(FileMode mode);

/// Text = valid UTF-8 (a leading BOM allowed) without NUL bytes, the rule
/// conda-build and rattler-build use; everything else is binary.
bool is_text(std::span<const u8> bytes);

/// The result of scanning one file: its SHA-256, size, text/binary mode and
/// whether the placeholder occurs.
struct FileScan {
  Sha256::Digest sha256{};
  u64 size = 0;
  FileMode mode = FileMode::binary;
  bool has_prefix = false;  // the placeholder occurs in the content
};

/// Hash, classify and search in one pass over the content. An empty
/// placeholder is never found.
FileScan scan_content(std::span<const u8> bytes, std::string_view placeholder);

/// The same scan fed in consecutive pieces, so a GB-sized library is read in
/// bounded chunks instead of being mapped whole (pack scans files on several
/// threads at once; whole-file maps made the resident set grow by the sizes
/// of the files in flight). UTF-8 sequences and placeholder occurrences may
/// straddle piece boundaries.
class ContentScanner {
 public:
  /// Starts a scan for `placeholder` (empty: never found).
  explicit ContentScanner(std::string_view placeholder);
  /// Scans the next piece of the content; throws Errc::io when hashing fails
  /// (Sha256::update).
  void update(std::span<const u8> bytes);
  /// The result of the whole scan; the scanner is used up.
  FileScan finish();

 private:
  std::string placeholder_;
  Sha256 sha_;
  u64 size_ = 0;
  bool text_ = true;
  bool found_ = false;
  std::string utf8_carry_;   // an incomplete UTF-8 sequence at the end
  std::string search_tail_;  // last placeholder.size()-1 bytes seen
};

}  // namespace libpkg::conda
