// SPDX-License-Identifier: BSD-3-Clause
#include "libpkg/nightly/stats_store.hpp"

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <chrono>

#include "libpkg/base/error.hpp"
#include "libpkg/base/mapped_file.hpp"
#include "stats_sqlite.hpp"

namespace libpkg::nightly {

namespace {

// The columns are what the grid, the charts and common questions filter on;
// everything else stays in `doc` for json_extract.
constexpr const char* kSchema = R"sql(
CREATE TABLE IF NOT EXISTS documents (
  key TEXT PRIMARY KEY,
  schema TEXT NOT NULL,
  date TEXT NOT NULL,
  package_type TEXT NOT NULL,
  python TEXT NOT NULL,
  accelerator TEXT NOT NULL,
  job TEXT NOT NULL,
  status TEXT NOT NULL,
  start TEXT,
  duration_s REAL,
  log TEXT,
  failure TEXT NOT NULL,
  doc TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS documents_date ON documents(date);
CREATE INDEX IF NOT EXISTS documents_config
  ON documents(package_type, python, accelerator);
CREATE INDEX IF NOT EXISTS documents_job ON documents(job);
CREATE INDEX IF NOT EXISTS documents_status ON documents(status);
CREATE TABLE IF NOT EXISTS artifacts (
  doc_key TEXT NOT NULL REFERENCES documents(key) ON DELETE CASCADE,
  name TEXT NOT NULL,
  size INTEGER NOT NULL,
  sha256 TEXT
);
CREATE INDEX IF NOT EXISTS artifacts_doc ON artifacts(doc_key);
CREATE INDEX IF NOT EXISTS artifacts_name ON artifacts(name);
)sql";

std::string file_day(const std::filesystem::path& file) {
  std::error_code ec;
  auto t = std::filesystem::last_write_time(file, ec);
  if (ec) throw Error(Errc::io, file.string(), ec.message());
  auto sys = std::chrono::file_clock::to_sys(t);
  return fmt::format("{:%Y-%m-%d}", std::chrono::floor<std::chrono::days>(sys));
}

}  // namespace

StatsStore::StatsStore(const std::filesystem::path& path, Mode mode)
    : path_(path),
      db_(std::make_unique<detail::SqliteDb>(path, mode == Mode::read_only)) {
  if (mode == Mode::read_only) {
    db_->exec("PRAGMA query_only = 1;");
    return;
  }
  // WAL: readers (a report) never block the writers and vice versa;
  // synchronous=NORMAL is durable at each checkpoint, enough for stats.
  db_->exec("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;");
  db_->exec(kSchema);
}

StatsStore::~StatsStore() = default;

IngestResult StatsStore::ingest(const std::vector<StatsRow>& rows) {
  IngestResult result;
  // IMMEDIATE takes the write lock up front (waiting up to the busy
  // timeout), so two writers serialise instead of one failing at commit.
  db_->exec("BEGIN IMMEDIATE;");
  try {
    detail::SqliteStmt existing(*db_,
                                "SELECT doc FROM documents WHERE key = ?");
    detail::SqliteStmt upsert(*db_, R"sql(
      INSERT INTO documents(key, schema, date, package_type, python,
        accelerator, job, status, start, duration_s, log, failure, doc)
      VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)
      ON CONFLICT(key) DO UPDATE SET schema = ?2, date = ?3,
        package_type = ?4, python = ?5, accelerator = ?6, job = ?7,
        status = ?8, start = ?9, duration_s = ?10, log = ?11, failure = ?12,
        doc = ?13)sql");
    detail::SqliteStmt drop(*db_, "DELETE FROM artifacts WHERE doc_key = ?");
    detail::SqliteStmt add(
        *db_,
        "INSERT INTO artifacts(doc_key, name, size, sha256) VALUES (?,?,?,?)");
    for (const StatsRow& row : rows) {
      existing.bind(1, row.key);
      bool found = existing.step();
      bool same = found && existing.text(0) == row.doc;
      existing.reset();
      if (same) {
        ++result.unchanged;
        continue;
      }
      ++(found ? result.replaced : result.inserted);
      upsert.bind(1, row.key);
      upsert.bind(2, row.schema);
      upsert.bind(3, row.date);
      upsert.bind(4, row.package_type);
      upsert.bind(5, row.python);
      upsert.bind(6, row.accelerator);
      upsert.bind(7, row.job);
      upsert.bind(8, row.status);
      upsert.bind_optional(9, row.start);
      if (row.duration_s)
        upsert.bind(10, *row.duration_s);
      else
        upsert.bind_null(10);
      upsert.bind_optional(11, row.log);
      upsert.bind(12, row.failure);
      upsert.bind(13, row.doc);
      upsert.run();
      if (found) {
        drop.bind(1, row.key);
        drop.run();
      }
      for (const StatsArtifact& a : row.artifacts) {
        add.bind(1, row.key);
        add.bind(2, a.name);
        add.bind(3, static_cast<i64>(a.size));
        add.bind_optional(4, a.sha256);
        add.run();
      }
    }
  } catch (...) {
    db_->exec("ROLLBACK;");
    throw;
  }
  db_->exec("COMMIT;");
  return result;
}

QueryResult StatsStore::query(const std::string& sql) {
  detail::SqliteStmt stmt(*db_, sql, Errc::usage);
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

IngestResult ingest_files(StatsStore& store,
                          const std::vector<std::filesystem::path>& files,
                          const std::string& date) {
  std::vector<StatsRow> rows;
  rows.reserve(files.size());
  for (const auto& file : files) {
    MappedFile mapped = MappedFile::open(file);
    std::string text(reinterpret_cast<const char*>(mapped.data()),
                     mapped.size());
    rows.push_back(stats_row(std::move(text), file.string(),
                             date.empty() ? file_day(file) : date));
  }
  return store.ingest(rows);
}

}  // namespace libpkg::nightly
