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

enum class JobState { pending, running, succeeded, failed, cancelled };
const char* state_name(JobState state);  // "PENDING", ...
JobState parse_state(const std::string& text, const std::string& origin);
bool is_finished(JobState state);

struct JobRecord {
  std::string job;
  JobState state = JobState::pending;
  std::string start;  // ISO-8601 UTC, "" before the job starts
  std::string end;
  std::optional<int> exit_code;
  int signal = 0;  // the signal that ended the job, 0 if none
  long pid = 0;    // the job's process (its process group leader)
  long runner_pid = 0;
  std::string failed_step;  // "" unless FAILED or CANCELLED
  std::string log;          // relative to the nightly dir
  int attempt = 0;          // 1 for the first run, +1 per retry
};

// Errc::format naming the file when it is not a state document.
std::optional<JobRecord> read_state(const Layout& layout,
                                    const std::string& job);
void write_state(const Layout& layout, const JobRecord& record);
// Every state of the nightly, in job-list order (jobs without a state file
// yet are PENDING).
std::vector<JobRecord> read_states(const Layout& layout);
std::string state_json(const JobRecord& record);

// Writes `text` to `path` through a temporary in the same folder and a
// rename, so readers never see a partial file.
void write_text_atomically(const std::filesystem::path& path,
                           const std::string& text);
std::string read_text_file(const std::filesystem::path& path);

}  // namespace libpkg::nightly
