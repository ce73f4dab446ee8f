// SPDX-License-Identifier: BSD-3-Clause
// The storage interface behind StatsStore: one implementation per engine
// (stats_sqlite_store.cpp, stats_pg_store.cpp). StatsStore does what is
// common (one row per key, sorted by key) and the engines do the SQL, so
// the report's reads give the same answers on both.
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "libpkg/nightly/stats_store.hpp"

namespace libpkg::nightly::detail {

// The indexes, the same SQL on both engines: what the grid, the charts and
// common questions filter on (everything else stays in the document).
inline constexpr const char* kStatsIndexes = R"sql(
CREATE INDEX IF NOT EXISTS documents_date ON documents(date);
CREATE INDEX IF NOT EXISTS documents_config
  ON documents(package_type, python, accelerator);
CREATE INDEX IF NOT EXISTS documents_job ON documents(job);
CREATE INDEX IF NOT EXISTS documents_status ON documents(status);
CREATE INDEX IF NOT EXISTS artifacts_doc ON artifacts(doc_key);
CREATE INDEX IF NOT EXISTS artifacts_name ON artifacts(name);
)sql";

class StatsBackend {
 public:
  virtual ~StatsBackend() = default;

  // `rows` have distinct keys, sorted by key (the order writers take row
  // locks in, so two writers never deadlock); one transaction.
  virtual IngestResult ingest(const std::vector<const StatsRow*>& rows) = 0;
  virtual QueryResult query(const std::string& sql) = 0;

  virtual std::optional<std::string> latest_date() = 0;
  virtual void for_each_document(
      const std::string& first, const std::string& last,
      const std::function<void(const StoredDocument&)>& fn) = 0;
  virtual std::optional<std::string> document_text(const std::string& key) = 0;
  // A read transaction around the calls above (begin, then end or abort).
  virtual void begin_snapshot() = 0;
  virtual void end_snapshot() = 0;
};

// The report's one scan: each document of a date range with its artifacts,
// a document without any as one row of NULL artifact columns. Columns:
// key, date, package_type, python, accelerator, job, status, failure, log,
// duration_s, artifact name, artifact size, variant. `first` and `last` are
// the engine's parameter markers, `stored` its first-stored order of a table
// alias ("rowid", "seq"); `has_variant` false reads a store made before the
// variant column (opened read-only, not upgraded) as all variants "".
std::string report_scan_sql(std::string_view first, std::string_view last,
                            std::string_view stored, bool has_variant);

// Turns the scan's rows into documents with their artifacts, handing each
// complete document to `fn`.
class ScanDocuments {
 public:
  explicit ScanDocuments(const std::function<void(const StoredDocument&)>& fn)
      : fn_(fn) {}
  // Whether the row of `key` starts a document (after handing the previous
  // one over): then its columns are to be set in document().
  bool starts(std::string_view key) {
    if (pending_ && doc_.key == key) return false;
    finish();
    pending_ = true;
    artifacts_ = 0;
    return true;
  }
  StoredDocument& document() { return doc_; }
  // The row's artifact (the artifacts' strings are reused row to row).
  StatsArtifact& add_artifact() {
    if (doc_.artifacts.size() <= artifacts_) doc_.artifacts.emplace_back();
    return doc_.artifacts[artifacts_++];
  }
  // Hands the last document over.
  void finish() {
    if (!pending_) return;
    doc_.artifacts.resize(artifacts_);
    fn_(doc_);
    pending_ = false;
  }

 private:
  const std::function<void(const StoredDocument&)>& fn_;
  StoredDocument doc_;
  std::size_t artifacts_ = 0;
  bool pending_ = false;
};

std::unique_ptr<StatsBackend> open_sqlite_store(
    const std::filesystem::path& path, bool read_only);
std::unique_ptr<StatsBackend> open_postgresql_store(
    const StatsLocation& location, bool read_only);

// Whether a stored document and a new one hold the same JSON value (key
// order and spacing aside, as PostgreSQL's jsonb compares): a re-ingest of
// a re-formatted document leaves the row unchanged on both engines.
bool same_json(const std::string& stored, const std::string& incoming);

}  // namespace libpkg::nightly::detail
