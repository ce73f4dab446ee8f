// SPDX-License-Identifier: BSD-3-Clause
// `pkgtool workflow`: the nightly as a GitHub Actions workflow, written from
// the same configuration matrix as `pkgtool matrix` and `nightly run`
// (data/matrix.json). One build job per package type and OS, whose
// strategy.matrix holds one entry per configuration (so one CI job per
// configuration), each calling the driver of its package type inside its
// build container and uploading the package and the driver's
// `libpkg-driver/1` summary as artifacts; a final job downloads them,
// records them as a nightly (`nightly run` importing each configuration's
// result), ingests the summaries into stats.db, publishes the channel and
// renders the report. What each package type's job runs, and why, is in
// docs/nightly.md ("pkgtool workflow").
//
// The old CircleCI config was generated the same way, with the rule that
// the checked-in file and its source must agree: `pkgtool workflow --check
// FILE` regenerates with the arguments the file records and names the first
// line that differs.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "libpkg/config/build.hpp"

namespace libpkg::nightly {

/// What the generated workflow is named, runs on and records.
struct WorkflowOptions {
  std::string name = "nightly";            // the workflow's name
  std::string cron = "5 0 * * *";          // schedule, UTC (the cron's 00:05)
  std::string source = "pytorch/pytorch";  // repository the jobs build
  unsigned keep = 5;  // `nightly publish --keep`: nightlies kept per package
  // The matrix file the final job reads (`nightly run --matrix-file`),
  // relative to the workflow's repository; empty: pkgtool's built-in one.
  std::string matrix_file;
  // The filters, passed unchanged to the final job's `nightly run`.
  std::vector<std::string> package_types, accelerators, pythons;
  // Where the workflow is checked in (`-o FILE`): the final job starts by
  // checking it with `pkgtool workflow --check`. Empty: no such step.
  std::string path;
  // The command line that generated it, recorded in its header (as a JSON
  // list) so --check regenerates it the same way.
  std::vector<std::string> arguments;
};

/// The workflow's YAML text for `configs` (what expand_matrix returned for
/// the options' filters). The same configurations and options give the
/// same bytes. Errc::usage when `configs` is empty.
std::string workflow_yaml(const std::vector<config::BuildConfig>& configs,
                          const WorkflowOptions& options);

/// The arguments a generated workflow recorded in its header (the comment
/// line "# pkgtool-workflow-arguments: [JSON list]" among the first comment
/// lines); nullopt when there is none or it is not a list of strings. Does
/// not throw.
std::optional<std::vector<std::string>> recorded_workflow_arguments(
    std::string_view workflow_text);

/// Where two texts first differ: the 1-based line and that line in each
/// ("" past the end, with `expected_ended`/`found_ended` set).
struct TextDifference {
  std::size_t line = 0;
  std::string expected, found;
  bool expected_ended = false, found_ended = false;
};
/// The first line where `found` differs from `expected`; nullopt when the
/// texts are equal. Does not throw.
std::optional<TextDifference> first_difference(std::string_view expected,
                                               std::string_view found);

}  // namespace libpkg::nightly
