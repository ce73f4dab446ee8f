// SPDX-License-Identifier: BSD-3-Clause
// The stats store: how documents map to rows, idempotent ingest, one
// transaction per batch, read-only queries.
#include "libpkg/nightly/stats_store.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "libpkg/base/error.hpp"
#include "libpkg/nightly/stats_document.hpp"
#include "libpkg/nightly/stats_url.hpp"

namespace fs = std::filesystem;
using namespace libpkg::nightly;

namespace {

std::string job_doc(const std::string& nightly, const std::string& job,
                    const std::string& state, long size = 100) {
  return R"({"schema":"libpkg-job/1","nightly":")" + nightly + R"(","job":")" +
         job +
         R"(","config":{"package_type":"manywheel","python":"3.11",)"
         R"("accelerator":"cu124"},"start":"2026-11-23T01:00:00Z",)"
         R"("duration_s":12.5,"state":")" +
         state + R"(","failed_step":)" +
         (state == "FAILED" ? R"("build")" : "null") +
         R"(,"log":"logs/x.log","artifacts":[{"name":"torch-1.whl","size":)" +
         std::to_string(size) + R"(,"sha256":"aa"}],"check":null})";
}

std::string driver_doc(bool passed) {
  return std::string(
             R"({"schema":"libpkg-driver/1","driver":"manywheel",)"
             R"("config":{"build_environment":"manywheel 3.12 cpu",)"
             R"("package_type":"manywheel","python":"3.12",)"
             R"("accelerator":"cpu"},"artifacts":[{"role":"wheel",)"
             R"("path":"/x/dist/torch-2.whl","size":7,"checked":true}],)"
             R"("checks":[{"schema":"libpkg-check/1","checks":[)"
             R"({"id":"rpath","status":"fail"}]}],"passed":)") +
         (passed ? "true" : "false") + R"(,"seconds":3.0})";
}

class NightlyStatsStore : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("stats_store_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  libpkg::i64 count(StatsStore& store, const std::string& sql) {
    auto r = store.query(sql);
    return r.rows.at(0).at(0).integer;
  }
  fs::path dir_;
};

}  // namespace

TEST(NightlyStatsDocument, JobFieldsBecomeColumns) {
  StatsRow row = stats_row(job_doc("2026_11_23", "a", "FAILED"), "f", "");
  EXPECT_EQ(row.key, "job:2026_11_23/a");
  EXPECT_EQ(row.date, "2026-11-23");
  EXPECT_EQ(row.package_type, "manywheel");
  EXPECT_EQ(row.python, "3.11");
  EXPECT_EQ(row.accelerator, "cu124");
  EXPECT_EQ(row.status, "FAILED");
  EXPECT_EQ(row.failure, "build");
  ASSERT_EQ(row.artifacts.size(), 1u);
  EXPECT_EQ(row.artifacts[0].size, 100u);
  EXPECT_EQ(*row.log, "logs/x.log");
}

TEST(NightlyStatsDocument, DriverSummaryMapsToTheSameColumns) {
  StatsRow row = stats_row(driver_doc(false), "s.json", "2026-11-20");
  EXPECT_EQ(row.date, "2026-11-20");
  EXPECT_EQ(row.job, "manywheel 3.12 cpu");
  EXPECT_EQ(row.status, "FAILED");
  EXPECT_EQ(row.failure, "check: rpath");
  ASSERT_EQ(row.artifacts.size(), 1u);
  EXPECT_EQ(row.artifacts[0].name, "torch-2.whl");
  // The same content re-indented is the same summary.
  StatsRow again = stats_row(" \n" + driver_doc(false), "t.json", "2026-11-20");
  EXPECT_EQ(row.key, again.key);
  EXPECT_NE(row.key, stats_row(driver_doc(true), "s", "2026-11-20").key);
}

TEST(NightlyStatsDocument, EveryOtherConfigFieldIsTheVariant) {
  auto variant = [](const std::string& config) {
    return stats_row(R"({"schema":"libpkg-job/1","nightly":"2026_11_23",)"
                     R"("job":"j","state":"SUCCEEDED","config":{)" +
                         config + "}}",
                     "f", "")
        .variant;
  };
  // The grid's three fields alone: no variant.
  EXPECT_EQ(variant(R"("package_type":"libtorch","python":"",)"
                    R"("accelerator":"cpu")"),
            "");
  // The matrix's fields in a fixed order whatever the document's;
  // build_environment (made of them) left out.
  EXPECT_EQ(variant(R"("arch":"x86_64","os":"linux","cxx_abi":"cxx11",)"
                    R"("libtorch_variant":"static","package_type":"libtorch",)"
                    R"("build_environment":"libtorch cpu static")"),
            "static cxx11 linux x86_64");
  EXPECT_NE(variant(R"("libtorch_variant":"static","cxx_abi":"cxx11")"),
            variant(R"("libtorch_variant":"static","cxx_abi":"pre-cxx11")"));
  // Any other field as key=value by key; null and "" are absent; one
  // build's version and build number are not the configuration's.
  EXPECT_EQ(variant(R"("os":"linux","zeta":2,"image":"a:1","gone":null,)"
                    R"("empty":"","version":"2.6.0","build_number":3)"),
            "linux image=a:1 zeta=2");
  StatsRow summary = stats_row(driver_doc(false), "s.json", "2026-11-20");
  EXPECT_EQ(summary.variant, "");
}

TEST(NightlyStatsDocument, BadDocumentsNameTheFile) {
  auto message = [](const std::string& text) {
    try {
      stats_row(text, "bad.json", "2026-01-01");
    } catch (const libpkg::Error& e) {
      EXPECT_EQ(e.code(), libpkg::Errc::format);
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message("{\"schema\":").find("bad.json: malformed JSON"),
            std::string::npos);
  EXPECT_NE(message(R"({"schema":"other/1"})").find("neither"),
            std::string::npos);
  EXPECT_NE(message(R"({"schema":"libpkg-job/1","nightly":"yesterday"})")
                .find("not a date"),
            std::string::npos);
  EXPECT_NE(message(R"({"schema":"libpkg-job/1","nightly":"2026_01_01",)"
                    R"("job":"a","state":"FAILED","duration_s":"long"})")
                .find("duration_s is not a number"),
            std::string::npos);
  EXPECT_FALSE(iso_date("2026_13_01"));
  EXPECT_EQ(*iso_date("2026_12_01"), "2026-12-01");
}

TEST_F(NightlyStatsStore, IngestIsIdempotentAndReplacesReRuns) {
  StatsStore store(dir_ / "stats.db", StatsStore::Mode::read_write);
  auto r = store.ingest(
      {stats_row(job_doc("2026_11_23", "a", "FAILED"), "f", ""),
       stats_row(job_doc("2026_11_23", "b", "SUCCEEDED"), "f", "")});
  EXPECT_EQ(r.inserted, 2u);
  r = store.ingest({stats_row(job_doc("2026_11_23", "a", "FAILED"), "f", "")});
  EXPECT_EQ(r.unchanged, 1u);
  // --retry-failed re-ran job a: its new document replaces the old one.
  r = store.ingest(
      {stats_row(job_doc("2026_11_23", "a", "SUCCEEDED", 120), "f", "")});
  EXPECT_EQ(r.replaced, 1u);
  EXPECT_EQ(count(store, "SELECT count(*) FROM documents"), 2);
  EXPECT_EQ(count(store, "SELECT count(*) FROM artifacts"), 2);
  EXPECT_EQ(count(store,
                  "SELECT size FROM artifacts WHERE doc_key = "
                  "'job:2026_11_23/a'"),
            120);
  // A field the columns don't have is reached through the stored JSON.
  EXPECT_EQ(count(store,
                  "SELECT count(*) FROM documents WHERE "
                  "json_extract(doc, '$.duration_s') = 12.5"),
            2);
}

TEST_F(NightlyStatsStore, ReadOnlyConnectionRefusesWrites) {
  { StatsStore store(dir_ / "stats.db", StatsStore::Mode::read_write); }
  StatsStore ro(dir_ / "stats.db", StatsStore::Mode::read_only);
  EXPECT_THROW(ro.query("DELETE FROM documents"), libpkg::Error);
  EXPECT_THROW(ro.query("SELECT 1; DELETE FROM documents"), libpkg::Error);
  EXPECT_THROW(StatsStore(dir_ / "missing.db", StatsStore::Mode::read_only),
               libpkg::Error);
}

TEST_F(NightlyStatsStore, ABadFileInABatchWritesNothing) {
  StatsStore store(dir_ / "stats.db", StatsStore::Mode::read_write);
  std::ofstream(dir_ / "good.json") << job_doc("2026_11_23", "a", "FAILED");
  std::ofstream(dir_ / "bad.json") << "{\"schema\": \"libpkg-job/1\",";
  try {
    ingest_files(store, {dir_ / "good.json", dir_ / "bad.json"});
    FAIL() << "no error";
  } catch (const libpkg::Error& e) {
    EXPECT_EQ(e.exit_code(), 2);
    EXPECT_NE(std::string(e.what()).find("bad.json"), std::string::npos);
  }
  EXPECT_EQ(count(store, "SELECT count(*) FROM documents"), 0);
  EXPECT_EQ(ingest_files(store, {dir_ / "good.json"}).inserted, 1u);
}

TEST(NightlyStatsUrl, PathsAndPostgresqlUrls) {
  StatsLocation l = parse_stats_url("stats.db");
  EXPECT_EQ(l.kind, StatsBackendKind::sqlite);
  EXPECT_EQ(l.path, "stats.db");
  l = parse_stats_url("sqlite:/srv/nightly/stats.db");
  EXPECT_EQ(l.kind, StatsBackendKind::sqlite);
  EXPECT_EQ(l.path, "/srv/nightly/stats.db");
  EXPECT_EQ(l.name, "/srv/nightly/stats.db");
  // '=' alone does not make a connection string: the keyword must be
  // libpq's.
  EXPECT_EQ(parse_stats_url("runs=2.db").kind, StatsBackendKind::sqlite);

  l = parse_stats_url("postgresql://ci:hunter2@db.example:5433/stats");
  EXPECT_EQ(l.kind, StatsBackendKind::postgresql);
  EXPECT_EQ(l.conninfo, "postgresql://ci:hunter2@db.example:5433/stats");
  EXPECT_EQ(l.name, "postgresql://ci@db.example:5433/stats");
  l = parse_stats_url("postgres:///stats?host=/run/pg&password=hunter2");
  EXPECT_EQ(l.kind, StatsBackendKind::postgresql);
  EXPECT_EQ(l.name, "postgresql:///stats?host=/run/pg");
  l = parse_stats_url(
      "host=/tmp/s port=5999 dbname=stats user=ci password='hun ter2'");
  EXPECT_EQ(l.kind, StatsBackendKind::postgresql);
  EXPECT_EQ(l.name, "postgresql://ci@:5999/stats?host=/tmp/s");

  auto usage = [](const std::string& url) {
    try {
      parse_stats_url(url);
    } catch (const libpkg::Error& e) {
      EXPECT_EQ(e.code(), libpkg::Errc::usage);
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(usage("").find("empty"), std::string::npos);
  EXPECT_NE(usage("sqlite:").find("needs a path"), std::string::npos);
  // libpq's complaint quotes pieces of the string: never the password.
  std::string bad = usage("postgresql://ci:hunter2@h/db?hunter2=1");
  EXPECT_NE(bad.find("libpq"), std::string::npos) << bad;
  EXPECT_EQ(bad.find("hunter2"), std::string::npos) << bad;
  bad = usage("user=ci password=hunter2 hunter2");
  EXPECT_EQ(bad.find("hunter2"), std::string::npos) << bad;
}

TEST_F(NightlyStatsStore, ABatchKeepsTheLastRowOfAKey) {
  StatsStore store((dir_ / "stats.db").string(), StatsStore::Mode::read_write);
  auto r = store.ingest(
      {stats_row(job_doc("2026_11_23", "a", "FAILED", 1), "f", ""),
       stats_row(job_doc("2026_11_23", "b", "SUCCEEDED"), "f", ""),
       stats_row(job_doc("2026_11_23", "a", "SUCCEEDED", 2), "f", "")});
  EXPECT_EQ(r.inserted, 2u);
  EXPECT_EQ(r.replaced + r.unchanged, 0u);
  EXPECT_EQ(count(store,
                  "SELECT size FROM artifacts WHERE doc_key = "
                  "'job:2026_11_23/a'"),
            2);
  EXPECT_EQ(count(store, "SELECT count(*) FROM artifacts"), 2);
}

TEST_F(NightlyStatsStore, AReformattedDocumentIsUnchanged) {
  StatsStore store((dir_ / "stats.db").string(), StatsStore::Mode::read_write);
  store.ingest({stats_row(job_doc("2026_11_23", "a", "FAILED"), "f", "")});
  // Same JSON value, other spacing and key order (PostgreSQL's jsonb
  // compares so too).
  std::string doc = job_doc("2026_11_23", "a", "FAILED");
  doc = "{ \"check\" : null,\n" + doc.substr(1, doc.rfind(",\"check\"") - 1) +
        "}";
  auto r = store.ingest({stats_row(doc, "g", "")});
  EXPECT_EQ(r.unchanged, 1u);
  EXPECT_EQ(r.replaced, 0u);
}

TEST_F(NightlyStatsStore, ReportReadsInDateThenStartOrder) {
  StatsStore store((dir_ / "stats.db").string(), StatsStore::Mode::read_write);
  store.ingest({stats_row(job_doc("2026_11_24", "b", "FAILED"), "f", ""),
                stats_row(job_doc("2026_11_23", "a", "SUCCEEDED"), "f", "")});
  std::vector<std::string> seen;
  store.read_snapshot([&] {
    EXPECT_EQ(store.latest_date().value_or(""), "2026-11-24");
    store.for_each_document(
        "2026-11-01", "2026-11-30", [&](const StoredDocument& d) {
          seen.push_back(d.date + " " + d.job + " " + d.status + " " +
                         d.failure);
          for (const auto& a : d.artifacts)
            seen.push_back(a.name + " " + std::to_string(a.size));
          EXPECT_EQ(d.duration_s.value_or(0), 12.5);
          EXPECT_EQ(d.log.value_or(""), "logs/x.log");
        });
  });
  EXPECT_EQ(seen, (std::vector<std::string>{
                      "2026-11-23 a SUCCEEDED ", "torch-1.whl 100",
                      "2026-11-24 b FAILED build", "torch-1.whl 100"}));
  EXPECT_TRUE(store.document_text("job:2026_11_24/b"));
  EXPECT_FALSE(store.document_text("job:2026_11_24/none"));
}
