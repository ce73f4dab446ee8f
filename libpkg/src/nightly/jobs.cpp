// SPDX-License-Identifier: BSD-3-Clause
#include "libpkg/nightly/jobs.hpp"

#include <cctype>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "libpkg/base/error.hpp"
#include "libpkg/config/build.hpp"

namespace libpkg::nightly {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

bool valid_name(const std::string& name) {
  if (name.empty() || name.size() > 200 || name[0] == '.') return false;
  for (char c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' &&
        c != '-' && c != '+')
      return false;
  return true;
}

// A relative path that stays inside the nightly directory and does not
// shadow its own folders.
bool valid_artifact_dir(const std::string& dir) {
  if (dir.empty()) return false;
  fs::path p(dir);
  if (p.is_absolute()) return false;
  for (const auto& part : p)
    if (part == ".." || part == ".") return false;
  std::string first = p.begin()->string();
  for (const char* reserved : {"logs", "state", "jobs", "summaries", "cancel",
                               "jobs.json", "runner.lock", ".runner.reserve"})
    if (first == reserved) return false;
  return true;
}

std::map<std::string, std::string> string_map(const json& j,
                                              const std::string& what) {
  std::map<std::string, std::string> out;
  if (j.is_null()) return out;
  if (!j.is_object()) throw std::invalid_argument(what + " must be an object");
  for (const auto& [k, v] : j.items()) {
    if (v.is_string())
      out[k] = v.get<std::string>();
    else if (v.is_number() || v.is_boolean())
      out[k] = v.dump();
    else
      throw std::invalid_argument(what + "." + k + " must be a string");
  }
  return out;
}

std::vector<std::string> string_list(const json& j, const std::string& what) {
  if (!j.is_array() || j.empty())
    throw std::invalid_argument(what + " must be a non-empty list of strings");
  std::vector<std::string> out;
  for (const auto& v : j) {
    if (!v.is_string())
      throw std::invalid_argument(what + " must hold strings");
    out.push_back(v.get<std::string>());
  }
  return out;
}

// Fills {NAME} from `values`; `{{` and `}}` are literal braces. `quote`
// shell-quotes each value (for templates run with sh -c).
std::string fill(const std::string& text,
                 const std::map<std::string, std::string>& values,
                 const std::string& job, bool quote) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if ((c == '{' || c == '}') && i + 1 < text.size() && text[i + 1] == c) {
      out += c;
      ++i;
      continue;
    }
    // Only {identifier} is a placeholder: the braces of shell code and JSON
    // ("${HOME}", '{"a": 1}') pass through.
    std::size_t close = i + 1;
    while (close < text.size() &&
           (std::isalnum(static_cast<unsigned char>(text[close])) ||
            text[close] == '_'))
      ++close;
    if (c != '{' || (i > 0 && text[i - 1] == '$') || close == i + 1 ||
        close >= text.size() || text[close] != '}' ||
        std::isdigit(static_cast<unsigned char>(text[i + 1]))) {
      out += c;
      continue;
    }
    std::string key = text.substr(i + 1, close - i - 1);
    auto it = values.find(key);
    if (it == values.end())
      throw Error(Errc::usage, job,
                  "unknown placeholder {" + key + "} in \"" + text + "\"");
    if (quote) {
      out += '\'';
      for (char v : it->second)
        out += v == '\'' ? std::string("'\\''") : std::string(1, v);
      out += '\'';
    } else {
      out += it->second;
    }
    i = close;
  }
  return out;
}

const char* kShellTemplate = "__libpkg_shell_template__";

}  // namespace

std::vector<JobSpec> parse_jobs(std::string_view text,
                                const std::string& origin) {
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::parse_error& e) {
    throw Error(Errc::format, origin, std::string("not JSON: ") + e.what());
  }
  json list = doc;
  std::vector<std::string> templ;
  if (doc.is_object()) {
    try {
      if (doc.contains("template"))
        templ = string_list(doc["template"], "template");
    } catch (const std::invalid_argument& e) {
      throw Error(Errc::format, origin, e.what());
    }
    if (!doc.contains("jobs"))
      throw Error(Errc::format, origin, "no \"jobs\" list");
    list = doc["jobs"];
  }
  if (!list.is_array())
    throw Error(Errc::format, origin,
                "expected a list of jobs or {\"jobs\": [...]}");
  if (list.empty()) throw Error(Errc::format, origin, "no jobs");
  std::vector<JobSpec> jobs;
  std::map<std::string, std::size_t> seen;
  for (std::size_t i = 0; i < list.size(); ++i) {
    std::string where = "jobs[" + std::to_string(i) + "]";
    const json& j = list[i];
    try {
      if (!j.is_object()) throw std::invalid_argument("must be an object");
      for (const auto& [k, v] : j.items())
        if (k != "name" && k != "argv" && k != "env" && k != "vars" &&
            k != "artifact_dir" && k != "config" && k != "timeout_s")
          throw std::invalid_argument("unknown field \"" + k + "\"");
      JobSpec job;
      if (!j.contains("name") || !j["name"].is_string())
        throw std::invalid_argument("\"name\" must be a string");
      job.name = j["name"].get<std::string>();
      if (!valid_name(job.name))
        throw std::invalid_argument("bad name \"" + job.name +
                                    "\" (letters, digits, . _ - + only)");
      where += " (" + job.name + ")";
      if (j.contains("argv")) {
        job.argv = string_list(j["argv"], "argv");
      } else if (!templ.empty()) {
        job.argv = templ;
      } else {
        throw std::invalid_argument(
            "no \"argv\" and the file has no \"template\"");
      }
      job.env = string_map(j.value("env", json()), "env");
      job.vars = string_map(j.value("vars", json()), "vars");
      job.config = string_map(j.value("config", json()), "config");
      job.artifact_dir = job.name;
      if (j.contains("artifact_dir")) {
        if (!j["artifact_dir"].is_string())
          throw std::invalid_argument("\"artifact_dir\" must be a string");
        job.artifact_dir = j["artifact_dir"].get<std::string>();
      }
      if (!valid_artifact_dir(job.artifact_dir))
        throw std::invalid_argument(
            "artifact_dir \"" + job.artifact_dir +
            "\" must be a relative path inside the nightly");
      if (j.contains("timeout_s")) {
        if (!j["timeout_s"].is_number_unsigned())
          throw std::invalid_argument(
              "\"timeout_s\" must be a number of seconds");
        job.timeout_s = j["timeout_s"].get<unsigned>();
      }
      if (seen.count(job.name))
        throw std::invalid_argument("duplicate name (also jobs[" +
                                    std::to_string(seen[job.name]) + "])");
      seen[job.name] = i;
      jobs.push_back(std::move(job));
    } catch (const std::invalid_argument& e) {
      throw Error(Errc::format, origin, where + ": " + e.what());
    } catch (const json::exception& e) {
      throw Error(Errc::format, origin, where + ": " + e.what());
    }
  }
  return jobs;
}

std::vector<JobSpec> jobs_from_matrix(
    const std::vector<config::BuildConfig>& configs,
    const std::string& command_template) {
  if (command_template.empty())
    throw Error(Errc::usage, "--command",
                "a matrix nightly needs a command template");
  std::vector<JobSpec> jobs;
  for (const auto& c : configs) {
    JobSpec job;
    job.name = config::build_name(c);
    job.argv = {"sh", "-c", command_template};
    job.vars[kShellTemplate] = "1";
    job.config["package_type"] = config::package_type_name(c.type);
    job.config["python"] = c.python ? c.python->str() : "";
    job.config["accelerator"] = c.accelerator.tag();
    job.config["cxx_abi"] = config::cxx_abi_option(c.cxx_abi);
    job.config["libtorch_variant"] =
        c.variant ? c.variant->name() : std::string();
    job.config["os"] = c.os;
    job.config["arch"] = c.arch;
    job.config["build_environment"] = c.build_environment();
    // <type>/<accelerator> as the cron's package folders, then the job: each
    // job's artifacts are what its own folder holds.
    job.artifact_dir = job.config["package_type"] + "/" +
                       job.config["accelerator"] + "/" + job.name;
    jobs.push_back(std::move(job));
  }
  return jobs;
}

ResolvedJob resolve_job(const JobSpec& job, const fs::path& nightly_dir,
                        const std::string& date) {
  std::map<std::string, std::string> values = job.config;
  for (const auto& [k, v] : job.vars) values[k] = v;
  bool shell = values.erase(kShellTemplate) > 0;
  values["job"] = job.name;
  values["date"] = date;
  values["nightly_dir"] = nightly_dir.string();
  values["artifact_dir"] = (nightly_dir / job.artifact_dir).string();
  values["summary"] =
      (nightly_dir / "summaries" / (job.name + ".json")).string();
  if (!values.count("build_environment")) values["build_environment"] = "";
  ResolvedJob out;
  for (std::size_t i = 0; i < job.argv.size(); ++i)
    out.argv.push_back(
        fill(job.argv[i], values, job.name, shell && i == job.argv.size() - 1));
  for (const auto& [k, v] : job.env)
    out.env.push_back(k + "=" + fill(v, values, job.name, false));
  return out;
}

std::string chunk_group(const JobSpec& job) {
  auto field = [&](const char* key) {
    auto it = job.config.find(key);
    return it == job.config.end() ? std::string() : it->second;
  };
  std::string accelerator = field("accelerator");
  if (accelerator.empty()) return "";
  // Fields joined by '/', which none of them holds (matrix tags and job file
  // values alike are short tokens); the key is only compared.
  std::string group = field("os") + "/" + field("arch") + "/" + accelerator;
  if (field("package_type") == "conda") group += "/conda";
  return group;
}

std::vector<std::size_t> interleave_chunk_groups(
    const std::vector<JobSpec>& jobs, const std::vector<std::size_t>& todo) {
  // Each group's jobs in list order, the groups in the order of their first
  // job; a job without a group gets a list of its own.
  std::vector<std::vector<std::size_t>> groups;
  std::map<std::string, std::size_t> index;
  for (std::size_t i : todo) {
    std::string g = chunk_group(jobs.at(i));
    if (g.empty()) {
      groups.push_back({i});
      continue;
    }
    auto [it, added] = index.try_emplace(g, groups.size());
    if (added) groups.emplace_back();
    groups[it->second].push_back(i);
  }
  std::vector<std::size_t> order;
  order.reserve(todo.size());
  for (std::size_t round = 0; order.size() < todo.size(); ++round)
    for (const auto& g : groups)
      if (round < g.size()) order.push_back(g[round]);
  return order;
}

std::string jobs_json(const std::vector<JobSpec>& jobs) {
  json list = json::array();
  for (const auto& j : jobs) {
    json e = {
        {"name", j.name}, {"argv", j.argv}, {"artifact_dir", j.artifact_dir}};
    if (!j.env.empty()) e["env"] = j.env;
    if (!j.vars.empty()) e["vars"] = j.vars;
    if (!j.config.empty()) e["config"] = j.config;
    if (j.timeout_s) e["timeout_s"] = j.timeout_s;
    list.push_back(std::move(e));
  }
  return json{{"jobs", list}}.dump(2) + "\n";
}

}  // namespace libpkg::nightly
