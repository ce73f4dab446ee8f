// SPDX-License-Identifier: BSD-3-Clause
#include "libpkg/nightly/state.hpp"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <sstream>

#include "libpkg/base/error.hpp"
#include "libpkg/base/fd.hpp"

namespace libpkg::nightly {

namespace fs = std::filesystem;
using nlohmann::json;

const char* state_name(JobState state) {
  switch (state) {
    case JobState::pending:
      return "PENDING";
    case JobState::running:
      return "RUNNING";
    case JobState::succeeded:
      return "SUCCEEDED";
    case JobState::failed:
      return "FAILED";
    case JobState::cancelled:
      return "CANCELLED";
  }
  return "?";
}

JobState parse_state(const std::string& text, const std::string& origin) {
  for (auto s : {JobState::pending, JobState::running, JobState::succeeded,
                 JobState::failed, JobState::cancelled})
    if (text == state_name(s)) return s;
  throw Error(Errc::format, origin, "unknown job state '" + text + "'");
}

bool is_finished(JobState state) {
  return state == JobState::succeeded || state == JobState::failed ||
         state == JobState::cancelled;
}

std::string read_text_file(const fs::path& path) {
  // Job lists, matrices, states and summaries: a FIFO or device given
  // (or planted) for one is refused at once instead of blocking the runner.
  return read_regular_file(path);
}

void write_text_atomically(const fs::path& path, const std::string& text) {
  // A per-process, per-call temporary name: several queue threads write
  // different files of the same folder at once.
  static std::atomic<unsigned long> counter{0};
  fs::path tmp = path.parent_path() / ("." + path.filename().string() + "." +
                                       std::to_string(getpid()) + "." +
                                       std::to_string(counter++) + ".tmp");
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw_errno(tmp.string(), "create");
  std::size_t done = 0;
  while (done < text.size()) {
    ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      int err = errno;
      ::close(fd);
      ::unlink(tmp.c_str());
      errno = err;
      throw_errno(tmp.string(), "write");
    }
    done += static_cast<std::size_t>(n);
  }
  ::close(fd);
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    errno = err;
    throw_errno(path.string(), "rename");
  }
}

namespace {

// Field 22 (starttime) of /proc/PID/stat, "" when the process is gone. The
// command name (field 2) may hold spaces and parentheses: fields are counted
// after its last ')'.
std::string process_start_time(long pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(in)),
                   std::istreambuf_iterator<char>());
  auto close = text.rfind(')');
  if (close == std::string::npos) return "";
  std::istringstream fields(text.substr(close + 1));
  std::string field;
  for (int n = 3; fields >> field; ++n)
    if (n == 22) return field;
  return "";
}

std::string current_boot_id() {
  std::ifstream in("/proc/sys/kernel/random/boot_id");
  std::string id;
  in >> id;
  return id;
}

}  // namespace

void record_job_process(JobRecord& record, long pid) {
  record.pid = pid;
  record.pid_start_time = process_start_time(pid);
  record.boot_id = current_boot_id();
}

bool kill_recorded_job_group(const JobRecord& r) {
  if (r.pid <= 0 || r.pid_start_time.empty() || r.boot_id.empty()) return false;
  if (r.boot_id != current_boot_id()) return false;
  if (process_start_time(r.pid) != r.pid_start_time) return false;
  if (::getpgid(static_cast<pid_t>(r.pid)) != r.pid) return false;
  return ::killpg(static_cast<pid_t>(r.pid), SIGKILL) == 0;
}

std::string state_json(const JobRecord& r) {
  json j = {{"job", r.job},
            {"state", state_name(r.state)},
            {"start", r.start},
            {"end", r.end},
            {"exit_code", r.exit_code ? json(*r.exit_code) : json(nullptr)},
            {"signal", r.signal},
            {"pid", r.pid},
            {"runner_pid", r.runner_pid},
            {"pid_start_time", r.pid_start_time},
            {"boot_id", r.boot_id},
            {"failed_step", r.failed_step},
            {"reason", r.reason},
            {"log", r.log},
            {"attempt", r.attempt}};
  return j.dump(2) + "\n";
}

std::optional<JobRecord> read_state(const Layout& layout,
                                    const std::string& job) {
  fs::path file = layout.state_file(job);
  std::error_code ec;
  if (!fs::exists(file, ec)) return std::nullopt;
  std::string text = read_text_file(file);
  try {
    json j = json::parse(text);
    JobRecord r;
    r.job = j.at("job").get<std::string>();
    r.state = parse_state(j.at("state").get<std::string>(), file.string());
    r.start = j.at("start").get<std::string>();
    r.end = j.at("end").get<std::string>();
    if (!j.at("exit_code").is_null()) r.exit_code = j["exit_code"].get<int>();
    r.signal = j.at("signal").get<int>();
    r.pid = j.at("pid").get<long>();
    r.runner_pid = j.at("runner_pid").get<long>();
    // Absent in states written before they were recorded: such a pid is
    // never signalled.
    r.pid_start_time = j.value("pid_start_time", "");
    r.boot_id = j.value("boot_id", "");
    r.failed_step = j.at("failed_step").get<std::string>();
    r.reason = j.value("reason", "");
    r.log = j.at("log").get<std::string>();
    r.attempt = j.at("attempt").get<int>();
    return r;
  } catch (const json::exception& e) {
    throw Error(Errc::format, file.string(),
                std::string("not a job state: ") + e.what());
  }
}

void write_state(const Layout& layout, const JobRecord& record) {
  write_text_atomically(layout.state_file(record.job), state_json(record));
}

}  // namespace libpkg::nightly

#include "libpkg/nightly/jobs.hpp"

namespace libpkg::nightly {

std::vector<JobRecord> read_states(const Layout& layout) {
  std::vector<std::string> names;
  std::error_code ec;
  if (fs::exists(layout.jobs_file(), ec)) {
    for (const auto& job : parse_jobs(read_text_file(layout.jobs_file()),
                                      layout.jobs_file().string()))
      names.push_back(job.name);
  } else {
    if (fs::is_directory(layout.dir / "state", ec))
      for (const auto& e : fs::directory_iterator(layout.dir / "state"))
        if (e.path().extension() == ".json" &&
            e.path().filename().string()[0] != '.')
          names.push_back(e.path().stem().string());
    std::sort(names.begin(), names.end());
  }
  std::vector<JobRecord> out;
  for (const auto& name : names) {
    auto r = read_state(layout, name);
    if (!r) {
      r = JobRecord{};
      r->job = name;
    }
    out.push_back(*r);
  }
  return out;
}

}  // namespace libpkg::nightly
