// SPDX-License-Identifier: BSD-3-Clause
#include "libpkg/nightly/runner.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <map>
#include <mutex>
#include <system_error>
#include <thread>

#include "clock.hpp"
#include "disk_reserve.hpp"
#include "job_process.hpp"
#include "libpkg/base/error.hpp"
#include "libpkg/nightly/job_document.hpp"

namespace libpkg::nightly {

namespace fs = std::filesystem;

unsigned RunSummary::count(JobState state) const {
  return static_cast<unsigned>(
      std::count_if(jobs.begin(), jobs.end(),
                    [&](const JobRecord& r) { return r.state == state; }));
}

namespace {

// The pid a runner wrote into its lock file; nullopt when there is none
// (the lock was just taken, or another tool holds it).
std::optional<long> read_pid(int fd) {
  char buf[32] = {};
  ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
  long pid = n > 0 ? std::atol(buf) : 0;
  if (pid <= 0) return std::nullopt;
  return pid;
}

bool path_exists(const fs::path& p) {
  std::error_code ec;
  return fs::exists(p, ec);
}

// The log of an earlier attempt is kept beside the new one, never
// overwritten: logs/failed/<job>.attempt<N>.log.
void keep_earlier_log(const Layout& layout, const JobRecord& previous) {
  for (const fs::path& old :
       {layout.running_log(previous.job), layout.failed_log(previous.job)}) {
    if (!path_exists(old)) continue;
    fs::path kept = layout.dir / "logs" / "failed" /
                    (previous.job + ".attempt" +
                     std::to_string(std::max(previous.attempt, 1)) + ".log");
    std::error_code ec;
    fs::rename(old, kept, ec);
  }
}

// The artifacts of an earlier attempt are moved aside to
// <artifact_dir>.attempt<N> (the first free N from the attempt's number), so
// the new attempt starts empty and never records or publishes stale files.
void keep_earlier_artifacts(const fs::path& dir, const JobRecord& previous) {
  std::error_code ec;
  if (!fs::exists(dir, ec) || fs::is_empty(dir, ec)) return;
  for (int n = std::max(previous.attempt, 1);; ++n) {
    fs::path kept = dir;
    kept += ".attempt" + std::to_string(n);
    if (path_exists(kept)) continue;
    fs::rename(dir, kept, ec);
    if (ec)
      throw Error(
          Errc::io, dir.string(),
          "cannot move the earlier attempt's artifacts aside: " + ec.message());
    return;
  }
}

// Appends the runner's line to a job's log, on a line of its own even when
// the job's output did not end with a newline.
void append_line(const fs::path& log, std::string line) {
  int fd = ::open(log.c_str(), O_RDWR | O_APPEND | O_CLOEXEC);
  if (fd < 0) throw_errno(log.string(), "open");
  struct stat st {};
  char last = '\n';
  if (::fstat(fd, &st) == 0 && st.st_size > 0 &&
      ::pread(fd, &last, 1, st.st_size - 1) == 1 && last != '\n')
    line.insert(0, 1, '\n');
  ssize_t n = ::write(fd, line.data(), line.size());
  int err = errno;
  ::close(fd);
  if (n != static_cast<ssize_t>(line.size())) {
    errno = n < 0 ? err : ENOSPC;
    throw_errno(log.string(), "append");
  }
}

// Below this many free bytes a failed job is said to have met a full disk:
// what it wrote last (its error message included) may be missing from its
// log, so the runner says it.
constexpr std::uint64_t kFullDiskBytes = 64 * 1024;

// "job NAME as FAILED (exit 1, step compile)": what the runner could not
// record, in its error message.
std::string outcome(const JobRecord& r) {
  std::string s = "job " + r.job + " as " + state_name(r.state);
  std::vector<std::string> parts;
  if (r.exit_code) parts.push_back("exit " + std::to_string(*r.exit_code));
  if (r.signal) parts.push_back("signal " + std::to_string(r.signal));
  if (!r.failed_step.empty()) parts.push_back("step " + r.failed_step);
  if (!r.reason.empty()) parts.push_back(r.reason);
  for (std::size_t i = 0; i < parts.size(); ++i)
    s += (i ? ", " : " (") + parts[i];
  return parts.empty() ? s : s + ")";
}

std::string describe_end(const ProcessOutcome& o) {
  if (o.not_started) return "could not be started";
  if (o.timed_out) return "timed out";
  if (o.stopped) return "cancelled";
  if (o.signal) return "killed by signal " + std::to_string(o.signal);
  return "exit status " + std::to_string(o.exit_code);
}

class Runner {
 public:
  Runner(const Layout& layout, std::vector<JobSpec> jobs,
         const RunnerOptions& opt, DiskReserve& reserve)
      : layout_(layout), jobs_(std::move(jobs)), opt_(opt), reserve_(reserve) {
    if (!opt_.list_order)
      for (const auto& job : jobs_) group_.push_back(chunk_group(job));
    else
      group_.resize(jobs_.size());  // no groups: the list's order
  }

  void run(const std::vector<std::size_t>& todo, RunSummary& summary) {
    todo_ = opt_.list_order ? todo : interleave_chunk_groups(jobs_, todo);
    unsigned n = opt_.parallel
                     ? opt_.parallel
                     : std::max(1u, std::thread::hardware_concurrency());
    n = std::min<unsigned>(
        n, static_cast<unsigned>(std::max<std::size_t>(todo.size(), 1)));
    std::vector<std::thread> queues;
    for (unsigned i = 0; i < n; ++i) queues.emplace_back([this] { queue(); });
    for (auto& t : queues) t.join();
    summary.ran = started_;
    if (!error_) return;
    if (unrecorded_.empty()) std::rethrow_exception(error_);
    // One line: the first failure, and the other jobs it left unrecorded.
    std::string others;
    for (const auto& job : unrecorded_)
      others += (others.empty() ? "" : ", ") + job;
    try {
      std::rethrow_exception(error_);
    } catch (const Error& e) {
      throw Error(e.code(), e.file(),
                  e.message() + " (also unrecorded: " + others + ")")
          .with_errno(e.sys_errno());
    }
  }

 private:
  bool interrupted() const {
    return opt_.interrupted &&
           opt_.interrupted->load(std::memory_order_relaxed);
  }
  bool cancel_requested(const std::string& job) const {
    return path_exists(layout_.cancel_request(job));
  }

  // The next job to start (under mu_): the first one left whose chunk group
  // has no job running, else the first one left. Marks its group running.
  std::size_t take_next() {
    auto pick = std::find_if(todo_.begin(), todo_.end(), [&](std::size_t i) {
      return group_[i].empty() || running_[group_[i]] == 0;
    });
    if (pick == todo_.end()) pick = todo_.begin();
    std::size_t i = *pick;
    todo_.erase(pick);
    if (!group_[i].empty()) ++running_[group_[i]];
    return i;
  }

  void queue() {
    for (;;) {
      std::size_t i;
      {
        std::lock_guard lock(mu_);
        if (todo_.empty() || error_) return;
        i = take_next();
      }
      try {
        run_one(jobs_[i]);
      } catch (...) {
        // A failure of the runner itself (a full disk for a state file):
        // stop handing out jobs and report it once all queues stopped.
        std::lock_guard lock(mu_);
        if (!error_)
          error_ = std::current_exception();
        else
          unrecorded_.push_back(jobs_[i].name);
      }
      // The group is free once the job's end is recorded, so a job of the
      // same group never starts before that end (state timestamps included).
      std::lock_guard lock(mu_);
      if (!group_[i].empty()) --running_[group_[i]];
    }
  }

  // A write of the runner's records; when it fails for lack of space the
  // reserve is freed and it runs once more. The last failure is thrown.
  template <typename Write>
  void write_record(Write&& write) {
    try {
      write();
    } catch (const Error& e) {
      if (!out_of_space(e) || !reserve_.release()) throw;
      write();
    }
  }

  // The job's outcome could not be written: the error names what was lost,
  // so the caller's one line tells the whole story.
  [[noreturn]] static void unrecorded(const Error& e, const JobRecord& r) {
    throw Error(e.code(), e.file(),
                "cannot record " + outcome(r) + ": " + e.message())
        .with_errno(e.sys_errno());
  }

  void finish(const JobSpec& job, JobRecord& record, double duration_s,
              const std::vector<StepTime>& steps) {
    std::string summary;
    if (path_exists(layout_.summary_file(job.name)))
      summary = read_text_file(layout_.summary_file(job.name));
    if (record.state != JobState::succeeded && record.failed_step.empty())
      record.failed_step = failing_step(summary, steps);
    // The document first, the state last: a finished state always has its
    // document.
    try {
      std::string doc =
          job_document(layout_, job, record, duration_s, steps, summary);
      write_record(
          [&] { write_text_atomically(layout_.job_document(job.name), doc); });
      write_record([&] { write_state(layout_, record); });
    } catch (const Error& e) {
      unrecorded(e, record);
    }
    std::error_code ec;
    fs::remove(layout_.cancel_request(job.name), ec);
    if (opt_.on_finished) {
      std::lock_guard lock(mu_);
      opt_.on_finished(record);
    }
  }

  void run_one(const JobSpec& job) {
    auto previous = read_state(layout_, job.name);
    JobRecord record;
    record.job = job.name;
    record.runner_pid = ::getpid();
    record.attempt = previous ? previous->attempt + 1 : 1;
    if (interrupted() || cancel_requested(job.name)) {
      record.state = JobState::cancelled;
      record.failed_step = "pending";
      record.start = record.end = iso_utc(std::chrono::system_clock::now());
      record.attempt = previous ? previous->attempt : 0;
      finish(job, record, 0, {});
      return;
    }
    if (previous) {
      keep_earlier_log(layout_, *previous);
      keep_earlier_artifacts(layout_.dir / job.artifact_dir, *previous);
    }
    std::error_code ec;
    fs::remove(layout_.summary_file(job.name), ec);
    fs::create_directories(layout_.dir / job.artifact_dir, ec);
    if (ec)
      throw Error(Errc::io, (layout_.dir / job.artifact_dir).string(),
                  "cannot create the artifact folder: " + ec.message());

    ResolvedJob resolved = resolve_job(job, layout_.dir, layout_.date);
    for (const auto& [k, v] : std::vector<std::pair<std::string, std::string>>{
             {"NIGHTLY_JOB", job.name},
             {"NIGHTLY_DATE", layout_.date},
             {"NIGHTLY_DIR", layout_.dir.string()},
             {"NIGHTLY_ARTIFACT_DIR",
              (layout_.dir / job.artifact_dir).string()},
             {"NIGHTLY_SUMMARY", layout_.summary_file(job.name).string()}})
      resolved.env.push_back(k + "=" + v);

    fs::path running = layout_.running_log(job.name);
    record.log = fs::relative(running, layout_.dir).string();
    record.state = JobState::running;
    record.start = iso_utc(std::chrono::system_clock::now());

    ProcessRequest req;
    req.argv = resolved.argv;
    req.env = resolved.env;
    req.cwd = layout_.dir;
    req.log = running;
    req.timeout_s = job.timeout_s;
    req.grace_s = opt_.grace_s;
    req.should_stop = [&] {
      return interrupted() || cancel_requested(job.name);
    };
    req.on_started = [&](long pid) {
      record_job_process(record, pid);
      // The job may fill the disk before its RUNNING state is written.
      try {
        write_record([&] { write_state(layout_, record); });
      } catch (const Error& e) {
        unrecorded(e, record);
      }
    };
    {
      // Truncate a log left by nothing (keep_earlier_log moved any).
      int fd = ::open(running.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
                      0644);
      if (fd < 0) throw_errno(running.string(), "create the log");
      ::close(fd);
    }
    {
      std::lock_guard lock(mu_);
      ++started_;
    }
    ProcessOutcome o = run_job_process(req);
    record.end = iso_utc(std::chrono::system_clock::now());
    if (!o.not_started)
      record.exit_code =
          o.exit_code >= 0 ? std::optional<int>(o.exit_code) : std::nullopt;
    else
      record.exit_code = 127;
    record.signal = o.signal;
    if (o.stopped) {
      record.state = JobState::cancelled;
      record.failed_step = o.steps.empty() ? "run" : o.steps.back().name;
    } else if (o.exit_code == 0 && !o.not_started) {
      record.state = JobState::succeeded;
    } else {
      record.state = JobState::failed;
      if (o.not_started) record.failed_step = "start";
      if (o.timed_out) record.failed_step = "timeout";
    }
    if (record.state != JobState::succeeded) {
      // The room a freed reserve left is the runner's: counting it as free
      // would call a full disk not full whenever the job filled it before
      // the runner's own write that freed the reserve.
      auto free = free_bytes(layout_.dir);
      if (free && *free < kFullDiskBytes + reserve_.released_bytes())
        record.reason =
            "the nightly's filesystem was full when the job ended (" +
            std::to_string(*free) + " bytes free)";
    }
    std::string end_line = "::nightly " + job.name + ": " + describe_end(o) +
                           " after " + std::to_string(o.duration_s) + " s" +
                           (record.reason.empty() ? "" : "; " + record.reason) +
                           "\n";
    try {
      write_record([&] { append_line(running, end_line); });
    } catch (const Error& e) {
      if (!out_of_space(e)) unrecorded(e, record);
      // The state and the document still say how the job ended.
      record.reason += std::string(record.reason.empty() ? "" : "; ") +
                       "its log's last line could not be written (" +
                       e.message() + ")";
    }
    fs::path final_log = record.state == JobState::succeeded
                             ? layout_.succeeded_log(job.name)
                             : layout_.failed_log(job.name);
    fs::rename(running, final_log, ec);
    if (ec)
      unrecorded(Error(Errc::io, running.string(),
                       "cannot move the log: " + ec.message())
                     .with_errno(ec.value()),
                 record);
    record.log = fs::relative(final_log, layout_.dir).string();
    finish(job, record, o.duration_s, o.steps);
  }

  const Layout& layout_;
  std::vector<JobSpec> jobs_;
  const RunnerOptions& opt_;
  DiskReserve& reserve_;
  std::vector<std::string> group_;  // each job's chunk group; "" for none
  std::vector<std::size_t> todo_;   // jobs not started yet, in start order
  std::map<std::string, unsigned> running_;  // jobs running per group
  unsigned started_ = 0;
  std::mutex mu_;
  std::exception_ptr error_;
  std::vector<std::string> unrecorded_;  // jobs failing after the first
};

}  // namespace

RunnerLock::RunnerLock(const Layout& layout) {
  fs::path file = layout.lock_file();
  fd_ = ::open(file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) throw_errno(file.string(), "open the runner lock");
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    int err = errno;
    LockHolder holder{true, read_pid(fd_)};
    ::close(fd_);
    fd_ = -1;
    if (err == EWOULDBLOCK)
      throw Error(
          Errc::usage, file.string(),
          "another runner (" + holder.describe() + ") is running this nightly");
    errno = err;
    throw_errno(file.string(), "lock");
  }
  std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd_, 0) != 0 ||
      ::pwrite(fd_, pid.data(), pid.size(), 0) < 0) {
    ::close(fd_);
    throw_errno(file.string(), "write the runner pid");
  }
}

RunnerLock::~RunnerLock() {
  if (fd_ >= 0) ::close(fd_);
}

std::string LockHolder::describe() const {
  if (!held) return "nobody";
  if (pid) return "pid " + std::to_string(*pid);
  return "a process that did not write its pid";
}

LockHolder RunnerLock::holder(const Layout& layout) {
  LockHolder h;
  int fd = ::open(layout.lock_file().c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return h;
  // Held: the pid written by the runner, none while it has not written it
  // yet (or when another tool holds the lock).
  if (::flock(fd, LOCK_SH | LOCK_NB) != 0) {
    h.held = true;
    h.pid = read_pid(fd);
  }
  ::close(fd);  // releases the shared lock if we got it
  return h;
}

RunSummary run_nightly(const Layout& layout, std::vector<JobSpec> jobs,
                       const RunnerOptions& options) {
  // Every placeholder is checked before anything is created or run.
  for (const auto& job : jobs) resolve_job(job, layout.dir, layout.date);
  layout.create();
  RunnerLock lock(layout);
  // Before anything is written: a nightly on a full disk fails here, with
  // nothing run.
  DiskReserve reserve(layout.dir / ".runner.reserve", options.reserve_bytes);
  bool stored = path_exists(layout.jobs_file());
  if (options.mode == RunMode::fresh) {
    if (stored)
      throw Error(
          Errc::usage, layout.dir.string(),
          "this nightly already has jobs (use --resume or --retry-failed)");
    if (jobs.empty())
      throw Error(Errc::usage, layout.dir.string(), "no jobs to run");
    write_text_atomically(layout.jobs_file(), jobs_json(jobs));
  } else {
    if (!stored)
      throw Error(
          Errc::usage, layout.jobs_file().string(),
          "no job list: this nightly never ran (run it without --resume)");
    jobs = parse_jobs(read_text_file(layout.jobs_file()),
                      layout.jobs_file().string());
  }

  std::vector<std::size_t> todo;
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    auto rec = read_state(layout, jobs[i].name);
    bool run = false;
    switch (options.mode) {
      case RunMode::fresh:
        run = true;
        break;
      case RunMode::resume:
        run = !rec || !is_finished(rec->state);
        break;
      case RunMode::retry_failed:
        run = rec && rec->state == JobState::failed;
        break;
    }
    if (!run) continue;
    // A process group left by a crashed runner is stopped before its job
    // runs again, so two copies never write the same artifacts; only when
    // its pid is still that job's process (not one reused after a reboot).
    if (rec && rec->state == JobState::running) kill_recorded_job_group(*rec);
    todo.push_back(i);
    JobRecord pending = rec.value_or(JobRecord{});
    pending.job = jobs[i].name;
    pending.state = JobState::pending;
    pending.runner_pid = ::getpid();
    pending.pid = 0;
    pending.pid_start_time.clear();
    pending.boot_id.clear();
    write_state(layout, pending);
  }
  RunSummary summary;
  Runner runner(layout, jobs, options, reserve);
  runner.run(todo, summary);
  summary.interrupted = options.interrupted && options.interrupted->load();
  summary.jobs = read_states(layout);
  return summary;
}

}  // namespace libpkg::nightly
