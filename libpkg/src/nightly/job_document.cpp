// SPDX-License-Identifier: BSD-3-Clause
#include "libpkg/nightly/job_document.hpp"

#include <unistd.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <system_error>

#include "libpkg/archive/zip_reader.hpp"
#include "libpkg/base/error.hpp"
#include "libpkg/base/sha256.hpp"

namespace libpkg::nightly {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::string host_name() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0) return "";
  return buf;
}

bool is_zip_name(const std::string& name) {
  for (const char* ext : {".whl", ".zip", ".conda"})
    if (name.size() > std::string(ext).size() &&
        name.compare(name.size() - std::string(ext).size(), std::string::npos,
                     ext) == 0)
      return true;
  return false;
}

// The ten largest members of a zip (wheels, libtorch zips, .conda), by
// uncompressed size: what grew when a package got bigger.
json largest_members(const fs::path& file) {
  json out = json::array();
  auto zip = archive::ZipReader::open(file);
  std::vector<const archive::ZipEntry*> entries;
  for (const auto& e : zip.entries())
    if (!e.is_directory()) entries.push_back(&e);
  std::sort(entries.begin(), entries.end(),
            [](const archive::ZipEntry* a, const archive::ZipEntry* b) {
              return a->uncompressed_size != b->uncompressed_size
                         ? a->uncompressed_size > b->uncompressed_size
                         : a->name < b->name;
            });
  if (entries.size() > 10) entries.resize(10);
  for (const auto* e : entries)
    out.push_back({{"name", e->name}, {"size", e->uncompressed_size}});
  return out;
}

json artifacts(const fs::path& dir, const fs::path& nightly_dir, json& notes) {
  json out = json::array();
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return out;
  std::vector<fs::path> files;
  // symlink_status, not status: a symlink in the artifact dir may point at
  // any file of the machine, which must never be hashed and published.
  for (auto it = fs::recursive_directory_iterator(dir, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (it->path().filename().string()[0] == '.') continue;
    auto type = it->symlink_status(ec).type();
    if (type == fs::file_type::symlink)
      notes.push_back("refused symlink " + it->path().string() +
                      ": artifacts must be regular files");
    else if (type == fs::file_type::regular)
      files.push_back(it->path());
  }
  std::sort(files.begin(), files.end());
  // Lexical: fs::relative would resolve symlinked directories above.
  fs::path base = fs::absolute(nightly_dir).lexically_normal();
  for (const auto& f : files) {
    u64 size = 0;
    auto digest = Sha256::of_file(f, &size);
    json a = {
        {"name",
         fs::absolute(f).lexically_normal().lexically_relative(base).string()},
        {"size", size},
        {"sha256", Sha256::hex(digest)},
        {"largest_members", nullptr}};
    if (is_zip_name(f.filename().string())) {
      try {
        a["largest_members"] = largest_members(f);
      } catch (const Error& e) {
        notes.push_back(std::string("not a readable zip: ") + e.what());
      }
    }
    out.push_back(std::move(a));
  }
  return out;
}

}  // namespace

std::string failing_step(const std::string& summary_text,
                         const std::vector<StepTime>& steps) {
  json s =
      summary_text.empty() ? json() : json::parse(summary_text, nullptr, false);
  // A summary of another shape (a job's own JSON at {summary}) is ignored,
  // never an error of the runner.
  if (s.is_object() && s.contains("passed") && s["passed"].is_boolean() &&
      !s["passed"].get<bool>() && s.contains("checks") &&
      s["checks"].is_array()) {
    for (const auto& report : s["checks"]) {
      if (!report.is_object() || !report.contains("checks") ||
          !report["checks"].is_array())
        continue;
      for (const auto& c : report["checks"])
        if (c.is_object() && c.contains("status") && c["status"] == "fail")
          return "check:" + (c.contains("id") && c["id"].is_string()
                                 ? c["id"].get<std::string>()
                                 : std::string("?"));
    }
    return "check";
  }
  if (!steps.empty()) return steps.back().name;
  return "run";
}

std::string job_document(const Layout& layout, const JobSpec& job,
                         const JobRecord& record, double duration_s,
                         const std::vector<StepTime>& steps,
                         const std::string& summary_text) {
  json notes = json::array();
  json config = json::object();
  for (const auto& key : {"package_type", "python", "accelerator"})
    config[key] =
        job.config.count(key) ? json(job.config.at(key)) : json(nullptr);
  for (const auto& [k, v] : job.config) config[k] = v;
  json step_list = json::array();
  for (const auto& s : steps)
    step_list.push_back({{"name", s.name}, {"duration_s", s.duration_s}});
  json summary = nullptr, check = nullptr;
  if (!summary_text.empty()) {
    summary = json::parse(summary_text, nullptr, false);
    if (summary.is_discarded() || !summary.is_object()) {
      summary = nullptr;
      notes.push_back("the driver summary is not a JSON object: ignored");
    } else if (summary.contains("checks") && summary["checks"].is_array() &&
               !summary["checks"].empty()) {
      check = summary["checks"][0];
    }
  }
  json doc = {
      {"schema", "libpkg-job/1"},
      {"nightly", layout.date},
      {"job", job.name},
      {"config", config},
      {"host", host_name()},
      {"start", record.start},
      {"end", record.end},
      {"duration_s", duration_s},
      {"state", state_name(record.state)},
      {"exit_code", record.exit_code ? json(*record.exit_code) : json(nullptr)},
      {"signal", record.signal},
      {"failed_step",
       record.failed_step.empty() ? json(nullptr) : json(record.failed_step)},
      {"reason", record.reason.empty() ? json(nullptr) : json(record.reason)},
      {"steps", step_list},
      {"log", record.log},
      {"attempt", record.attempt},
      {"artifact_dir", job.artifact_dir},
      {"artifacts",
       artifacts(layout.dir / job.artifact_dir, layout.dir, notes)},
      {"driver_summary", summary},
      {"check", check},
      {"notes", notes}};
  return doc.dump(2) + "\n";
}

}  // namespace libpkg::nightly
