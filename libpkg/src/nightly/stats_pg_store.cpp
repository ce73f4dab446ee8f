// SPDX-License-Identifier: BSD-3-Clause
// The stats store on PostgreSQL (--stats-url postgresql://...): the same
// tables as on SQLite, the document in a JSONB column (doc->>'host',
// jsonb_path_query(doc, '$.steps[*].name') for any field, no migration to
// add one), so several build hosts and CI jobs write to one history.
//
// An ingest batch goes in with COPY into temporary tables and one
// INSERT ... ON CONFLICT in key order: each document is written once even
// when two writers send it at the same time, and nothing of a batch is
// visible before its COMMIT.
#include <fmt/format.h>

#include <charconv>

#include "libpkg/base/error.hpp"
#include "stats_backend.hpp"
#include "stats_pg.hpp"

namespace libpkg::nightly::detail {

namespace {

// `seq` is the order documents were first stored (an upsert keeps it), the
// report's last tie-break as SQLite's rowid. Dates and start times compare
// byte-wise ("C") whatever the database's collation.
constexpr const char* kSchema = R"sql(
CREATE TABLE IF NOT EXISTS documents (
  key text COLLATE "C" PRIMARY KEY,
  schema text NOT NULL,
  date text COLLATE "C" NOT NULL,
  package_type text NOT NULL,
  python text NOT NULL,
  accelerator text NOT NULL,
  variant text NOT NULL DEFAULT '',
  job text NOT NULL,
  status text NOT NULL,
  start text COLLATE "C",
  duration_s double precision,
  log text,
  failure text NOT NULL,
  doc jsonb NOT NULL,
  seq bigserial NOT NULL
);
CREATE TABLE IF NOT EXISTS artifacts (
  doc_key text COLLATE "C" NOT NULL
    REFERENCES documents(key) ON DELETE CASCADE,
  name text NOT NULL,
  size bigint NOT NULL,
  sha256 text,
  seq bigserial NOT NULL
);
)sql";

// Any constant: serialises the schema creation of concurrent first writers
// (two CREATE TABLE IF NOT EXISTS at once can both try to create).
constexpr const char* kSchemaLock = "SELECT pg_advisory_xact_lock(2026112420)";

constexpr const char* kStage = R"sql(
CREATE TEMP TABLE stage_documents (
  ord integer, key text COLLATE "C", schema text, date text, package_type text,
  python text, accelerator text, job text, status text, start text,
  duration_s double precision, log text, failure text, doc jsonb,
  variant text
) ON COMMIT DROP;
CREATE TEMP TABLE stage_artifacts (
  ord integer, key text COLLATE "C", name text, size bigint, sha256 text
) ON COMMIT DROP;
CREATE TEMP TABLE stage_changed (key text COLLATE "C", inserted boolean)
  ON COMMIT DROP;
)sql";

// Inserted rows have xmax 0; updated ones carry this transaction's id. A row
// whose document is the same JSON value is left alone (no row returned).
constexpr const char* kUpsert = R"sql(
WITH up AS (
  INSERT INTO documents AS d (key, schema, date, package_type, python,
    accelerator, job, status, start, duration_s, log, failure, doc, variant)
  SELECT key, schema, date, package_type, python, accelerator, job, status,
         start, duration_s, log, failure, doc, variant
  FROM stage_documents ORDER BY key
  ON CONFLICT (key) DO UPDATE SET schema = EXCLUDED.schema,
    date = EXCLUDED.date, package_type = EXCLUDED.package_type,
    python = EXCLUDED.python, accelerator = EXCLUDED.accelerator,
    job = EXCLUDED.job, status = EXCLUDED.status, start = EXCLUDED.start,
    duration_s = EXCLUDED.duration_s, log = EXCLUDED.log,
    failure = EXCLUDED.failure, doc = EXCLUDED.doc, variant = EXCLUDED.variant
  WHERE d.doc IS DISTINCT FROM EXCLUDED.doc
     OR d.variant IS DISTINCT FROM EXCLUDED.variant
  RETURNING d.key, (d.xmax = 0) AS inserted)
INSERT INTO stage_changed SELECT key, inserted FROM up
)sql";

constexpr const char* kArtifacts = R"sql(
DELETE FROM artifacts a USING stage_changed c
  WHERE a.doc_key = c.key AND NOT c.inserted;
INSERT INTO artifacts (doc_key, name, size, sha256)
  SELECT s.key, s.name, s.size, s.sha256
  FROM stage_artifacts s JOIN stage_changed c ON c.key = s.key
  ORDER BY s.ord;
)sql";

double to_double(std::string_view v) {
  double out = 0;
  std::from_chars(v.data(), v.data() + v.size(), out);
  return out;
}

i64 to_integer(std::string_view v) {
  i64 out = 0;
  std::from_chars(v.data(), v.data() + v.size(), out);
  return out;
}

// Typed cells for the OIDs of PostgreSQL's built-in types (pg_type.dat):
// integers and floats as numbers, booleans as 1/0 as SQLite gives them,
// numeric as an integer when it is one, everything else as its text.
QueryCell cell(const PgResult& r, int row, int column) {
  QueryCell c;
  if (r.is_null(row, column)) return c;
  std::string_view v = r.text(row, column);
  switch (pq().PQftype(r.get(), column)) {
    case 20:  // int8
    case 21:  // int2
    case 23:  // int4
      c.kind = QueryCell::Kind::integer;
      c.integer = to_integer(v);
      return c;
    case 16:  // bool
      c.kind = QueryCell::Kind::integer;
      c.integer = v == "t";
      return c;
    case 700:  // float4
    case 701:  // float8
      c.kind = QueryCell::Kind::real;
      c.real = to_double(v);
      return c;
    case 1700:  // numeric
      if (v.find_first_of(".eEN") == std::string_view::npos) {
        i64 n = 0;
        auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
        if (ec == std::errc() && end == v.data() + v.size()) {
          c.kind = QueryCell::Kind::integer;
          c.integer = n;
          return c;
        }
      }
      c.kind = QueryCell::Kind::real;
      c.real = to_double(v);
      return c;
    default:
      c.kind = QueryCell::Kind::text;
      c.text = std::string(v);
      return c;
  }
}

class PgStore final : public StatsBackend {
 public:
  PgStore(const StatsLocation& location, bool read_only) : conn_(location) {
    if (read_only) {
      conn_.exec("SET default_transaction_read_only = on");
      PgResult r = conn_.query(
          "SELECT to_regclass('documents') IS NOT NULL AND "
          "to_regclass('artifacts') IS NOT NULL");
      if (r.text(0, 0) != "t")
        throw Error(Errc::io, conn_.name(),
                    "no stats tables (documents, artifacts) in this "
                    "database: ingest documents first");
      // A store made before the variant column is read as it is: its
      // rows' variant is "".
      has_variant_ = has_variant_column();
      return;
    }
    create_schema();
  }

  IngestResult ingest(const std::vector<const StatsRow*>& rows) override {
    conn_.ensure_connected();
    // The COPY lines of the documents, then of their artifacts, made as
    // they are sent.
    std::size_t row_at = 0, artifact_row = 0, artifact_at = 0;
    std::string ord, duration, size;
    auto next_document = [&](std::string& out) {
      if (row_at == rows.size()) return false;
      const StatsRow& row = *rows[row_at];
      ord = std::to_string(row_at++);
      duration.clear();
      if (row.duration_s) duration = fmt::format("{}", *row.duration_s);
      const std::string* fields[] = {&ord,
                                     &row.key,
                                     &row.schema,
                                     &row.date,
                                     &row.package_type,
                                     &row.python,
                                     &row.accelerator,
                                     &row.job,
                                     &row.status,
                                     row.start ? &*row.start : nullptr,
                                     row.duration_s ? &duration : nullptr,
                                     row.log ? &*row.log : nullptr,
                                     &row.failure,
                                     &row.doc,
                                     &row.variant};
      append_line(out, fields);
      return row_at < rows.size();
    };
    auto next_artifact = [&](std::string& out) {
      while (artifact_row < rows.size() &&
             artifact_at == rows[artifact_row]->artifacts.size()) {
        ++artifact_row;
        artifact_at = 0;
      }
      if (artifact_row == rows.size()) return false;
      const StatsRow& row = *rows[artifact_row];
      const StatsArtifact& a = row.artifacts[artifact_at++];
      ord = std::to_string(artifact_row);
      size = std::to_string(a.size);
      const std::string* fields[] = {&ord, &row.key, &a.name, &size,
                                     a.sha256 ? &*a.sha256 : nullptr};
      append_line(out, fields);
      return true;
    };
    // A refused line of documents names the document's file: it is the one
    // to fix (PostgreSQL stores no NUL character, in text or in JSONB).
    auto refused_document = [&rows](long line, const std::string& message) {
      if (line >= 1 && static_cast<std::size_t>(line) <= rows.size())
        throw Error(Errc::format,
                    rows[static_cast<std::size_t>(line - 1)]->source,
                    "PostgreSQL refused the document: " + message);
    };
    auto refused_artifact = [](long, const std::string&) {};
    conn_.exec("BEGIN");
    try {
      conn_.exec(kStage);
      conn_.copy_in("COPY stage_documents FROM STDIN", next_document,
                    refused_document);
      conn_.copy_in("COPY stage_artifacts FROM STDIN", next_artifact,
                    refused_artifact);
      conn_.exec(kUpsert);
      conn_.exec(kArtifacts);
      PgResult counts = conn_.query(
          "SELECT count(*) FILTER (WHERE inserted), "
          "count(*) FILTER (WHERE NOT inserted) FROM stage_changed");
      IngestResult result;
      result.inserted = static_cast<u64>(to_integer(counts.text(0, 0)));
      result.replaced = static_cast<u64>(to_integer(counts.text(0, 1)));
      result.unchanged = rows.size() - result.inserted - result.replaced;
      conn_.exec("COMMIT");
      return result;
    } catch (...) {
      rollback();
      throw;
    }
  }

  QueryResult query(const std::string& sql) override {
    // The user's statement in its own READ ONLY transaction: the server
    // refuses any write. PQexecParams takes exactly one statement.
    conn_.exec("BEGIN TRANSACTION READ ONLY");
    try {
      PgResult r = conn_.query(sql, {}, Errc::usage);
      QueryResult out;
      for (int c = 0; c < r.columns(); ++c)
        out.columns.emplace_back(pq().PQfname(r.get(), c));
      for (int row = 0; row < r.rows(); ++row) {
        auto& cells = out.rows.emplace_back();
        for (int c = 0; c < r.columns(); ++c) cells.push_back(cell(r, row, c));
      }
      rollback();
      return out;
    } catch (...) {
      rollback();
      throw;
    }
  }

  std::optional<std::string> latest_date() override {
    PgResult r = conn_.query("SELECT max(date) FROM documents");
    if (r.rows() == 0 || r.is_null(0, 0)) return std::nullopt;
    return std::string(r.text(0, 0));
  }

  void for_each_document(
      const std::string& first, const std::string& last,
      const std::function<void(const StoredDocument&)>& fn) override {
    ScanDocuments scan(fn);
    conn_.stream(report_scan_sql("$1", "$2", "seq", has_variant_),
                 {first.c_str(), last.c_str()}, [&](const PgResult& r) {
                   if (scan.starts(r.text(0, 0))) {
                     StoredDocument& d = scan.document();
                     d.key = r.text(0, 0);
                     d.date = r.text(0, 1);
                     d.package_type = r.text(0, 2);
                     d.python = r.text(0, 3);
                     d.accelerator = r.text(0, 4);
                     d.job = r.text(0, 5);
                     d.status = r.text(0, 6);
                     d.failure = r.text(0, 7);
                     d.variant = r.text(0, 12);
                     if (r.is_null(0, 8))
                       d.log.reset();
                     else
                       d.log = r.text(0, 8);
                     if (r.is_null(0, 9))
                       d.duration_s.reset();
                     else
                       d.duration_s = to_double(r.text(0, 9));
                   }
                   if (r.is_null(0, 10)) return;
                   StatsArtifact& a = scan.add_artifact();
                   a.name = r.text(0, 10);
                   a.size = static_cast<u64>(to_integer(r.text(0, 11)));
                 });
    scan.finish();
  }

  std::optional<std::string> document_text(const std::string& key) override {
    PgResult r = conn_.query("SELECT doc::text FROM documents WHERE key = $1",
                             {key.c_str()});
    if (r.rows() == 0) return std::nullopt;
    return std::string(r.text(0, 0));
  }

  void begin_snapshot() override {
    conn_.exec("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
  }
  void end_snapshot() override { conn_.exec("COMMIT"); }

 private:
  template <std::size_t N>
  static void append_line(std::string& out, const std::string* (&fields)[N]) {
    for (std::size_t i = 0; i < N; ++i) {
      if (i) out += '\t';
      append_copy_field(out, fields[i]);
    }
    out += '\n';
  }

  bool has_variant_column() {
    return conn_
               .query(
                   "SELECT EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid "
                   "= to_regclass('documents') AND attname = 'variant' AND "
                   "NOT attisdropped)")
               .text(0, 0) == "t";
  }

  void create_schema() {
    // Only when a table or the variant column is missing: CREATE ... IF
    // NOT EXISTS still needs the CREATE privilege, which a writer-only role
    // may not have (adding the column needs the tables' owner).
    const char* exists =
        "SELECT to_regclass('documents') IS NOT NULL AND "
        "to_regclass('artifacts') IS NOT NULL";
    if (conn_.query(exists).text(0, 0) == "t" && has_variant_column()) return;
    conn_.exec("BEGIN");
    try {
      conn_.exec(kSchemaLock);
      conn_.exec(kSchema);
      // A store made before the variant column gains it, its rows' variant
      // "" (a constant default rewrites no row).
      conn_.exec(
          "ALTER TABLE documents ADD COLUMN IF NOT EXISTS variant text NOT "
          "NULL DEFAULT ''");
      conn_.exec(kStatsIndexes);
      conn_.exec("COMMIT");
    } catch (...) {
      rollback();
      throw;
    }
  }

  void rollback() {
    // After a lost connection there is nothing to roll back.
    if (pq().PQstatus(conn_.handle()) != CONNECTION_OK) return;
    PgResult r(pq().PQexec(conn_.handle(), "ROLLBACK"));
  }

  PgConn conn_;
  bool has_variant_ = true;
};

}  // namespace

std::unique_ptr<StatsBackend> open_postgresql_store(
    const StatsLocation& location, bool read_only) {
  return std::make_unique<PgStore>(location, read_only);
}

}  // namespace libpkg::nightly::detail
