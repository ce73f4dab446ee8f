// SPDX-License-Identifier: BSD-3-Clause
#include "libpkg/nightly/runner.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <mutex>
#include <system_error>
#include <thread>

#include "clock.hpp"
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

long read_pid(int fd) {
  char buf[32] = {};
  ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
  return n > 0 ? std::atol(buf) : 0;
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

void append_line(const fs::path& log, const std::string& line) {
  int fd = ::open(log.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
  if (fd < 0) return;
  ssize_t n = ::write(fd, line.data(), line.size());
  (void)n;
  ::close(fd);
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
         const RunnerOptions& opt)
      : layout_(layout), jobs_(std::move(jobs)), opt_(opt) {}

  void run(const std::vector<std::size_t>& todo, RunSummary& summary) {
    todo_ = todo;
    unsigned n = opt_.parallel
                     ? opt_.parallel
                     : std::max(1u, std::thread::hardware_concurrency());
    n = std::min<unsigned>(
        n, static_cast<unsigned>(std::max<std::size_t>(todo.size(), 1)));
    std::vector<std::thread> queues;
    for (unsigned i = 0; i < n; ++i) queues.emplace_back([this] { queue(); });
    for (auto& t : queues) t.join();
    if (error_) std::rethrow_exception(error_);
    summary.ran = started_;
  }

 private:
  bool interrupted() const {
    return opt_.interrupted &&
           opt_.interrupted->load(std::memory_order_relaxed);
  }
  bool cancel_requested(const std::string& job) const {
    return path_exists(layout_.cancel_request(job));
  }

  void queue() {
    for (;;) {
      std::size_t i;
      {
        std::lock_guard lock(mu_);
        if (next_ >= todo_.size() || error_) return;
        i = todo_[next_++];
      }
      try {
        run_one(jobs_[i]);
      } catch (...) {
        // A failure of the runner itself (a full disk for a state file):
        // stop handing out jobs and report it once all queues stopped.
        std::lock_guard lock(mu_);
        if (!error_) error_ = std::current_exception();
      }
    }
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
    write_text_atomically(
        layout_.job_document(job.name),
        job_document(layout_, job, record, duration_s, steps, summary));
    write_state(layout_, record);
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
      write_state(layout_, record);
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
    append_line(running, "::nightly " + job.name + ": " + describe_end(o) +
                             " after " + std::to_string(o.duration_s) + " s\n");
    fs::path final_log = record.state == JobState::succeeded
                             ? layout_.succeeded_log(job.name)
                             : layout_.failed_log(job.name);
    fs::rename(running, final_log, ec);
    if (ec)
      throw Error(Errc::io, running.string(),
                  "cannot move the log: " + ec.message());
    record.log = fs::relative(final_log, layout_.dir).string();
    finish(job, record, o.duration_s, o.steps);
  }

  const Layout& layout_;
  std::vector<JobSpec> jobs_;
  const RunnerOptions& opt_;
  std::vector<std::size_t> todo_;
  std::size_t next_ = 0;
  unsigned started_ = 0;
  std::mutex mu_;
  std::exception_ptr error_;
};

}  // namespace

RunnerLock::RunnerLock(const Layout& layout) {
  fs::path file = layout.lock_file();
  fd_ = ::open(file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) throw_errno(file.string(), "open the runner lock");
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    int err = errno;
    long pid = read_pid(fd_);
    ::close(fd_);
    fd_ = -1;
    if (err == EWOULDBLOCK)
      throw Error(Errc::usage, file.string(),
                  "another runner (pid " + std::to_string(pid) +
                      ") is running this nightly");
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

long RunnerLock::holder(const Layout& layout) {
  int fd = ::open(layout.lock_file().c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  long pid = 0;
  // Held: the pid written by the runner, or -1 while it has not written it
  // yet (or when another tool holds the lock).
  if (::flock(fd, LOCK_SH | LOCK_NB) != 0) {
    pid = read_pid(fd);
    if (pid <= 0) pid = -1;
  }
  ::close(fd);  // releases the shared lock if we got it
  return pid;
}

RunSummary run_nightly(const Layout& layout, std::vector<JobSpec> jobs,
                       const RunnerOptions& options) {
  // Every placeholder is checked before anything is created or run.
  for (const auto& job : jobs) resolve_job(job, layout.dir, layout.date);
  layout.create();
  RunnerLock lock(layout);
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
  Runner runner(layout, jobs, options);
  runner.run(todo, summary);
  summary.interrupted = options.interrupted && options.interrupted->load();
  summary.jobs = read_states(layout);
  return summary;
}

}  // namespace libpkg::nightly
