// SPDX-License-Identifier: BSD-3-Clause
// The RECORD file of a wheel: one CSV row per member,
//   path,sha256=<urlsafe base64 of the digest, no '=' padding>,size
// with empty hash and size for RECORD itself and its signatures
// (RECORD.jws, RECORD.p7s). The CSV dialect is Python's csv module as
// `wheel` uses it: ',' separated, '\n' line ends, fields quoted with '"'
// only when they contain ',', '"', '\r' or '\n', quotes doubled inside.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "libpkg/base/integers.hpp"

namespace libpkg::wheel {

/// One RECORD row: path, "algo=digest" hash and size, either of the last two
/// possibly absent.
struct RecordRow {
  std::string path;
  std::string hash;         // "algo=digest", empty when absent
  std::optional<u64> size;  // empty when absent

  bool operator==(const RecordRow&) const = default;
};

/// "sha256=..." for a digest.
/// Never throws.
std::string record_hash(const std::array<u8, 32>& sha256);
/// The digest of a "sha256=..." hash field; nullopt for another algorithm or
/// a malformed digest.
/// Never throws.
std::optional<std::array<u8, 32>> parse_sha256_hash(std::string_view hash);
/// The algorithm part of "algo=digest" ("" when there is no '=').
/// Never throws.
std::string_view hash_algorithm(std::string_view hash);
/// Whether `path` is RECORD or one of its signatures in a .dist-info dir
/// (rows that carry no hash).
/// Never throws.
bool is_record_file(std::string_view path);

/// The rows of a RECORD file, in file order.
class Record {
 public:
  /// Throws Errc::format naming `file` and the byte offset on malformed CSV
  /// (unterminated quote, text after a closing quote), a row without exactly
  /// three fields, an empty path, or a size that is not a non-negative
  /// integer.
  static Record parse(std::string_view text, const std::string& file);
  /// The RECORD text, one Python-csv row per row in order; never throws.
  std::string format() const;

  /// The rows, in order, for editing.
  std::vector<RecordRow>& rows() { return rows_; }
  const std::vector<RecordRow>& rows() const { return rows_; }
  /// Appends `row` (no check for a duplicate path).
  void add(RecordRow row) { rows_.push_back(std::move(row)); }
  /// The first row for `path`, or nullptr.
  /// Never throws.
  const RecordRow* find(std::string_view path) const;

 private:
  std::vector<RecordRow> rows_;
};

/// Python-csv-compatible helpers, exposed for tests and other CSV users.
/// parse_csv splits `text` into rows of fields; throws Error(Errc::format)
/// naming `file` and the byte offset on an unterminated quote or text after a
/// closing quote.
std::vector<std::vector<std::string>> parse_csv(std::string_view text,
                                                const std::string& file);
/// Formats one row with Python csv's quoting and a '\n' line end; never throws.
std::string format_csv_row(const std::vector<std::string>& fields);

}  // namespace libpkg::wheel
