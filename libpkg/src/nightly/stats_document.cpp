// SPDX-License-Identifier: BSD-3-Clause
#include "libpkg/nightly/stats_document.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "libpkg/base/error.hpp"
#include "libpkg/base/sha256.hpp"

namespace libpkg::nightly {

namespace {

using json = nlohmann::json;

[[noreturn]] void bad(const std::string& source, const std::string& message) {
  throw Error(Errc::format, source, message);
}

// A string field, "" when absent or null; any other type is an error (a
// number where a name is expected means the producer is broken).
std::string text_field(const json& object, const char* key,
                       const std::string& source, const char* where) {
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) return "";
  if (!it->is_string())
    bad(source, fmt::format("{}{} is not a string", where, key));
  return it->get<std::string>();
}

std::optional<double> number_field(const json& object, const char* key,
                                   const std::string& source) {
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) return std::nullopt;
  if (!it->is_number()) bad(source, fmt::format("{} is not a number", key));
  return it->get<double>();
}

const json& object_field(const json& object, const char* key,
                         const std::string& source) {
  static const json empty = json::object();
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) return empty;
  if (!it->is_object()) bad(source, fmt::format("{} is not an object", key));
  return *it;
}

const json& array_field(const json& object, const char* key,
                        const std::string& source) {
  static const json empty = json::array();
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) return empty;
  if (!it->is_array()) bad(source, fmt::format("{} is not an array", key));
  return *it;
}

// Ids of the failed checks of one libpkg-check/1 report, or of an array of
// them (a driver checks every artifact it wrote).
void failed_checks(const json& reports, std::vector<std::string>& out) {
  if (reports.is_array()) {
    for (const json& r : reports) failed_checks(r, out);
    return;
  }
  if (!reports.is_object()) return;
  auto checks = reports.find("checks");
  if (checks == reports.end() || !checks->is_array()) return;
  for (const json& c : *checks) {
    if (!c.is_object()) continue;
    auto status = c.find("status");
    auto id = c.find("id");
    if (status != c.end() && *status == "fail" && id != c.end() &&
        id->is_string()) {
      std::string name = id->get<std::string>();
      if (std::find(out.begin(), out.end(), name) == out.end())
        out.push_back(std::move(name));
    }
  }
}

std::string failure_text(const std::string& failed_step,
                         const std::vector<std::string>& checks) {
  // "build", "check: abi, rpath" (the step that failed, and which checks).
  if (checks.empty()) return failed_step;
  return fmt::format("{}: {}", failed_step.empty() ? "check" : failed_step,
                     fmt::join(checks, ", "));
}

StatsArtifact artifact(const json& a, const std::string& source) {
  if (!a.is_object()) bad(source, "artifacts: an entry is not an object");
  StatsArtifact out;
  out.name = text_field(a, "name", source, "artifacts: ");
  if (out.name.empty())  // driver summaries give the path
    out.name =
        std::filesystem::path(text_field(a, "path", source, "artifacts: "))
            .filename()
            .string();
  auto size = a.find("size");
  if (size != a.end() && !size->is_null()) {
    if (!size->is_number_unsigned() && !size->is_number_integer())
      bad(source, "artifacts: size is not an integer");
    if (size->is_number_integer() && size->get<i64>() < 0)
      bad(source, "artifacts: size is negative");
    out.size = size->get<u64>();
  }
  std::string sha = text_field(a, "sha256", source, "artifacts: ");
  if (!sha.empty()) out.sha256 = std::move(sha);
  return out;
}

// The fields a libtorch or ABI build is told apart by, in the variant's
// order (jobs.hpp: the matrix jobs' config; the driver summaries' config).
constexpr const char* kVariantFields[] = {"libtorch_variant", "cxx_abi", "os",
                                          "arch"};

// The fields a configuration's grid row is keyed by besides the variant,
// and those that name one build rather than a configuration (a new version
// every night would give every night its own row). build_environment is
// derived from the other fields.
bool outside_variant(const std::string& key) {
  for (const char* k : {"package_type", "python", "accelerator",
                        "build_environment", "version", "build_number"})
    if (key == k) return true;
  return false;
}

void append_variant(std::string& out, const std::string& part) {
  if (!out.empty()) out += ' ';
  out += part;
}

// A value as the variant shows it: strings as they are, others as JSON.
std::string variant_value(const json& v) {
  return v.is_string() ? v.get<std::string>() : v.dump();
}

// A configuration's fields besides package_type, python and accelerator:
// the grid's variant (see kVariantFields), "" when it has none.
std::string config_variant(const json& config) {
  std::string out;
  if (!config.is_object()) return out;
  // The fields PyTorch's builds differ by, as bare values in a fixed
  // order ("shared-with-deps cxx11 linux x86_64"), then any other field of
  // the configuration as key=value, by key (a job file's own fields).
  for (const char* key : kVariantFields) {
    auto it = config.find(key);
    if (it == config.end() || it->is_null()) continue;
    std::string v = variant_value(*it);
    if (!v.empty()) append_variant(out, v);
  }
  for (const auto& [key, value] : config.items()) {
    if (outside_variant(key) || value.is_null() ||
        std::find(std::begin(kVariantFields), std::end(kVariantFields), key) !=
            std::end(kVariantFields))
      continue;
    std::string v = variant_value(value);
    if (!v.empty()) append_variant(out, key + "=" + v);
  }
  return out;
}

void job_row(const json& j, const std::string& source, StatsRow& row) {
  const std::string nightly = text_field(j, "nightly", source, "");
  auto date = iso_date(nightly);
  if (!date)
    bad(source, fmt::format("nightly '{}' is not a date YYYY_MM_DD", nightly));
  row.date = *date;
  row.job = text_field(j, "job", source, "");
  if (row.job.empty()) bad(source, "job is missing");
  row.key = fmt::format("job:{}/{}", nightly, row.job);
  const json& config = object_field(j, "config", source);
  row.package_type = text_field(config, "package_type", source, "config: ");
  row.python = text_field(config, "python", source, "config: ");
  row.accelerator = text_field(config, "accelerator", source, "config: ");
  row.variant = config_variant(config);
  row.status = text_field(j, "state", source, "");
  if (row.status.empty()) bad(source, "state is missing");
  std::string start = text_field(j, "start", source, "");
  if (!start.empty()) row.start = std::move(start);
  row.duration_s = number_field(j, "duration_s", source);
  std::string log = text_field(j, "log", source, "");
  if (!log.empty()) row.log = std::move(log);
  std::vector<std::string> checks;
  if (auto c = j.find("check"); c != j.end()) failed_checks(*c, checks);
  if (auto s = j.find("driver_summary"); s != j.end() && s->is_object())
    if (auto c = s->find("checks"); c != s->end()) failed_checks(*c, checks);
  row.failure = failure_text(text_field(j, "failed_step", source, ""), checks);
  for (const json& a : array_field(j, "artifacts", source))
    row.artifacts.push_back(artifact(a, source));
}

void driver_row(const json& j, const std::string& source,
                const std::string& date, StatsRow& row) {
  auto iso = iso_date(date);
  if (!iso)
    bad(source, fmt::format("a driver summary needs a date (got '{}')", date));
  row.date = *iso;
  // The content, not the bytes, identifies a summary: the same document
  // re-indented is the same run.
  const std::string canonical = j.dump();
  row.key =
      "driver:" +
      Sha256::hex(Sha256::of(std::span<const u8>(
          reinterpret_cast<const u8*>(canonical.data()), canonical.size())));
  const json& config = object_field(j, "config", source);
  row.package_type = text_field(config, "package_type", source, "config: ");
  row.python = text_field(config, "python", source, "config: ");
  row.accelerator = text_field(config, "accelerator", source, "config: ");
  row.variant = config_variant(config);
  // A CI job has no job name of ours: its configuration names it.
  row.job = text_field(config, "build_environment", source, "config: ");
  if (row.job.empty()) row.job = text_field(j, "driver", source, "");
  auto passed = j.find("passed");
  if (passed == j.end() || !passed->is_boolean())
    bad(source, "passed is missing or not a boolean");
  row.status = passed->get<bool>() ? "SUCCEEDED" : "FAILED";
  row.duration_s = number_field(j, "seconds", source);
  std::vector<std::string> checks;
  if (auto c = j.find("checks"); c != j.end()) failed_checks(*c, checks);
  row.failure = failure_text("", checks);
  for (const json& a : array_field(j, "artifacts", source))
    row.artifacts.push_back(artifact(a, source));
}

}  // namespace

std::optional<std::string> iso_date(std::string_view s) {
  if (s.size() != 10) return std::nullopt;
  std::string out(s);
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (i == 4 || i == 7) {
      if (out[i] != '_' && out[i] != '-') return std::nullopt;
      out[i] = '-';
    } else if (out[i] < '0' || out[i] > '9') {
      return std::nullopt;
    }
  }
  int month = std::stoi(out.substr(5, 2)), day = std::stoi(out.substr(8, 2));
  if (month < 1 || month > 12 || day < 1 || day > 31) return std::nullopt;
  return out;
}

StatsRow stats_row(std::string text, const std::string& source,
                   const std::string& date) {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::parse_error& e) {
    bad(source, fmt::format("malformed JSON at byte {}", e.byte));
  }
  if (!j.is_object()) bad(source, "not a JSON object");
  const std::string schema = text_field(j, "schema", source, "");
  StatsRow row;
  row.schema = schema;
  if (schema == "libpkg-job/1")
    job_row(j, source, row);
  else if (schema == "libpkg-driver/1")
    driver_row(j, source, date, row);
  else
    bad(source,
        fmt::format("schema '{}' is neither libpkg-job/1 nor libpkg-driver/1",
                    schema));
  row.doc = std::move(text);
  row.source = source;
  return row;
}

}  // namespace libpkg::nightly
