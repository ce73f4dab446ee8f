// SPDX-License-Identifier: BSD-3-Clause
#include "libpkg/nightly/stats_store.hpp"

#include <fmt/chrono.h>
#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>

#include "libpkg/base/error.hpp"
#include "libpkg/base/fd.hpp"
#include "libpkg/base/thread_pool.hpp"
#include "stats_backend.hpp"

namespace libpkg::nightly {

namespace {

// A document's text and its file's modification day (UTC), read with one
// open: 10^5 small files cost their syscalls, not a mapping each.
struct DocumentFile {
  std::string text;
  std::string day;  // YYYY-MM-DD
};

DocumentFile read_document(const std::filesystem::path& file) {
  const std::string name = file.string();
  Fd fd = open_regular(file, name);  // never blocks on a FIFO
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) throw_errno(name, "cannot stat");
  DocumentFile out;
  const auto mtime =
      std::chrono::sys_seconds(std::chrono::seconds(st.st_mtim.tv_sec));
  out.day =
      fmt::format("{:%Y-%m-%d}", std::chrono::floor<std::chrono::days>(mtime));
  // The size is a hint: read to the end (the file may have grown).
  out.text.resize(static_cast<std::size_t>(st.st_size) + 1);
  std::size_t used = 0;
  for (;;) {
    std::size_t n = read_full(
        fd.get(),
        {reinterpret_cast<u8*>(out.text.data()) + used, out.text.size() - used},
        name);
    used += n;
    if (used < out.text.size()) break;
    out.text.resize(out.text.size() * 2);
  }
  out.text.resize(used);
  return out;
}

std::unique_ptr<detail::StatsBackend> open_backend(
    const StatsLocation& location, StatsStore::Mode mode) {
  const bool read_only = mode == StatsStore::Mode::read_only;
  if (location.kind == StatsBackendKind::postgresql)
    return detail::open_postgresql_store(location, read_only);
  return detail::open_sqlite_store(location.path, read_only);
}

}  // namespace

namespace detail {

std::string report_scan_sql(std::string_view first, std::string_view last,
                            std::string_view stored, bool has_variant) {
  return fmt::format(R"sql(
    SELECT d.key, d.date, d.package_type, d.python, d.accelerator, d.job,
           d.status, d.failure, d.log, d.duration_s, a.name, a.size, {3}
    FROM documents d LEFT JOIN artifacts a ON a.doc_key = d.key
    WHERE d.date >= {0} AND d.date <= {1}
    ORDER BY d.date, coalesce(d.start, ''), d.{2}, a.{2})sql",
                     first, last, stored, has_variant ? "d.variant" : "''");
}

}  // namespace detail

StatsStore::StatsStore(const StatsLocation& location, Mode mode)
    : location_(location), backend_(open_backend(location, mode)) {}

StatsStore::StatsStore(const std::string& url, Mode mode)
    : StatsStore(parse_stats_url(url), mode) {}

StatsStore::~StatsStore() = default;

IngestResult StatsStore::ingest(const std::vector<StatsRow>& rows) {
  // One row per key, the last one given winning (as if written in turn),
  // in key order: both engines then agree on what a batch does, and
  // concurrent writers lock rows in one order (no deadlock).
  std::vector<const StatsRow*> order;
  order.reserve(rows.size());
  for (const StatsRow& row : rows) order.push_back(&row);
  std::stable_sort(
      order.begin(), order.end(),
      [](const StatsRow* a, const StatsRow* b) { return a->key < b->key; });
  std::vector<const StatsRow*> distinct;
  distinct.reserve(order.size());
  for (std::size_t i = 0; i < order.size(); ++i)
    if (i + 1 == order.size() || order[i + 1]->key != order[i]->key)
      distinct.push_back(order[i]);
  if (distinct.empty()) return {};
  return backend_->ingest(distinct);
}

QueryResult StatsStore::query(const std::string& sql) {
  return backend_->query(sql);
}

std::optional<std::string> StatsStore::latest_date() {
  return backend_->latest_date();
}

void StatsStore::for_each_document(
    const std::string& first, const std::string& last,
    const std::function<void(const StoredDocument&)>& fn) {
  backend_->for_each_document(first, last, fn);
}

std::optional<std::string> StatsStore::document_text(const std::string& key) {
  return backend_->document_text(key);
}

void StatsStore::read_snapshot(const std::function<void()>& fn) {
  backend_->begin_snapshot();
  try {
    fn();
  } catch (...) {
    try {
      backend_->end_snapshot();
    } catch (...) {  // the first error is the one to report
    }
    throw;
  }
  backend_->end_snapshot();
}

IngestResult ingest_files(StatsStore& store,
                          const std::vector<std::filesystem::path>& files,
                          const std::string& date, ThreadPool* pool) {
  // Reading and checking 10^5 files (open, read, JSON parse) is most of an
  // ingest's work besides the engine's: done on the cores, in chunks, the
  // first bad file in file order being the one reported.
  std::vector<StatsRow> rows(files.size());
  auto read = [&](std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i) {
      DocumentFile doc = read_document(files[i]);
      rows[i] = stats_row(std::move(doc.text), files[i].string(),
                          date.empty() ? doc.day : date);
    }
  };
  constexpr std::size_t kChunk = 256;
  if (files.size() <= kChunk) {
    read(0, files.size());  // a runner's one document: no threads
  } else {
    PoolRef workers(pool, 0);
    workers.parallel_for(
        (files.size() + kChunk - 1) / kChunk, [&](std::size_t chunk) {
          read(chunk * kChunk, std::min(files.size(), (chunk + 1) * kChunk));
        });
  }
  return store.ingest(rows);
}

}  // namespace libpkg::nightly
