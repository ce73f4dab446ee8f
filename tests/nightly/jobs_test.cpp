// SPDX-License-Identifier: BSD-3-Clause
// The nightly's pure parts: dates, job files and placeholders, the failing
// step (log tails: files_test.cpp).
#include "libpkg/nightly/jobs.hpp"

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cerrno>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <stdexcept>

#include "libpkg/base/error.hpp"
#include "libpkg/base/scratch_dir.hpp"
#include "libpkg/nightly/control.hpp"
#include "libpkg/nightly/job_document.hpp"
#include "nightly/job_process.hpp"

namespace nl = libpkg::nightly;

TEST(NightlyDate, AcceptsThreeSpellingsOfARealDay) {
  EXPECT_EQ(nl::normalize_date("2024_02_29"), "2024_02_29");
  EXPECT_EQ(nl::normalize_date("2024-02-29"), "2024_02_29");
  EXPECT_EQ(nl::normalize_date("20240229"), "2024_02_29");
  EXPECT_THROW(nl::normalize_date("2023_02_29"), libpkg::Error);
  EXPECT_THROW(nl::normalize_date("2024_13_01"), libpkg::Error);
  EXPECT_THROW(nl::normalize_date("2024_01-01"), libpkg::Error);
  EXPECT_TRUE(nl::is_nightly_name("2024_01_31"));
  EXPECT_FALSE(nl::is_nightly_name("20240131"));
  EXPECT_TRUE(nl::is_nightly_name(nl::today_utc()));
}

TEST(NightlyJobs, TemplateAndPlaceholders) {
  auto jobs =
      nl::parse_jobs(R"({"template": ["run", "{image}", "${HOME}", "{{x}}"],
    "jobs": [{"name": "a", "vars": {"image": "img:1"}},
             {"name": "b", "argv": ["echo", "{job}-{date}", "{\"k\": 1}"],
              "env": {"OUT": "{artifact_dir}"}, "artifact_dir": "x/y"}]})",
                     "f.json");
  ASSERT_EQ(jobs.size(), 2u);
  auto a = nl::resolve_job(jobs[0], "/n/2024_01_01", "2024_01_01");
  EXPECT_EQ(a.argv,
            (std::vector<std::string>{"run", "img:1", "${HOME}", "{x}"}));
  auto b = nl::resolve_job(jobs[1], "/n/2024_01_01", "2024_01_01");
  EXPECT_EQ(b.argv[1], "b-2024_01_01");
  EXPECT_EQ(b.argv[2], "{\"k\": 1}");
  EXPECT_EQ(b.env, (std::vector<std::string>{"OUT=/n/2024_01_01/x/y"}));
  // the stored form reads back the same
  auto again = nl::parse_jobs(nl::jobs_json(jobs), "jobs.json");
  EXPECT_EQ(nl::resolve_job(again[1], "/n", "d").argv,
            nl::resolve_job(jobs[1], "/n", "d").argv);
}

TEST(NightlyJobs, MatrixCommandIsShellQuoted) {
  libpkg::config::MatrixFilter f{{"manywheel"}, {"cpu"}, {"3.11"}};
  auto configs = libpkg::config::expand_matrix(
      libpkg::config::builtin_matrix_json(), "<built-in>", f);
  ASSERT_FALSE(configs.empty());
  auto jobs = nl::jobs_from_matrix(
      configs, "echo {build_environment} > {artifact_dir}/e");
  auto r = nl::resolve_job(jobs[0], "/n/it's", "d");
  EXPECT_EQ(r.argv[0], "sh");
  EXPECT_EQ(r.argv[2],
            "echo 'manywheel 3.11 cpu' > '/n/it'\\''s/manywheel/cpu/" +
                jobs[0].name + "'/e");
}

// The chunk group: what decides which libraries a job grafts and how they
// are compressed (os, arch, accelerator, conda or not), not the Python.
TEST(NightlyJobs, ChunkGroupIsTheConfigurationWithoutThePython) {
  libpkg::config::MatrixFilter f{
      {"manywheel", "conda"}, {"cpu", "cu118"}, {"3.11", "3.12"}};
  auto configs = libpkg::config::expand_matrix(
      libpkg::config::builtin_matrix_json(), "<built-in>", f);
  auto jobs = nl::jobs_from_matrix(configs, "true");
  std::map<std::string, std::set<std::string>> names;  // group -> jobs
  for (const auto& j : jobs) names[nl::chunk_group(j)].insert(j.name);
  // cpu and cu118, each for manywheel and conda: 4 groups of 2 Pythons.
  ASSERT_EQ(names.size(), 4u) << nl::jobs_json(jobs);
  EXPECT_EQ(names.at("linux/x86_64/cu118"),
            (std::set<std::string>{"manywheel-py3_11-cuda11_8",
                                   "manywheel-py3_12-cuda11_8"}));
  EXPECT_EQ(names.at("linux/x86_64/cu118/conda").size(), 2u);
  EXPECT_EQ(names.at("linux/x86_64/cpu").size(), 2u);
  // A job file's config: the accelerator at least, else no group.
  auto bare = nl::parse_jobs(
      R"([{"name": "a", "argv": ["x"]},
          {"name": "b", "argv": ["x"], "config": {"python": "3.11"}},
          {"name": "c", "argv": ["x"], "config": {"accelerator": "cu130"}},
          {"name": "d", "argv": ["x"],
           "config": {"accelerator": "cu130", "arch": "aarch64"}}])",
      "f");
  EXPECT_EQ(nl::chunk_group(bare[0]), "");
  EXPECT_EQ(nl::chunk_group(bare[1]), "");
  EXPECT_EQ(nl::chunk_group(bare[2]), "//cu130");
  EXPECT_EQ(nl::chunk_group(bare[3]), "/aarch64/cu130");
}

TEST(NightlyJobs, InterleaveChunkGroupsRoundRobinInListOrder) {
  auto jobs = nl::parse_jobs(
      R"([{"name": "a1", "argv": ["x"], "config": {"accelerator": "A"}},
          {"name": "a2", "argv": ["x"], "config": {"accelerator": "A"}},
          {"name": "a3", "argv": ["x"], "config": {"accelerator": "A"}},
          {"name": "n1", "argv": ["x"]},
          {"name": "b1", "argv": ["x"], "config": {"accelerator": "B"}},
          {"name": "b2", "argv": ["x"], "config": {"accelerator": "B"}},
          {"name": "c1", "argv": ["x"], "config": {"accelerator": "C"}}])",
      "f");
  auto names = [&](const std::vector<std::size_t>& order) {
    std::vector<std::string> out;
    for (std::size_t i : order) out.push_back(jobs[i].name);
    return out;
  };
  std::vector<std::size_t> all{0, 1, 2, 3, 4, 5, 6};
  // Round 0: every group's first job (n1 has none: a group of its own).
  EXPECT_EQ(
      names(nl::interleave_chunk_groups(jobs, all)),
      (std::vector<std::string>{"a1", "n1", "b1", "c1", "a2", "b2", "a3"}));
  // A resume: only the jobs left, interleaved among themselves.
  EXPECT_EQ(names(nl::interleave_chunk_groups(jobs, {1, 2, 5, 6})),
            (std::vector<std::string>{"a2", "b2", "c1", "a3"}));
  // One group, or no groups: the list's order.
  EXPECT_EQ(names(nl::interleave_chunk_groups(jobs, {0, 1, 2})),
            (std::vector<std::string>{"a1", "a2", "a3"}));
  EXPECT_EQ(names(nl::interleave_chunk_groups(jobs, {3})),
            (std::vector<std::string>{"n1"}));
  EXPECT_TRUE(nl::interleave_chunk_groups(jobs, {}).empty());
}

TEST(NightlyJobs, UnknownPlaceholderNamesTheJob) {
  auto jobs = nl::parse_jobs(R"([{"name": "j", "argv": ["{nope}"]}])", "f");
  try {
    nl::resolve_job(jobs[0], "/n", "d");
    FAIL();
  } catch (const libpkg::Error& e) {
    EXPECT_EQ(e.file(), "j");
    EXPECT_NE(e.message().find("{nope}"), std::string::npos);
  }
}

TEST(NightlyJobs, FailingStep) {
  std::vector<nl::StepTime> steps{{"build", 1}, {"pack", 2}};
  EXPECT_EQ(nl::failing_step("", steps), "pack");
  EXPECT_EQ(nl::failing_step("", {}), "run");
  EXPECT_EQ(nl::failing_step("not json", steps), "pack");
  EXPECT_EQ(nl::failing_step(R"({"passed": true})", steps), "pack");
  // other shapes never throw
  EXPECT_EQ(nl::failing_step(R"({"passed": "no", "checks": 3})", steps),
            "pack");
  EXPECT_EQ(nl::failing_step(R"({"passed": false, "checks": [{"checks": 1},
      {"checks": [{"status": "fail", "id": 7}]}]})",
                             steps),
            "check:?");
  EXPECT_EQ(nl::failing_step("[1, 2]", steps), "pack");
  EXPECT_EQ(nl::failing_step(R"({"passed": false, "checks": [{"checks": [
      {"id": "abi", "status": "pass"}, {"id": "rpath", "status": "fail"}]}]})",
                             steps),
            "check:rpath");
}

namespace {
std::size_t open_fds() {
  std::size_t n = 0;
  for ([[maybe_unused]] const auto& e :
       std::filesystem::directory_iterator("/proc/self/fd"))
    ++n;
  return n;
}
}  // namespace

// When on_started (the runner's write_state) throws, the job must not keep
// running unreaped, and the log's two descriptors must not leak.
TEST(NightlyJobProcess, AThrowingOnStartedKillsAndReapsTheJob) {
  auto dir = libpkg::ScratchDir::in_temp("nightly-proc-");
  long started = 0;
  nl::ProcessRequest req;
  req.argv = {"sleep", "30"};
  req.log = dir.path() / "job.log";
  req.on_started = [&](long pid) {
    started = pid;
    throw std::runtime_error("cannot write the state");
  };
  std::size_t fds_before = open_fds();
  EXPECT_THROW(nl::run_job_process(req), std::runtime_error);
  ASSERT_GT(started, 0);
  // Reaped, not a zombie: the pid no longer exists.
  errno = 0;
  int alive = ::kill(static_cast<pid_t>(started), 0);
  int kill_errno = errno;
  EXPECT_EQ(alive, -1);
  EXPECT_EQ(kill_errno, ESRCH);
  EXPECT_EQ(open_fds(), fds_before);
  if (alive == 0) {  // leave nothing behind when the test fails
    ::killpg(static_cast<pid_t>(started), SIGKILL);
    ::waitpid(static_cast<pid_t>(started), nullptr, 0);
  }
}
