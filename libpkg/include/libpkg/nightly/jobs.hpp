// SPDX-License-Identifier: BSD-3-Clause
// What a nightly runs: a list of jobs, each one subprocess with its own log
// (builder-scripts.md §6.2: the cron's `<type>_<py>_<cuda>` builds). Jobs come
// from a job file or from the configuration matrix and a command template,
// and are stored with the nightly (`jobs.json`) so `--resume` and
// `--retry-failed` need nothing but the nightly directory.
//
// Job file (JSON):
//   {"template": ["docker", "run", "--rm", "{image}", "sh", "-c", "{script}"],
//    "jobs": [{"name": "manywheel-py3_11-cpu",
//              "argv": ["manywheel", "--wheel", "w.whl", "-o",
//              "{artifact_dir}"], "vars": {"image": "…", "script": "…"}, (fill
//              the template) "env": {"NAME": "value"}, "artifact_dir":
//              "manywheel/cpu",           (default: the name) "config":
//              {"package_type": "manywheel", "python": "3.11",
//                         "accelerator": "cpu"},
//              "timeout_s": 3600}]}
// A bare list of jobs is accepted too. A job without "argv" uses the file's
// "template". `{NAME}` in argv, env values and the template is replaced by
// the job's vars, its config fields and the built-ins {job}, {date},
// {nightly_dir}, {artifact_dir} (absolute), {summary} (where a driver's
// `--json` summary is picked up from) and {build_environment}; `{{` is `{`.
// An unknown placeholder is an error naming the job.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "libpkg/config/matrix.hpp"

namespace libpkg::nightly {

/// One job of a nightly as the job file gives it (placeholders not yet filled).
struct JobSpec {
  std::string name;               // [A-Za-z0-9._+-]+, unique in the nightly
  std::vector<std::string> argv;  // placeholders not yet filled
  std::map<std::string, std::string> env;     // added to the runner's
  std::map<std::string, std::string> vars;    // template values
  std::string artifact_dir;                   // relative to the nightly dir
  std::map<std::string, std::string> config;  // package_type, python, ...
  unsigned timeout_s = 0;                     // 0: none
};

/// Parses a job file's text; Errc::format "ORIGIN: jobs[3]: ..." on anything
/// malformed (not JSON, a field of the wrong type, an empty argv, a bad or
/// duplicate name, an artifact_dir that leaves the nightly directory).
std::vector<JobSpec> parse_jobs(std::string_view json_text,
                                const std::string& origin);

/// One job per configuration, named config::build_name, its argv
/// {"sh", "-c", command_template} (the template's placeholders are filled
/// shell-quoted), artifact dir "<package_type>/<accelerator tag>/<name>", and
/// config fields package_type, python, accelerator, cxx_abi, libtorch_variant,
/// os, arch, build_environment. Errc::usage when the template is empty.
std::vector<JobSpec> jobs_from_matrix(
    const std::vector<config::BuildConfig>& configs,
    const std::string& command_template);

/// The argv and env of a job with every placeholder filled.
struct ResolvedJob {
  std::vector<std::string> argv;
  std::vector<std::string> env;  // "NAME=value"
};
/// Fills every placeholder of \p job's argv and env for the nightly in \p
/// nightly_dir on \p date; Errc::usage naming the job for an unknown
/// placeholder.
ResolvedJob resolve_job(const JobSpec& job,
                        const std::filesystem::path& nightly_dir,
                        const std::string& date);

/// The job's chunk group: the part of its configuration that decides which
/// libraries it grafts and how their bytes are compressed, so that two jobs
/// of one group compress byte-identical chunks (issue 18's chunk cache) and
/// jobs of different groups share none. It is the config's "os", "arch" and
/// "accelerator" (cpu, cu126, cu130, rocm6.2: the CUDA or ROCm libraries
/// grafted), plus "conda" for a conda package (its tar chunks are encoded
/// unlike the deflated zip members of wheels and libtorch zips). The Python
/// version, the C++ ABI and the libtorch variant do not enter: a manywheel
/// job for 3.11 and one for 3.12, or a libtorch zip of the same CUDA, graft
/// the same libraries. "" for a job whose config names no accelerator (a job
/// file without config): the runner knows nothing of its libraries.
std::string chunk_group(const JobSpec& job);

/// The start order of the jobs \p todo (indexes into \p jobs, in job-list
/// order) with their chunk groups interleaved: round r starts the r-th job of
/// every group, the groups in the order of their first job, each group's jobs
/// in list order. The first job of each group comes as early as possible
/// (it fills the cache for the rest of its group) and consecutive jobs are of
/// different groups while two groups are left. A job without a group is a
/// group of its own, so a list without groups keeps its order. Deterministic:
/// it depends on the list only.
std::vector<std::size_t> interleave_chunk_groups(
    const std::vector<JobSpec>& jobs, const std::vector<std::size_t>& todo);

/// The stored form (what parse_jobs reads back).
std::string jobs_json(const std::vector<JobSpec>& jobs);

}  // namespace libpkg::nightly
