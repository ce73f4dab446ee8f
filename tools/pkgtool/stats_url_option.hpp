// SPDX-License-Identifier: BSD-3-Clause
// `--stats-url URL` (alias `--db PATH`), taken by every command that reads
// or writes the stats store: `stats ingest|query`, `nightly report` and
// `nightly run`, which stores each finished job's document as it ends.
#pragma once

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "libpkg/base/error.hpp"
#include "libpkg/nightly/layout.hpp"
#include "libpkg/nightly/state.hpp"
#include "libpkg/nightly/stats_store.hpp"

namespace pkgtool {

inline const char* kStatsUrlHelp =
    "the stats store: an SQLite file (sqlite:PATH or a path) or PostgreSQL "
    "(postgresql://USER@HOST:PORT/DB, or a libpq string 'host=... "
    "dbname=...'; give the password through PGPASSWORD or ~/.pgpass)";

// Adds --stats-url/--db to `app`; `default_text` completes its help.
inline CLI::Option* add_stats_url_option(CLI::App& app, std::string& url,
                                         const std::string& default_text) {
  return app.add_option(
      "--stats-url,--db", url,
      std::string(kStatsUrlHelp) + "; default " + default_text);
}

// The runner's side of the store (`nightly run`): each job's document is
// stored when the job ends, by a thread of its own, so a slow store (a
// PostgreSQL server across the network) never holds up the next job. A
// store named with --stats-url is opened before any job runs, so one that
// cannot be reached stops the run at once (exit 2); the default
// ROOT/stats.db is opened when the first job ends (nothing is created for a
// run refused before it starts). A document that cannot be stored is a
// warning (it stays in jobs/); the nightly's documents are then stored
// again at the end, when a failure is an error.
class RunnerStats {
 public:
  RunnerStats() = default;
  RunnerStats(const RunnerStats&) = delete;
  RunnerStats& operator=(const RunnerStats&) = delete;
  ~RunnerStats() { stop(); }

  void add_to(CLI::App& app) {
    add_stats_url_option(app, url_, "ROOT/stats.db");
    app.add_flag("--no-stats", disabled_,
                 "do not store the job documents in a stats store");
  }

  void open(const std::filesystem::path& root,
            const libpkg::nightly::Layout& layout) {
    if (disabled_) return;
    layout_ = std::make_unique<libpkg::nightly::Layout>(layout);
    if (url_.empty())
      url_ = "sqlite:" + (root / "stats.db").string();
    else
      store();
    worker_ = std::thread([this] { work(); });
  }

  // `next` (the progress line) after handing the job's document over.
  std::function<void(const libpkg::nightly::JobRecord&)> record_then(
      std::function<void(const libpkg::nightly::JobRecord&)> next) {
    if (disabled_) return next;
    return [this, next = std::move(next)](const libpkg::nightly::JobRecord& r) {
      {
        std::lock_guard lock(mutex_);
        pending_.push_back(layout_->job_document(r.job));
      }
      wake_.notify_one();
      if (next) next(r);
    };
  }

  // After the run: waits for the documents handed over, then stores the
  // nightly's documents again when one could not be stored.
  void finish() {
    if (disabled_) return;
    stop();
    if (!missed_) return;
    std::vector<std::filesystem::path> documents;
    std::error_code ec;
    for (const auto& e :
         std::filesystem::directory_iterator(layout_->dir / "jobs", ec))
      if (e.path().extension() == ".json") documents.push_back(e.path());
    auto r = libpkg::nightly::ingest_files(store(), documents);
    fmt::print("stored the job documents in {} ({} inserted, {} replaced)\n",
               store().name(), r.inserted, r.replaced);
  }

 private:
  libpkg::nightly::StatsStore& store() {
    if (!store_)
      store_ = std::make_unique<libpkg::nightly::StatsStore>(
          url_, libpkg::nightly::StatsStore::Mode::read_write);
    return *store_;
  }

  // Stores what was handed over, as batches, until stop().
  void work() {
    std::unique_lock lock(mutex_);
    for (;;) {
      wake_.wait(lock, [&] { return stopping_ || !pending_.empty(); });
      if (pending_.empty()) return;  // stopping, nothing left
      std::vector<std::filesystem::path> batch;
      batch.swap(pending_);
      lock.unlock();
      try {
        libpkg::nightly::ingest_files(store(), batch);
      } catch (const std::exception& e) {
        missed_ = true;
        fmt::print(stderr,
                   "warning: {} (the job documents stay in jobs/ and are "
                   "stored again at the end)\n",
                   e.what());
      }
      lock.lock();
    }
  }

  void stop() {
    if (!worker_.joinable()) return;
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_one();
    worker_.join();
  }

  std::string url_;
  bool disabled_ = false;
  std::unique_ptr<libpkg::nightly::Layout> layout_;
  std::unique_ptr<libpkg::nightly::StatsStore> store_;
  std::thread worker_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::vector<std::filesystem::path> pending_;  // guarded by mutex_
  bool stopping_ = false;                       // guarded by mutex_
  std::atomic<bool> missed_{false};
};

}  // namespace pkgtool
