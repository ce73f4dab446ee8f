// SPDX-License-Identifier: BSD-3-Clause
// Text/binary classification and prefix search (one pass per file).
#include "libpkg/conda/prefix.hpp"

#include <algorithm>
#include <cstring>

namespace libpkg::conda {

const char* file_mode_name(FileMode mode) {
  return mode == FileMode::text ? "text" : "binary";
}

namespace {

// Validates bytes[i..] as UTF-8 without NUL. Returns false on an invalid
// byte; otherwise true with `*complete` = the length of the prefix made of
// whole sequences (less than bytes.size() only when the last sequence is cut
// off, which `at_end` makes an error).
bool validate_utf8(std::span<const u8> bytes, std::size_t i, bool at_end,
                   std::size_t* complete) {
  const std::size_t n = bytes.size();
  while (i < n) {
    u8 c = bytes[i];
    if (c < 0x80) {
      if (c == 0) return false;
      ++i;
      continue;
    }
    // Strict UTF-8 (RFC 3629): no overlongs, no surrogates, <= U+10FFFF.
    std::size_t len = 0;
    u8 lo = 0x80, hi = 0xBF;
    if (c >= 0xC2 && c <= 0xDF) {
      len = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
      len = 3;
      if (c == 0xE0) lo = 0xA0;
      if (c == 0xED) hi = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
      len = 4;
      if (c == 0xF0) lo = 0x90;
      if (c == 0xF4) hi = 0x8F;
    } else {
      return false;
    }
    // Check the bytes that are present; a cut-off tail is complete later.
    std::size_t have = std::min(len, n - i);
    if (have >= 2 && (bytes[i + 1] < lo || bytes[i + 1] > hi)) return false;
    for (std::size_t k = 2; k < have; ++k) {
      if (bytes[i + k] < 0x80 || bytes[i + k] > 0xBF) return false;
    }
    if (have < len) {
      if (at_end) return false;
      *complete = i;
      return true;
    }
    i += len;
  }
  *complete = n;
  return true;
}

}  // namespace

bool is_text(std::span<const u8> bytes) {
  std::size_t complete = 0;
  // A BOM (U+FEFF) is valid UTF-8 and needs no special case.
  return validate_utf8(bytes, 0, true, &complete);
}

ContentScanner::ContentScanner(std::string_view placeholder)
    : placeholder_(placeholder) {}

void ContentScanner::update(std::span<const u8> bytes) {
  if (bytes.empty()) return;
  size_ += bytes.size();
  sha_.update(bytes);
  if (text_) {
    // Join the carried partial sequence with the start of this piece; at
    // most 3 + 3 bytes are copied per piece.
    std::span<const u8> rest = bytes;
    if (!utf8_carry_.empty()) {
      // Complete the carried sequence with up to 3 bytes of this piece.
      std::string head = utf8_carry_;
      head.append(reinterpret_cast<const char*>(bytes.data()),
                  std::min<std::size_t>(bytes.size(), 3));
      std::span<const u8> h(reinterpret_cast<const u8*>(head.data()),
                            head.size());
      std::size_t complete = 0;
      if (!validate_utf8(h, 0, false, &complete)) {
        text_ = false;
      } else if (complete < utf8_carry_.size()) {
        // The piece was too short to finish the sequence.
        utf8_carry_ = head.substr(complete);
        rest = {};
      } else {
        rest = bytes.subspan(complete - utf8_carry_.size());
        utf8_carry_.clear();
      }
    }
    if (text_ && !rest.empty()) {
      std::size_t complete = 0;
      if (!validate_utf8(rest, 0, false, &complete)) {
        text_ = false;
      } else {
        utf8_carry_.assign(
            reinterpret_cast<const char*>(rest.data()) + complete,
            rest.size() - complete);
      }
    }
  }
  if (!found_ && !placeholder_.empty()) {
    const std::size_t keep = placeholder_.size() - 1;
    // Occurrences straddling the boundary: tail of the previous piece plus
    // the first placeholder.size()-1 bytes of this one.
    std::string joint = search_tail_;
    joint.append(reinterpret_cast<const char*>(bytes.data()),
                 std::min(keep, bytes.size()));
    if (joint.find(placeholder_) != std::string::npos ||
        ::memmem(bytes.data(), bytes.size(), placeholder_.data(),
                 placeholder_.size()) != nullptr) {
      found_ = true;
    } else {
      std::string combined = search_tail_;
      combined.append(reinterpret_cast<const char*>(bytes.data()) +
                          (bytes.size() > keep ? bytes.size() - keep : 0),
                      std::min(keep, bytes.size()));
      search_tail_ = combined.size() > keep
                         ? combined.substr(combined.size() - keep)
                         : combined;
    }
  }
}

FileScan ContentScanner::finish() {
  FileScan scan;
  scan.size = size_;
  scan.sha256 = sha_.finish();
  scan.mode = text_ && utf8_carry_.empty() ? FileMode::text : FileMode::binary;
  scan.has_prefix = found_;
  return scan;
}

FileScan scan_content(std::span<const u8> bytes, std::string_view placeholder) {
  FileScan scan;
  scan.size = bytes.size();
  scan.sha256 = Sha256::of(bytes);
  scan.mode = is_text(bytes) ? FileMode::text : FileMode::binary;
  if (!placeholder.empty() && !bytes.empty()) {
    scan.has_prefix = ::memmem(bytes.data(), bytes.size(), placeholder.data(),
                               placeholder.size()) != nullptr;
  }
  return scan;
}

}  // namespace libpkg::conda
