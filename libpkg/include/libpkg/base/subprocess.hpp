// SPDX-License-Identifier: BSD-3-Clause
// Running a helper program (a compiler, a Python interpreter, a probe) with
// a time limit and its output captured — what check_binary's runtime checks
// need. posix_spawn with the output on a pipe; the child runs in its own
// process group so a timeout kills it and everything it started.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace libpkg {

/// How run_process runs a child.
struct RunOptions {
  std::filesystem::path cwd;           // empty = the caller's
  std::vector<std::string> env_set;    // "NAME=value", added or replacing
  std::vector<std::string> env_unset;  // names removed from the environment
  unsigned timeout_seconds = 0;        // 0 = none
  // Output kept (stdout and stderr interleaved): the last max_output bytes.
  std::size_t max_output = 64 * 1024;
  // Also copy the output to this descriptor as it arrives (2: show a
  // build's log live); -1: only keep the tail.
  int echo_fd = -1;
  // After a normal exit, kill whatever the child left running in its
  // process group (a helper's stray daemon). Off for build commands, whose
  // compiler-cache servers (sccache) are meant to outlive them. A timeout
  // always kills the whole group.
  bool kill_leftovers = true;
};

/// How a child ended and what it printed.
struct RunResult {
  int exit_code = -1;      // -1 when it did not exit normally
  int signal = 0;          // the signal that ended it
  bool timed_out = false;  // killed after timeout_seconds
  bool not_found = false;  // the program could not be started (ENOENT...)
  std::string output;      // captured stdout + stderr (tail)
  /// True when the child exited with status 0.
  bool ok() const { return exit_code == 0; }
  /// "exit status 1", "killed by signal 11", "timed out after 20 s",
  /// "not found".
  std::string describe(unsigned timeout_seconds = 0) const;
};

/// Runs argv[0] (searched on the caller's PATH when it has no '/': a PATH in
/// env_set applies to the child only, as with posix_spawnp) with argv, stdin
/// from /dev/null. When the child exits, anything it left running in its
/// process group is killed. Throws libpkg::Error for an empty argv
/// (Errc::usage), a cwd that doesn't exist (Errc::not_found) and failures of
/// this process (pipe/spawn resources) — never for the child's failure.
RunResult run_process(const std::vector<std::string>& argv,
                      const RunOptions& options = {});

}  // namespace libpkg
