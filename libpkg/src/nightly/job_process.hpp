// SPDX-License-Identifier: BSD-3-Clause
// One job's process: started in its own process group with stdout and
// stderr going straight into its log file (so the log is complete even if
// the runner dies), supervised until it ends, stopped on request. The
// runner's thread for the job waits on a pidfd, and reads what the job
// appended to its log to time the `::step NAME` markers.
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "libpkg/nightly/job_document.hpp"

namespace libpkg::nightly {

struct ProcessOutcome {
  int exit_code = -1;  // -1 when it did not exit normally
  int signal = 0;
  bool not_started = false;  // the program could not be started
  bool stopped = false;      // stopped because should_stop() said so
  bool timed_out = false;
  std::vector<StepTime> steps;
  double duration_s = 0;
};

struct ProcessRequest {
  std::vector<std::string> argv;
  std::vector<std::string> env;  // "NAME=value", added or replacing
  std::filesystem::path cwd;
  std::filesystem::path log;  // opened for appending
  unsigned timeout_s = 0;
  unsigned grace_s = 5;
  // Polled while the job runs: true stops it (SIGTERM to its group, SIGKILL
  // after grace_s).
  std::function<bool()> should_stop;
  // Called once the process runs (its pid is also its process group id).
  std::function<void(long pid)> on_started;
};

ProcessOutcome run_job_process(const ProcessRequest& request);

}  // namespace libpkg::nightly
