// SPDX-License-Identifier: BSD-3-Clause
// The check report as text (one line per check, problems indented under a
// failure) and as JSON (schema libpkg-check/1, docs/check.md).
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "libpkg/check/check.hpp"

namespace libpkg::check {

std::string Report::to_text(bool verbose) const {
  std::string out = fmt::format("check_binary: {} ({})\n", artifact.string(),
                                artifact_kind_name(kind));
  std::size_t width = 0;
  for (const auto& c : checks) width = std::max(width, c.id.size());
  for (const auto& c : checks) {
    const char* label = c.status == Status::pass   ? "PASS"
                        : c.status == Status::fail ? "FAIL"
                                                   : "SKIP";
    out += fmt::format("{}  {:<{}}  {}\n", label, c.id, width, c.summary);
    for (const auto& p : c.problems)
      out += p.file.empty()
                 ? fmt::format("        {}\n", p.message)
                 : fmt::format("        {}: {}\n", p.file, p.message);
    if (verbose)
      for (const auto& n : c.notes) out += fmt::format("        note: {}\n", n);
  }
  out += fmt::format("result: {} ({} passed, {} failed, {} skipped)\n",
                     passed() ? "PASS" : "FAIL", count(Status::pass),
                     count(Status::fail), count(Status::skip));
  return out;
}

std::string Report::to_json(int indent) const {
  nlohmann::ordered_json doc;
  doc["schema"] = "libpkg-check/1";
  doc["artifact"] = artifact.string();
  doc["kind"] = artifact_kind_name(kind);
  doc["passed"] = passed();
  doc["counts"] = {{"pass", count(Status::pass)},
                   {"fail", count(Status::fail)},
                   {"skip", count(Status::skip)}};
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const auto& c : checks) {
    nlohmann::ordered_json item;
    item["id"] = c.id;
    item["status"] = status_name(c.status);
    item["summary"] = c.summary;
    nlohmann::ordered_json problems = nlohmann::ordered_json::array();
    for (const auto& p : c.problems)
      problems.push_back({{"file", p.file}, {"message", p.message}});
    item["problems"] = std::move(problems);
    item["notes"] = c.notes;
    list.push_back(std::move(item));
  }
  doc["checks"] = std::move(list);
  return doc.dump(indent, ' ', false,
                  nlohmann::ordered_json::error_handler_t::replace);
}

}  // namespace libpkg::check
