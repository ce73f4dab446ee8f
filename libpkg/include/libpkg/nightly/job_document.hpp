// SPDX-License-Identifier: BSD-3-Clause
// The `libpkg-job/1` document every job leaves in jobs/<job>.json (schema in
// docs/nightly.md): configuration, host, times, steps, exit status, the
// failing step, the log, the artifacts with their sizes and digests (the
// largest members of zips), the driver's summary and check report. The
// stats store ingests exactly these documents.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "libpkg/nightly/jobs.hpp"
#include "libpkg/nightly/state.hpp"

namespace libpkg::nightly {

/// One `::step NAME` marker of a job's log and how long the step ran.
struct StepTime {
  std::string name;
  double duration_s = 0;
};

/// The step a failed job failed in: the driver summary's first failing
/// check ("check:<id>") when its summary says it did not pass, else the last
/// `::step NAME` marker seen, else "run".
std::string failing_step(const std::string& driver_summary_json,
                         const std::vector<StepTime>& steps);

/// The document as JSON text. `driver_summary_json` is the driver's summary
/// text or "" (null in the document; a summary that is not valid JSON is
/// kept as null and named in "notes").
std::string job_document(const Layout& layout, const JobSpec& job,
                         const JobRecord& record, double duration_s,
                         const std::vector<StepTime>& steps,
                         const std::string& driver_summary_json);

}  // namespace libpkg::nightly
