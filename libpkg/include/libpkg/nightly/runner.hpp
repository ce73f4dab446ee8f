// SPDX-License-Identifier: BSD-3-Clause
// `pkgtool nightly run`: jobs as subprocesses in N parallel queues
// (builder-scripts.md §6.2's build_cron.sh/build_multiple.sh, without its
// marker files: success is the real exit status). Each job runs in its own
// process group with its output written live to logs/running/<job>.log,
// moved to succeeded/ or failed/ when it ends; its state and its job
// document are written atomically. A failing job never stops the others.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
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
  // Start order. By default the jobs' chunk groups are interleaved
  // (interleave_chunk_groups) and a free queue starts the first job, in that
  // order, whose group has no job running, if there is one: jobs running at
  // once are of different groups whenever enough groups are left, so none
  // compresses what another is compressing at the same time (the chunk cache
  // holds no lock while compressing, so both would miss). A queue never
  // waits: with only running groups left it starts the next job anyway.
  // true: the job list's order, as given.
  bool list_order = false;
  RunMode mode = RunMode::fresh;
  // Set (from a signal handler) to cancel: running children are stopped
  // (SIGTERM to their process group, SIGKILL after grace_s), every
  // unfinished job is recorded CANCELLED.
  const std::atomic<bool>* interrupted = nullptr;
  unsigned grace_s = 5;
  // Bytes held back on the nightly's filesystem (<dir>/.runner.reserve) and
  // freed the first time a write of the runner fails for lack of space, so
  // a job that fills the disk still gets its final state and document; 0:
  // none.
  std::uint64_t reserve_bytes = 1 << 20;
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

/// Who holds the runner lock of a nightly, as another process sees it.
struct LockHolder {
  bool held = false;        // a process holds the lock
  std::optional<long> pid;  // its pid, when it wrote one (a runner does)
  /// True when the lock is held.
  explicit operator bool() const { return held; }
  /// "pid N", "a process that did not write its pid", or "nobody"; does not
  /// throw.
  std::string describe() const;
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
  /// Who holds the lock of `layout` (not held when runner.lock is absent or
  /// unlocked). Does not throw.
  static LockHolder holder(const Layout& layout);

 private:
  int fd_ = -1;
};

/// Runs the jobs of `layout` under its runner lock and records each one's
/// state, log and job document. `jobs` may be empty for resume/retry (the
/// stored jobs.json is used). Throws Errc::usage for an unknown placeholder, a
/// held lock, a fresh run of a nightly with jobs or none to run, and a
/// resume without jobs.json; Errc::io when the runner cannot write its own
/// records (the reserve could not be made, or a job's state or document
/// could not be written even after freeing it): the message names the file,
/// the job and the outcome it could not record (and any other job left
/// unrecorded), after every started job ended. Unrecorded jobs stay RUNNING
/// or PENDING on disk, so `--resume` runs them again.
RunSummary run_nightly(const Layout& layout, std::vector<JobSpec> jobs,
                       const RunnerOptions& options);

}  // namespace libpkg::nightly
