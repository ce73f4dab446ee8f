// SPDX-License-Identifier: BSD-3-Clause
// The stats store on SQLite: one file (stats.db) in WAL mode, the document
// text kept as is, json_extract(doc, '$.field') for any field.
#include <nlohmann/json.hpp>

#include "libpkg/base/error.hpp"
#include "stats_backend.hpp"
#include "stats_sqlite.hpp"

namespace libpkg::nightly::detail {

namespace {

// The tables (kStatsIndexes for the indexes); `doc` keeps the document's
// text for json_extract.
constexpr const char* kSchema = R"sql(
CREATE TABLE IF NOT EXISTS documents (
  key TEXT PRIMARY KEY,
  schema TEXT NOT NULL,
  date TEXT NOT NULL,
  package_type TEXT NOT NULL,
  python TEXT NOT NULL,
  accelerator TEXT NOT NULL,
  variant TEXT NOT NULL DEFAULT '',
  job TEXT NOT NULL,
  status TEXT NOT NULL,
  start TEXT,
  duration_s REAL,
  log TEXT,
  failure TEXT NOT NULL,
  doc TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS artifacts (
  doc_key TEXT NOT NULL REFERENCES documents(key) ON DELETE CASCADE,
  name TEXT NOT NULL,
  size INTEGER NOT NULL,
  sha256 TEXT
);
)sql";

// Whether `documents` has the variant column (a store made before it has
// not).
bool has_variant_column(SqliteDb& db) {
  SqliteStmt s(db,
               "SELECT 1 FROM pragma_table_info('documents') "
               "WHERE name = 'variant'");
  return s.step();
}

class SqliteStore final : public StatsBackend {
 public:
  SqliteStore(const std::filesystem::path& path, bool read_only)
      : db_(path, read_only) {
    // Reads map the file instead of a pread(2) and a copy per 4 KiB page
    // (the all-nights report reads every page of 10^5 documents).
    db_.exec("PRAGMA mmap_size = 1073741824;");
    if (read_only) {
      db_.exec("PRAGMA query_only = 1;");
      // A store made before the variant column is read as it is (a reader
      // does not write): its rows' variant is "".
      has_variant_ = has_variant_column(db_);
      return;
    }
    // WAL: readers (a report) never block the writers and vice versa;
    // synchronous=NORMAL is durable at each checkpoint, enough for stats.
    db_.exec("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;");
    // A batch of 10^5 documents touches the same index pages again and
    // again: with SQLite's 2 MB default cache they are spilled to the WAL
    // (and written) many times before the commit.
    db_.exec("PRAGMA cache_size = -65536;");
    db_.exec(kSchema);
    db_.exec(kStatsIndexes);
    upgrade();
  }

  IngestResult ingest(const std::vector<const StatsRow*>& rows) override {
    IngestResult result;
    // IMMEDIATE takes the write lock up front (waiting up to the busy
    // timeout), so two writers serialise instead of one failing at commit.
    db_.exec("BEGIN IMMEDIATE;");
    try {
      SqliteStmt existing(db_,
                          "SELECT doc, variant FROM documents WHERE key = ?");
      SqliteStmt upsert(db_, R"sql(
        INSERT INTO documents(key, schema, date, package_type, python,
          accelerator, job, status, start, duration_s, log, failure, doc,
          variant)
        VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)
        ON CONFLICT(key) DO UPDATE SET schema = ?2, date = ?3,
          package_type = ?4, python = ?5, accelerator = ?6, job = ?7,
          status = ?8, start = ?9, duration_s = ?10, log = ?11, failure = ?12,
          doc = ?13, variant = ?14)sql");
      SqliteStmt drop(db_, "DELETE FROM artifacts WHERE doc_key = ?");
      SqliteStmt add(db_,
                     "INSERT INTO artifacts(doc_key, name, size, sha256) "
                     "VALUES (?,?,?,?)");
      for (const StatsRow* row : rows) {
        existing.bind(1, row->key);
        const bool found = existing.step();
        // A row stored before the variant column has variant "": the same
        // document ingested again fills it in.
        const bool same = found && existing.text(1) == row->variant &&
                          same_json(existing.text(0), row->doc);
        existing.reset();
        if (same) {
          ++result.unchanged;
          continue;
        }
        ++(found ? result.replaced : result.inserted);
        upsert.bind(1, row->key);
        upsert.bind(2, row->schema);
        upsert.bind(3, row->date);
        upsert.bind(4, row->package_type);
        upsert.bind(5, row->python);
        upsert.bind(6, row->accelerator);
        upsert.bind(7, row->job);
        upsert.bind(8, row->status);
        upsert.bind_optional(9, row->start);
        if (row->duration_s)
          upsert.bind(10, *row->duration_s);
        else
          upsert.bind_null(10);
        upsert.bind_optional(11, row->log);
        upsert.bind(12, row->failure);
        upsert.bind(13, row->doc);
        upsert.bind(14, row->variant);
        upsert.run();
        if (found) {
          drop.bind(1, row->key);
          drop.run();
        }
        for (const StatsArtifact& a : row->artifacts) {
          add.bind(1, row->key);
          add.bind(2, a.name);
          add.bind(3, static_cast<i64>(a.size));
          add.bind_optional(4, a.sha256);
          add.run();
        }
      }
    } catch (...) {
      db_.exec("ROLLBACK;");
      throw;
    }
    db_.exec("COMMIT;");
    return result;
  }

  QueryResult query(const std::string& sql) override {
    SqliteStmt stmt(db_, sql, Errc::usage);
    QueryResult out;
    sqlite3_stmt* s = stmt.handle();
    const int n = sqlite3_column_count(s);
    for (int i = 0; i < n; ++i)
      out.columns.emplace_back(sqlite3_column_name(s, i));
    while (stmt.step()) {
      std::vector<QueryCell> row(static_cast<std::size_t>(n));
      for (int i = 0; i < n; ++i) {
        QueryCell& c = row[static_cast<std::size_t>(i)];
        switch (sqlite3_column_type(s, i)) {
          case SQLITE_INTEGER:
            c.kind = QueryCell::Kind::integer;
            c.integer = stmt.integer(i);
            break;
          case SQLITE_FLOAT:
            c.kind = QueryCell::Kind::real;
            c.real = stmt.real(i);
            break;
          case SQLITE_NULL:
            break;
          default:  // text, and blobs shown as their bytes
            c.kind = QueryCell::Kind::text;
            c.text = stmt.text(i);
        }
      }
      out.rows.push_back(std::move(row));
    }
    return out;
  }

  std::optional<std::string> latest_date() override {
    SqliteStmt s(db_, "SELECT max(date) FROM documents");
    if (s.step() && !s.is_null(0)) return s.text(0);
    return std::nullopt;
  }

  void for_each_document(
      const std::string& first, const std::string& last,
      const std::function<void(const StoredDocument&)>& fn) override {
    // rowid: the order rows were first stored (an upsert keeps it).
    SqliteStmt s(db_, report_scan_sql("?1", "?2", "rowid", has_variant_));
    s.bind(1, first);
    s.bind(2, last);
    ScanDocuments scan(fn);
    while (s.step()) {
      const auto* key = sqlite3_column_text(s.handle(), 0);
      if (scan.starts({reinterpret_cast<const char*>(key),
                       static_cast<std::size_t>(
                           sqlite3_column_bytes(s.handle(), 0))})) {
        StoredDocument& d = scan.document();
        s.text_into(0, d.key);
        s.text_into(1, d.date);
        s.text_into(2, d.package_type);
        s.text_into(3, d.python);
        s.text_into(4, d.accelerator);
        s.text_into(5, d.job);
        s.text_into(6, d.status);
        s.text_into(7, d.failure);
        s.text_into(12, d.variant);
        if (s.is_null(8))
          d.log.reset();
        else
          s.text_into(8, d.log.emplace());
        if (s.is_null(9))
          d.duration_s.reset();
        else
          d.duration_s = s.real(9);
      }
      if (s.is_null(10)) continue;
      StatsArtifact& a = scan.add_artifact();
      s.text_into(10, a.name);
      a.size = static_cast<u64>(s.integer(11));
    }
    scan.finish();
  }

  std::optional<std::string> document_text(const std::string& key) override {
    SqliteStmt s(db_, "SELECT doc FROM documents WHERE key = ?");
    s.bind(1, key);
    if (s.step()) return s.text(0);
    return std::nullopt;
  }

  // A deferred BEGIN takes its WAL snapshot at the first read.
  void begin_snapshot() override { db_.exec("BEGIN;"); }
  void end_snapshot() override { db_.exec("COMMIT;"); }

 private:
  // A store made before the variant column gains it, its rows' variant ""
  // (ADD COLUMN rewrites nothing). Under the write lock, checked again: two
  // writers opening an old store at once add it once.
  void upgrade() {
    if (has_variant_column(db_)) return;
    db_.exec("BEGIN IMMEDIATE;");
    try {
      if (!has_variant_column(db_))
        db_.exec(
            "ALTER TABLE documents ADD COLUMN variant TEXT NOT NULL "
            "DEFAULT '';");
    } catch (...) {
      db_.exec("ROLLBACK;");
      throw;
    }
    db_.exec("COMMIT;");
  }

  SqliteDb db_;
  bool has_variant_ = true;
};

}  // namespace

std::unique_ptr<StatsBackend> open_sqlite_store(
    const std::filesystem::path& path, bool read_only) {
  return std::make_unique<SqliteStore>(path, read_only);
}

bool same_json(const std::string& stored, const std::string& incoming) {
  if (stored == incoming) return true;
  auto a = nlohmann::json::parse(stored, nullptr, false);
  auto b = nlohmann::json::parse(incoming, nullptr, false);
  return !a.is_discarded() && !b.is_discarded() && a == b;
}

}  // namespace libpkg::nightly::detail
