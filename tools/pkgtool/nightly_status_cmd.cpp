// SPDX-License-Identifier: BSD-3-Clause
// `pkgtool nightly status|describe|logs|cancel|list`: reading (and
// cancelling in) a nightly from another process while it runs.
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <nlohmann/json.hpp>
#include <thread>

#include "cli_parse.hpp"
#include "libpkg/base/error.hpp"
#include "libpkg/nightly/control.hpp"
#include "libpkg/nightly/runner.hpp"
#include "nightly_subcommand.hpp"

namespace pkgtool {
namespace {

namespace nl = libpkg::nightly;
namespace fs = std::filesystem;
using nlohmann::json;

int run_status(const std::vector<std::string>& args) {
  CLI::App app{"job states of a nightly", "nightly status"};
  NightlyWhere where;
  where.add_to(app);
  bool as_json = false;
  app.add_flag("--json", as_json, "the states as a JSON list");
  if (!parse_cli(app, args, "pkgtool nightly status", "")) return 0;
  nl::Layout layout = where.layout(true);
  if (!fs::is_directory(layout.dir))
    throw libpkg::Error(libpkg::Errc::not_found, layout.dir.string(),
                        "no such nightly");
  auto states = nl::read_states(layout);
  if (as_json) {
    json list = json::array();
    for (const auto& r : states) list.push_back(json::parse(nl::state_json(r)));
    nl::LockHolder runner = nl::RunnerLock::holder(layout);
    json doc = {{"nightly", layout.date},
                {"dir", layout.dir.string()},
                {"runner_held", runner.held},
                {"runner_pid", runner.pid ? json(*runner.pid) : json(nullptr)},
                {"jobs", list}};
    fmt::print("{}\n", doc.dump(2));
    return 0;
  }
  nl::LockHolder runner = nl::RunnerLock::holder(layout);
  fmt::print("nightly {} ({}), {}\n", layout.date, layout.dir.string(),
             runner ? "runner " + runner.describe() : std::string("no runner"));
  fmt::print("{:<10} {:<40} {:<24} {:<24} {:>4}  {}\n", "STATE", "JOB", "START",
             "END", "EXIT", "STEP");
  for (const auto& r : states)
    fmt::print("{:<10} {:<40} {:<24} {:<24} {:>4}  {}\n",
               nl::state_name(r.state), r.job, r.start, r.end,
               r.exit_code ? std::to_string(*r.exit_code) : "-",
               r.reason.empty() ? r.failed_step
                                : r.failed_step + " (" + r.reason + ")");
  return 0;
}

int run_describe(const std::vector<std::string>& args) {
  CLI::App app{"one job: its state and its job document", "nightly describe"};
  NightlyWhere where;
  where.add_to(app);
  std::string job;
  app.add_option("JOB", job)->required();
  if (!parse_cli(app, args, "pkgtool nightly describe", "")) return 0;
  nl::Layout layout = where.layout(true);
  auto state = nl::read_state(layout, job);
  if (!state) {
    nl::find_log(layout, job);  // throws "no job named" for an unknown one
    state = nl::JobRecord{};
    state->job = job;
  }
  json doc = {{"state", json::parse(nl::state_json(*state))},
              {"document", nullptr}};
  fs::path document = layout.job_document(job);
  if (fs::exists(document))
    doc["document"] = json::parse(nl::read_text_file(document));
  fmt::print("{}\n", doc.dump(2));
  return 0;
}

// Prints the log (its last --tail lines, read backwards from the end) and,
// with --follow, what is appended to it until the job ends. The log is read
// through one descriptor: the runner's move from running/ to succeeded/ or
// failed/ is a rename, so the descriptor keeps reading the same file.
int run_logs(const std::vector<std::string>& args) {
  CLI::App app{"a job's log", "nightly logs"};
  NightlyWhere where;
  where.add_to(app);
  std::string job;
  std::size_t tail = 0;
  bool follow = false;
  app.add_option("JOB", job)->required();
  app.add_option("--tail", tail, "only the last N lines");
  app.add_flag("-f,--follow", follow, "keep printing until the job ends");
  if (!parse_cli(app, args, "pkgtool nightly logs", "")) return 0;
  nl::Layout layout = where.layout(true);
  fs::path log = nl::find_log(layout, job);
  int fd = ::open(log.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) libpkg::throw_errno(log.string(), "open");
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) libpkg::throw_errno(log.string(), "stat");
  std::uint64_t offset = nl::tail_start(
      fd, static_cast<std::uint64_t>(st.st_size), tail, log.string());
  offset = nl::copy_to_end(fd, offset, stdout, log.string());
  if (!follow) return 0;
  for (;;) {
    // The state is read before the last copy: a final state is written
    // after the job's last byte, so nothing is left behind.
    auto state = nl::read_state(layout, job);
    bool finished = state && nl::is_finished(state->state);
    offset = nl::copy_to_end(fd, offset, stdout, log.string());
    if (finished) return 0;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
}

int run_cancel(const std::vector<std::string>& args) {
  CLI::App app{"cancel a job", "nightly cancel"};
  NightlyWhere where;
  where.add_to(app);
  std::string job;
  app.add_option("JOB", job)->required();
  if (!parse_cli(app, args, "pkgtool nightly cancel", "")) return 0;
  fmt::print("{}\n", nl::cancel_job(where.layout(true), job));
  return 0;
}

int run_list(const std::vector<std::string>& args) {
  CLI::App app{"the nightlies of a root", "nightly list"};
  NightlyWhere where;
  where.add_to(app);
  if (!parse_cli(app, args, "pkgtool nightly list", "")) return 0;
  fmt::print("{:<12} {:>5} {:>9} {:>6} {:>9} {:>10}  {}\n", "DATE", "JOBS",
             "SUCCEEDED", "FAILED", "CANCELLED", "UNFINISHED", "RUNNER");
  for (const auto& n : nl::list_nightlies(where.root))
    fmt::print("{:<12} {:>5} {:>9} {:>6} {:>9} {:>10}  {}\n", n.date, n.jobs,
               n.succeeded, n.failed, n.cancelled, n.unfinished,
               n.runner ? n.runner.describe() : std::string("-"));
  return 0;
}

const NightlySubcommand kStatus("status", "[--root DIR] [--date D] [--json]",
                                run_status);
const NightlySubcommand kDescribe("describe", "JOB [--root DIR] [--date D]",
                                  run_describe);
const NightlySubcommand kLogs(
    "logs", "JOB [--tail N] [--follow] [--root DIR] [--date D]", run_logs);
const NightlySubcommand kCancel("cancel", "JOB [--root DIR] [--date D]",
                                run_cancel);
const NightlySubcommand kList("list", "[--root DIR]", run_list);

}  // namespace
}  // namespace pkgtool
