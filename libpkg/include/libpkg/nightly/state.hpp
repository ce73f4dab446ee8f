// SPDX-License-Identifier: BSD-3-Clause
// A job's state as other processes see it (`pkgtool nightly status` while
// the run goes on): one small JSON file per job, replaced atomically
// (written to a temporary, renamed), so a reader sees the old or the new
// state, never half of one.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "libpkg/nightly/layout.hpp"

namespace libpkg::nightly {

/// The state of one job of a nightly.
enum class JobState { pending, running, succeeded, failed, cancelled };
/// "PENDING", "RUNNING", "SUCCEEDED", "FAILED" or "CANCELLED".
const char* state_name(JobState state);  // "PENDING", ...
/// The state named \p text (as state_name spells it); Errc::format naming \p
/// origin otherwise.
JobState parse_state(const std::string& text, const std::string& origin);
/// True for succeeded, failed and cancelled.
bool is_finished(JobState state);

/// One job's state/<job>.json: its state, times, exit, process and log.
struct JobRecord {
  std::string job;
  JobState state = JobState::pending;
  std::string start;  // ISO-8601 UTC, "" before the job starts
  std::string end;
  std::optional<int> exit_code;
  int signal = 0;  // the signal that ended the job, 0 if none
  long pid = 0;    // the job's process (its process group leader)
  long runner_pid = 0;
  // Who `pid` was: its start time (field 22 of /proc/PID/stat) and the boot
  // it ran in, so a pid reused later (after a reboot) is never taken for it.
  std::string pid_start_time;
  std::string boot_id;
  std::string failed_step;  // "" unless FAILED or CANCELLED
  // What the runner knows beyond the exit status ("the nightly's filesystem
  // was full when the job ended (0 bytes free)"), "" when nothing.
  std::string reason;
  std::string log;  // relative to the nightly dir
  int attempt = 0;  // 1 for the first run, +1 per retry
};

/// The job's recorded state, nullopt when it has no state file yet;
/// Errc::format naming the file when it is not a state document.
std::optional<JobRecord> read_state(const Layout& layout,
                                    const std::string& job);
/// Writes \p record to its state file atomically; throws
/// write_text_atomically's errors.
void write_state(const Layout& layout, const JobRecord& record);
/// Every state of the nightly, in job-list order (jobs without a state file
/// yet are PENDING); without jobs.json, the state files in name order. Throws
/// parse_jobs's and read_state's errors.
std::vector<JobRecord> read_states(const Layout& layout);
/// Fills record.pid and the start time and boot id that identify it.
void record_job_process(JobRecord& record, long pid);
/// SIGKILLs the job's process group when record.pid is still the process
/// recorded (same start time, same boot, leads its group); otherwise the job
/// is dead and nothing is signalled. Returns whether it signalled.
bool kill_recorded_job_group(const JobRecord& record);

/// The state document's JSON text.
std::string state_json(const JobRecord& record);

/// Writes `text` to `path` through a temporary in the same folder and a
/// rename, so readers never see a partial file; an errno Error naming the
/// file on failure.
void write_text_atomically(const std::filesystem::path& path,
                           const std::string& text);
/// The whole regular file as text (read_regular_file): Errc::io naming
/// \p path when it cannot be opened or read, or is not a regular file (a
/// FIFO or device is refused, never waited on).
std::string read_text_file(const std::filesystem::path& path);

}  // namespace libpkg::nightly
