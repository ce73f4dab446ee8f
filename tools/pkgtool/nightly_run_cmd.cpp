// SPDX-License-Identifier: BSD-3-Clause
// `pkgtool nightly run`: a job file or the configuration matrix with a
// command template → one nightly directory (docs/nightly.md).
#include <fmt/format.h>
#include <signal.h>

#include <atomic>
#include <cstdio>
#include <sstream>

#include "cache_flags.hpp"
#include "cli_parse.hpp"
#include "libpkg/base/error.hpp"
#include "libpkg/config/matrix.hpp"
#include "libpkg/nightly/control.hpp"
#include "libpkg/nightly/publish.hpp"
#include "libpkg/nightly/runner.hpp"
#include "matrix_input.hpp"
#include "nightly_subcommand.hpp"
#include "stats_url_option.hpp"

namespace pkgtool {
namespace {

namespace nl = libpkg::nightly;

const char* kUsage =
    "usage: pkgtool nightly run (--jobs FILE | --command TEMPLATE "
    "[--matrix-file F]\n"
    "                            [--package-type T]... [--cuda C]... [--python "
    "P]...)\n"
    "                           [--root DIR] [--date YYYY_MM_DD] [-j N] "
    "[--list-order]\n"
    "                           [--resume | --retry-failed] [--keep-days N]\n"
    "                           [--reserve SIZE] [--no-publish] [--channel "
    "DIR] "
    "[--keep N]\n";

std::atomic<bool> g_interrupted{false};

// --channel DIR (default <root>/channel) and --keep N, shared by `run` and
// `publish`.
struct ChannelOptions {
  std::string channel;
  unsigned keep = 0;
  void add_to(CLI::App& app) {
    app.add_option("--channel", channel,
                   "the channel directory (default: ROOT/channel)");
    app.add_option(
        "--keep", keep,
        "keep the last N nightlies' versions of each package and configuration "
        "(default: all)");
  }
  void publish(const NightlyWhere& where, const nl::Layout& layout) const {
    std::filesystem::path dir =
        channel.empty() ? std::filesystem::path(where.root) / "channel"
                        : std::filesystem::path(channel);
    auto r = nl::publish_nightly(layout, dir, {keep});
    fmt::print("published {} file(s) of {} to {} ({} pruned)\n", r.added.size(),
               layout.date,
               (std::filesystem::absolute(dir) / "current").string(),
               r.pruned.size());
    for (const auto& f : r.pruned) fmt::print("pruned {}\n", f);
  }
};

extern "C" void on_interrupt(int) { g_interrupted.store(true); }

// SIGINT/SIGTERM cancel the nightly (children stopped, states recorded)
// instead of killing the runner; restored when the run ends.
class InterruptScope {
 public:
  InterruptScope() {
    struct sigaction sa {};
    sa.sa_handler = on_interrupt;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_int_);
    sigaction(SIGTERM, &sa, &old_term_);
  }
  ~InterruptScope() {
    sigaction(SIGINT, &old_int_, nullptr);
    sigaction(SIGTERM, &old_term_, nullptr);
  }

 private:
  struct sigaction old_int_ {
  }, old_term_{};
};

int run_run(const std::vector<std::string>& args) {
  CLI::App app{"run a nightly", "nightly run"};
  NightlyWhere where;
  where.add_to(app);
  std::string job_file, command;
  MatrixInput matrix;
  unsigned parallel = 0, grace = 5;
  bool resume = false, retry = false, quiet = false, no_publish = false,
       list_order = false;
  ChannelOptions channel;
  channel.add_to(app);
  app.add_flag("--no-publish", no_publish,
               "do not publish the successful artifacts");
  std::optional<unsigned> keep_days;
  app.add_option("--jobs", job_file, "job file (JSON, docs/nightly.md)");
  app.add_option(
      "--command", command,
      "matrix mode: the command each configuration runs with sh -c "
      "({build_environment}, {artifact_dir}, {summary}, ... filled in)");
  matrix.add_to(app);
  app.add_option("-j,--parallel", parallel,
                 "parallel queues (default: the cores)");
  app.add_flag("--list-order", list_order,
               "start the jobs in the list's order (default: jobs of "
               "different chunk groups run at once, docs/nightly.md)");
  app.add_option("--grace", grace,
                 "seconds between SIGTERM and SIGKILL on cancel");
  app.add_flag("--resume", resume,
               "after a runner crash: run the unfinished jobs");
  app.add_flag("--retry-failed", retry, "run the FAILED jobs again");
  optional_option(app, "--keep-days", keep_days,
                  "then delete nightly folders older than N days");
  std::string reserve = "1M";
  app.add_option("--reserve", reserve,
                 "space held back for the runner's own records on a full "
                 "disk (default 1M; 0: none)");
  app.add_flag("-q,--quiet", quiet, "no line per finished job");
  RunnerStats stats;
  stats.add_to(app);
  if (!parse_cli(app, args, "pkgtool nightly run", kUsage)) return 0;

  if (resume && retry)
    throw libpkg::Error(libpkg::Errc::usage, "pkgtool nightly run",
                        "--resume and --retry-failed exclude each other");
  bool has_input = !job_file.empty() || !command.empty();
  if (!job_file.empty() && !command.empty())
    throw libpkg::Error(libpkg::Errc::usage, "pkgtool nightly run",
                        "give --jobs or --command, not both");
  if ((resume || retry) && has_input)
    throw libpkg::Error(
        libpkg::Errc::usage, "pkgtool nightly run",
        "--resume/--retry-failed take the jobs from the nightly's jobs.json");
  if (!resume && !retry && !has_input)
    usage_error("pkgtool nightly run",
                "no jobs: give --jobs FILE or --command TEMPLATE");
  if (command.empty() && matrix.given())
    throw libpkg::Error(libpkg::Errc::usage, "pkgtool nightly run",
                        "matrix filters need --command TEMPLATE");

  std::vector<nl::JobSpec> jobs;
  if (!job_file.empty())
    jobs = nl::parse_jobs(nl::read_text_file(job_file), job_file);
  else if (!command.empty())
    jobs = nl::jobs_from_matrix(matrix.configs(), command);

  nl::Layout layout = where.layout(false);
  stats.open(where.root, layout);
  nl::RunnerOptions opt;
  opt.parallel = parallel;
  opt.grace_s = grace;
  opt.list_order = list_order;
  opt.reserve_bytes = parse_byte_size("--reserve", reserve);
  opt.mode = resume  ? nl::RunMode::resume
             : retry ? nl::RunMode::retry_failed
                     : nl::RunMode::fresh;
  g_interrupted.store(false);
  opt.interrupted = &g_interrupted;
  if (!quiet)
    opt.on_finished = [](const nl::JobRecord& r) {
      std::string detail =
          r.failed_step.empty() ? "" : " (step " + r.failed_step + ")";
      fmt::print("{:<9} {}{}  {}\n", nl::state_name(r.state), r.job, detail,
                 r.log);
      std::fflush(stdout);
    };
  opt.on_finished = stats.record_then(std::move(opt.on_finished));
  nl::RunSummary summary;
  {
    InterruptScope scope;
    summary = nl::run_nightly(layout, std::move(jobs), opt);
  }
  fmt::print(
      "nightly {}: {} succeeded, {} failed, {} cancelled ({} run now); {}\n",
      layout.date, summary.count(nl::JobState::succeeded),
      summary.count(nl::JobState::failed),
      summary.count(nl::JobState::cancelled), summary.ran, layout.dir.string());
  if (!summary.interrupted && !no_publish) channel.publish(where, layout);
  if (keep_days)
    for (const auto& gone :
         nl::prune_nightlies(where.root, *keep_days, nl::today_utc()))
      fmt::print("deleted {}\n", gone.string());
  stats.finish();
  if (summary.interrupted) return 130;
  return summary.count(nl::JobState::succeeded) == summary.jobs.size() ? 0 : 1;
}

int run_publish(const std::vector<std::string>& args) {
  CLI::App app{"publish a nightly's successful artifacts", "nightly publish"};
  NightlyWhere where;
  where.add_to(app);
  ChannelOptions channel;
  channel.add_to(app);
  if (!parse_cli(app, args, "pkgtool nightly publish", "")) return 0;
  nl::Layout layout = where.layout(true);
  if (!std::filesystem::is_directory(layout.dir))
    throw libpkg::Error(libpkg::Errc::not_found, layout.dir.string(),
                        "no such nightly");
  channel.publish(where, layout);
  return 0;
}

const NightlySubcommand kPublish(
    "publish", "[--root DIR] [--date D] [--channel DIR] [--keep N]",
    run_publish);
const NightlySubcommand kRun(
    "run",
    "(--jobs FILE | --command T [filters]) [--root DIR] [-j N] [--list-order] "
    "[--resume|--retry-failed] [--keep-days N] [--channel DIR] [--keep N] "
    "[--no-publish] [--stats-url URL|--no-stats]",
    run_run);

}  // namespace
}  // namespace pkgtool
