// SPDX-License-Identifier: BSD-3-Clause
// `pkgtool nightly run`: jobs as subprocesses in N parallel queues
// (builder-scripts.md §6.2's build_cron.sh/build_multiple.sh, without its
// marker files: success is the real exit status). Each job runs in its own
// process group with its output written live to logs/running/<job>.log,
// moved to succeeded/ or failed/ when it ends; its state and its job
// document are written atomically. A failing job never stops the others.
#pragma once

#include <atomic>
#include <functional>
#include <string>
#include <vector>

#include "libpkg/nightly/jobs.hpp"
#include "libpkg/nightly/layout.hpp"
#include "libpkg/nightly/state.hpp"

namespace libpkg::nightly {

/// Which jobs run_nightly runs.
enum class RunMode {
  fresh,         // a nightly without jobs yet (refused when it has some)
  resume,        // after a runner crash: unfinished jobs run again
  retry_failed,  // only the FAILED jobs run again
};

/// How run_nightly runs the jobs.
struct RunnerOptions {
  unsigned parallel = 0;  // queues; 0: from the number of cores
  RunMode mode = RunMode::fresh;
  // Set (from a signal handler) to cancel: running children are stopped
  // (SIGTERM to their process group, SIGKILL after grace_s), every
  // unfinished job is recorded CANCELLED.
  const std::atomic<bool>* interrupted = nullptr;
  unsigned grace_s = 5;
  // Called with each finished job (for progress lines); may be empty.
  std::function<void(const JobRecord&)> on_finished;
};

/// What run_nightly did: every job's state after the run.
struct RunSummary {
  std::vector<JobRecord> jobs;  // the states after the run, job-list order
  unsigned ran = 0;             // jobs started by this run
  bool interrupted = false;
  /// The number of jobs in \p state.
  unsigned count(JobState state) const;
};

/// The runner lock of one nightly directory (flock on runner.lock, holding
/// the pid). Errc::usage "DIR/runner.lock: another runner (pid N) is running
/// this nightly" when held.
class RunnerLock {
 public:
  /// Takes the lock of \p layout (creating runner.lock) and writes this
  /// process's pid; throws Errc::usage when another runner holds it, an errno
  /// Error when the file cannot be opened or written.
  explicit RunnerLock(const Layout& layout);
  ~RunnerLock();
  RunnerLock(const RunnerLock&) = delete;
  RunnerLock& operator=(const RunnerLock&) = delete;
  /// The pid of the runner holding the lock of `layout`, 0 when none, -1
  /// when held by a process that did not write its pid.
  static long holder(const Layout& layout);

 private:
  int fd_ = -1;
};

/// Runs the jobs of `layout` under its runner lock and records each one's
/// state, log and job document. `jobs` may be empty for resume/retry (the
/// stored jobs.json is used). Throws Errc::usage for an unknown placeholder, a
/// held lock, a fresh run of a nightly with jobs or none to run, and a
/// resume without jobs.json.
RunSummary run_nightly(const Layout& layout, std::vector<JobSpec> jobs,
                       const RunnerOptions& options);

}  // namespace libpkg::nightly
