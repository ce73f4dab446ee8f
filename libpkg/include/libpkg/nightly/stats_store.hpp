// SPDX-License-Identifier: BSD-3-Clause
// The stats store: every job document in one embedded SQLite database
// (`stats.db`), the JSON kept as is next to a few indexed columns
// (stats_document.hpp), plus one row per artifact.
//
// Writers use WAL mode and a busy timeout, so the runner's queues and an
// ingest from CI can write at once while a report reads; each ingest batch
// is one transaction (a batch with one bad document writes nothing).
// Queries run on a read-only connection.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "libpkg/base/integers.hpp"
#include "libpkg/nightly/stats_document.hpp"

namespace libpkg::nightly {

namespace detail {
class SqliteDb;
}

/// How many rows an ingest inserted, replaced or left as they were.
struct IngestResult {
  u64 inserted = 0;   // new keys
  u64 replaced = 0;   // same key, other content (a re-run job)
  u64 unchanged = 0;  // same key, same content
};

/// One value of an ad-hoc query's answer (values are kept typed, not as
/// JSON text).
struct QueryCell {
  /// The type of the value held.
  enum class Kind { null, integer, real, text } kind = Kind::null;
  i64 integer = 0;
  double real = 0;
  std::string text;
};
/// The answer of StatsStore::query: column names and typed rows.
struct QueryResult {
  std::vector<std::string> columns;
  std::vector<std::vector<QueryCell>> rows;
};

/// The SQLite database of stats rows (see above).
class StatsStore {
 public:
  /// Whether the store may be written.
  enum class Mode { read_write, read_only };
  /// Opens (read_write: creating it and its schema) the database at `path`.
  /// Throws Errc::io naming the file.
  StatsStore(const std::filesystem::path& path, Mode mode);
  ~StatsStore();
  StatsStore(const StatsStore&) = delete;
  StatsStore& operator=(const StatsStore&) = delete;

  /// The database file.
  const std::filesystem::path& path() const { return path_; }

  /// Writes the rows in one transaction (all or nothing); throws Errc::io
  /// naming the database when SQLite fails.
  IngestResult ingest(const std::vector<StatsRow>& rows);
  /// One SQL statement on a read-only connection; a statement that would
  /// write is refused by SQLite. Errc::usage for bad SQL.
  QueryResult query(const std::string& sql);

  /// The underlying SQLite connection (build_report runs its queries on it).
  detail::SqliteDb& db() { return *db_; }

 private:
  std::filesystem::path path_;
  std::unique_ptr<detail::SqliteDb> db_;
};

/// Reads and maps every file before writing anything (stats_row), then
/// ingests them in one transaction. `date` (YYYY-MM-DD) dates documents
/// that carry none; empty: each file's modification day (UTC). Throws
/// stats_row's Errc::format, MappedFile::open's errors for an unreadable file
/// and ingest's.
IngestResult ingest_files(StatsStore& store,
                          const std::vector<std::filesystem::path>& files,
                          const std::string& date = "");

}  // namespace libpkg::nightly
