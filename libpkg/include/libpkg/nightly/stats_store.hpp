// SPDX-License-Identifier: BSD-3-Clause
// The stats store: every job document with a few indexed columns
// (stats_document.hpp) plus one row per artifact, in an embedded SQLite
// database (`stats.db`, the default) or in PostgreSQL (stats_url.hpp), so
// several build hosts can write to one history. SQLite keeps the JSON text
// as is; PostgreSQL keeps it as JSONB. Either way a new field of the
// documents needs no schema change.
//
// Several writers at once (the runner's queues, ingests from CI) are safe on
// both: each ingest batch is one transaction (a batch with one bad document
// writes nothing), and a document seen by two writers is stored once. Ad-hoc
// queries run read-only. The report reads through the typed calls below,
// which give the same answers on both engines.
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "libpkg/base/integers.hpp"
#include "libpkg/base/thread_pool_fwd.hpp"
#include "libpkg/nightly/stats_document.hpp"
#include "libpkg/nightly/stats_url.hpp"

namespace libpkg::nightly {

namespace detail {
class StatsBackend;
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

/// One document's indexed columns and artifacts, as the report reads them.
struct StoredDocument {
  std::string key, date, package_type, python, accelerator, job, status,
      failure;
  std::string variant;  // StatsRow::variant ("" in rows stored before it)
  std::optional<std::string> log;  // relative to <root>/<YYYY_MM_DD>/
  std::optional<double> duration_s;
  std::vector<StatsArtifact> artifacts;  // name and size (no sha256)
};

/// The stats store (see above) on the engine its location names.
class StatsStore {
 public:
  /// Whether the store may be written.
  enum class Mode { read_write, read_only };
  /// Opens the store at \p location (read_write: creating the SQLite file
  /// and the tables when missing, and adding the `variant` column to a
  /// store made before it, its rows' variant ""). Throws Errc::io naming the
  /// store when it cannot be opened or reached (no such file for read_only, a
  /// server down, a refused login).
  StatsStore(const StatsLocation& location, Mode mode);
  /// Same, for a --stats-url string; also parse_stats_url's errors.
  StatsStore(const std::string& url, Mode mode);
  ~StatsStore();
  StatsStore(const StatsStore&) = delete;
  StatsStore& operator=(const StatsStore&) = delete;

  /// Where the store is.
  const StatsLocation& location() const { return location_; }
  /// The store's name for messages (a path, or a URL without password).
  const std::string& name() const { return location_.name; }

  /// Writes the rows in one transaction (all or nothing). A key given twice
  /// keeps its last row. Throws Errc::io naming the store when the engine
  /// fails, or Errc::format naming a row's source when the engine refuses
  /// its values (PostgreSQL: a NUL character).
  IngestResult ingest(const std::vector<StatsRow>& rows);
  /// One SQL statement in the engine's dialect, read-only (SQLite:
  /// query_only; PostgreSQL: a READ ONLY transaction). Errc::usage for bad
  /// SQL, more than one statement or a statement that would write.
  QueryResult query(const std::string& sql);

  /// The latest date (YYYY-MM-DD) of any document; nullopt when empty.
  /// Throws Errc::io when the engine fails.
  std::optional<std::string> latest_date();
  /// Calls \p fn with each document dated \p first to \p last (inclusive,
  /// YYYY-MM-DD) and its artifacts, ordered by date, start, then the order
  /// documents were first stored (artifacts in the order stored). One scan:
  /// the report over 10^5 documents reads them once. Throws Errc::io when
  /// the engine fails.
  void for_each_document(const std::string& first, const std::string& last,
                         const std::function<void(const StoredDocument&)>& fn);
  /// The JSON text of the document \p key (PostgreSQL gives JSONB's
  /// normalised text); nullopt when there is none. Throws Errc::io.
  std::optional<std::string> document_text(const std::string& key);
  /// Runs \p fn with every read above seeing one snapshot of the store, so
  /// a writer committing meanwhile is not half seen. Throws Errc::io, and
  /// what \p fn throws.
  void read_snapshot(const std::function<void()>& fn);

 private:
  StatsLocation location_;
  std::unique_ptr<detail::StatsBackend> backend_;
};

/// Reads and maps every file before writing anything (stats_row), on the
/// threads of \p pool (null: a private pool, one thread per core, for more
/// than 256 files), then ingests them in one transaction. `date`
/// (YYYY-MM-DD) dates documents that carry none; empty: each file's
/// modification day (UTC). Throws, for the first bad file in file order,
/// stats_row's Errc::format or open_regular's Errc::io (unreadable, not a
/// regular file), and ingest's.
IngestResult ingest_files(StatsStore& store,
                          const std::vector<std::filesystem::path>& files,
                          const std::string& date = "",
                          ThreadPool* pool = nullptr);

}  // namespace libpkg::nightly
