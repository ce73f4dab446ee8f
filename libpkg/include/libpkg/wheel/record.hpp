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

struct RecordRow {
  std::string path;
  std::string hash;         // "algo=digest", empty when absent
  std::optional<u64> size;  // empty when absent

  bool operator==(const RecordRow&) const = default;
};

// "sha256=..." for a digest.
std::string record_hash(const std::array<u8, 32>& sha256);
// The digest of a "sha256=..." hash field; nullopt for another algorithm or
// a malformed digest.
std::optional<std::array<u8, 32>> parse_sha256_hash(std::string_view hash);
// The algorithm part of "algo=digest" ("" when there is no '=').
std::string_view hash_algorithm(std::string_view hash);
// Whether `path` is RECORD or one of its signatures in a .dist-info dir
// (rows that carry no hash).
bool is_record_file(std::string_view path);

class Record {
 public:
  // Throws Errc::format naming `file` and the byte offset on malformed CSV
  // (unterminated quote, text after a closing quote), a row without exactly
  // three fields, or a size that is not a non-negative integer.
  static Record parse(std::string_view text, const std::string& file);
  std::string format() const;

  std::vector<RecordRow>& rows() { return rows_; }
  const std::vector<RecordRow>& rows() const { return rows_; }
  void add(RecordRow row) { rows_.push_back(std::move(row)); }
  // The first row for `path`, or nullptr.
  const RecordRow* find(std::string_view path) const;

 private:
  std::vector<RecordRow> rows_;
};

// Python-csv-compatible helpers, exposed for tests and other CSV users.
std::vector<std::vector<std::string>> parse_csv(std::string_view text,
                                                const std::string& file);
std::string format_csv_row(const std::vector<std::string>& fields);

}  // namespace libpkg::wheel
