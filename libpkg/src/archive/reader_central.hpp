// SPDX-License-Identifier: BSD-3-Clause
// Central-directory parsing for ZipReader (private to the archive layer).
//
// Split from zip_reader.cpp so each step of validating an untrusted archive
// (find the end records, parse the entries, check them against the local
// headers and the limits) reads on its own and can be tested through the
// public reader.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "libpkg/archive/zip_reader.hpp"
#include "libpkg/base/bytes.hpp"

namespace libpkg::archive::reader {

struct CentralDirectoryLocation {
  u64 offset = 0;   // first central header
  u64 size = 0;     // bytes of central headers
  u64 entries = 0;  // declared number of entries
  // Where the end records start (ZIP64 end record or classic end record):
  // the central directory must end exactly here.
  u64 end_records = 0;
};

// Finds the end of central directory record (searching backwards through the
// longest possible comment) and, when present, the ZIP64 locator and end
// record. Throws Errc::format / Errc::unsupported naming the file.
CentralDirectoryLocation locate_central_directory(const ByteView& file);

// Parses every central header (ZIP64 extra fields included); checks methods,
// encryption, name lengths and the per-entry and total limits.
std::vector<ZipEntry> parse_central_directory(
    const ByteView& file, const CentralDirectoryLocation& where,
    const ZipLimits& limits);

// Checks each local header against its central header and sets data_offset
// from the local name/extra lengths; then refuses members whose
// [local header, data end) overlaps the next member or the central directory.
void resolve_local_headers(const ByteView& file, u64 cd_offset,
                           std::vector<ZipEntry>& entries);

// A member name for messages: control bytes as \xNN, so a hostile name
// cannot forge terminal output.
std::string printable_name(std::string_view name);

// "stored", "deflated", "bzip2", ... or "method N".
std::string method_name(u16 method);

}  // namespace libpkg::archive::reader
