// SPDX-License-Identifier: BSD-3-Clause
// What the stats store indexes of one document. Documents are kept as the
// JSON text they came in; these few fields are copied into columns so the
// grid, the charts and ad-hoc queries don't parse every document, and
// anything else is reached with json_extract(doc, '$.field') (a new field
// needs no schema change).
//
// Two schemas are understood:
// - `libpkg-job/1`, one per nightly job (written by the runner): keyed by
//   nightly date and job name, so a re-run of a job replaces its row;
// - `libpkg-driver/1`, a driver's --json summary produced anywhere (a CI
//   job): keyed by the hash of its content, so ingesting the same summary
//   twice keeps one row. It carries no date: the caller supplies one.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "libpkg/base/integers.hpp"

namespace libpkg::nightly {

/// One artifact file a document lists: its name, size and SHA-256.
struct StatsArtifact {
  std::string name;  // file name
  u64 size = 0;
  std::optional<std::string> sha256;
};

/// One document mapped to the columns of the stats store.
struct StatsRow {
  std::string key;     // identity: "job:<nightly>/<job>" or "driver:<sha256>"
  std::string schema;  // "libpkg-job/1" or "libpkg-driver/1"
  std::string date;    // YYYY-MM-DD
  std::string package_type, python, accelerator;
  // The configuration's other distinguishing fields, "" when none: the
  // libtorch variant, C++ ABI, os and arch as bare values, then any other
  // config field as key=value (by key), e.g. "shared-with-deps cxx11 linux
  // x86_64". Not in it: build_environment (made of the others), version and
  // build_number (one build's, not the configuration's).
  std::string variant;
  std::string job;
  std::string status;                // SUCCEEDED | FAILED | CANCELLED | ...
  std::optional<std::string> start;  // ISO-8601, when known
  std::optional<double> duration_s;
  std::optional<std::string> log;  // relative to <root>/<nightly>/
  // What failed: the failing step and/or the ids of failed checks ("" when
  // nothing did).
  std::string failure;
  std::vector<StatsArtifact> artifacts;
  std::string doc;     // the document's text as given
  std::string source;  // where it came from (a file), named in errors
};

/// Maps one document. `source` names it in errors (the file); `date` is used
/// for documents without one (driver summaries), YYYY-MM-DD. Throws
/// Errc::format "SOURCE: ..." on malformed JSON, an unknown schema or a
/// field of the wrong type.
StatsRow stats_row(std::string text, const std::string& source,
                   const std::string& date);

/// "2026_11_24" / "2026-11-24" → "2026-11-24"; nullopt if not a date.
std::optional<std::string> iso_date(std::string_view nightly);

}  // namespace libpkg::nightly
