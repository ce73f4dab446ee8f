// SPDX-License-Identifier: BSD-3-Clause
// Private to the check module: what the runtime checks (import, link, gpu)
// share — a scratch directory per step, helper processes run with a time
// limit and the search configuration's LD_LIBRARY_PATH instead of the
// caller's (a library found only through the caller's environment would
// hide a dependency the package fails to carry), and output trimmed to
// report lines.
#pragma once

#include <fmt/format.h>

#include <sstream>
#include <string>
#include <vector>

#include "check/package.hpp"
#include "libpkg/base/scratch_dir.hpp"
#include "libpkg/base/subprocess.hpp"

namespace libpkg::check::detail {

inline void log_step(const CheckOptions& options, const std::string& line) {
  if (options.log) options.log(line);
}

inline ScratchDir make_scratch(const CheckOptions& options,
                               const std::string& name) {
  return options.scratch_parent.empty()
             ? ScratchDir::in_temp("libpkg-" + name + "-")
             : ScratchDir(options.scratch_parent, ".libpkg-" + name + "-");
}

inline RunOptions run_options(const CheckOptions& options, unsigned timeout,
                              const std::filesystem::path& cwd = {}) {
  RunOptions ro;
  ro.cwd = cwd;
  ro.timeout_seconds = timeout;
  ro.env_unset = {"LD_LIBRARY_PATH"};
  if (!options.search.ld_library_path.empty())
    ro.env_set.push_back(fmt::format(
        "LD_LIBRARY_PATH={}", fmt::join(options.search.ld_library_path, ":")));
  return ro;
}

inline std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    while (!line.empty() && (line.back() == '\r' || line.back() == ' '))
      line.pop_back();
    if (!line.empty()) out.push_back(line);
  }
  return out;
}

inline std::string last_line(const std::string& text) {
  auto lines = lines_of(text);
  return lines.empty() ? std::string() : lines.back();
}

// The last `n` non-empty lines, joined with " | " (one report line).
inline std::string tail(const std::string& text, std::size_t n) {
  auto lines = lines_of(text);
  if (lines.size() > n) lines.erase(lines.begin(), lines.end() - n);
  return fmt::format("{}", fmt::join(lines, " | "));
}

inline void set_result(CheckResult& r, Status status, std::string summary) {
  r.status = status;
  r.summary = std::move(summary);
}

// The lines of compiler output worth quoting: errors and undefined
// references first, else the tail.
inline std::string compiler_errors(const std::string& output, std::size_t n) {
  std::vector<std::string> picked;
  for (const auto& line : lines_of(output))
    if (line.find("error") != std::string::npos ||
        line.find("undefined reference") != std::string::npos)
      if (picked.size() < n) picked.push_back(line);
  return picked.empty() ? tail(output, n)
                        : fmt::format("{}", fmt::join(picked, " | "));
}

}  // namespace libpkg::check::detail
