// SPDX-License-Identifier: BSD-3-Clause
#include "libpkg/nightly/layout.hpp"

#include <cstdio>
#include <ctime>
#include <system_error>

#include "libpkg/base/error.hpp"

namespace libpkg::nightly {

namespace fs = std::filesystem;

std::string today_utc() {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[16];
  std::strftime(buf, sizeof buf, "%Y_%m_%d", &tm);
  return buf;
}

namespace {

bool all_digits(const std::string& s) {
  if (s.empty()) return false;
  for (char c : s)
    if (c < '0' || c > '9') return false;
  return true;
}

bool real_day(int y, int m, int d) {
  static const int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (y < 1970 || m < 1 || m > 12 || d < 1) return false;
  bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  return d <= kDays[m - 1] + (m == 2 && leap ? 1 : 0);
}

}  // namespace

std::string normalize_date(const std::string& text) {
  std::string y, m, d;
  if (text.size() == 8 && all_digits(text)) {
    y = text.substr(0, 4), m = text.substr(4, 2), d = text.substr(6, 2);
  } else if (text.size() == 10 && (text[4] == '_' || text[4] == '-') &&
             text[7] == text[4]) {
    y = text.substr(0, 4), m = text.substr(5, 2), d = text.substr(8, 2);
  }
  if (!all_digits(y) || !all_digits(m) || !all_digits(d) ||
      !real_day(std::stoi(y), std::stoi(m), std::stoi(d)))
    throw Error(Errc::usage, text,
                "not a date (expected YYYY_MM_DD, YYYY-MM-DD or YYYYMMDD)");
  return y + "_" + m + "_" + d;
}

bool is_nightly_name(const std::string& name) {
  if (name.size() != 10 || name[4] != '_' || name[7] != '_') return false;
  try {
    return normalize_date(name) == name;
  } catch (const Error&) {
    return false;
  }
}

Layout::Layout(const fs::path& root, const std::string& d)
    // Absolute: jobs run in the nightly directory and get its paths in their
    // environment, so a relative root must not be resolved twice.
    : dir(fs::absolute(root) / normalize_date(d)), date(normalize_date(d)) {}

fs::path Layout::running_log(const std::string& job) const {
  return dir / "logs" / "running" / (job + ".log");
}
fs::path Layout::succeeded_log(const std::string& job) const {
  return dir / "logs" / "succeeded" / (job + ".log");
}
fs::path Layout::failed_log(const std::string& job) const {
  return dir / "logs" / "failed" / (job + ".log");
}
fs::path Layout::state_file(const std::string& job) const {
  return dir / "state" / (job + ".json");
}
fs::path Layout::job_document(const std::string& job) const {
  return dir / "jobs" / (job + ".json");
}
fs::path Layout::summary_file(const std::string& job) const {
  return dir / "summaries" / (job + ".json");
}
fs::path Layout::cancel_request(const std::string& job) const {
  return dir / "cancel" / job;
}

void Layout::create() const {
  for (const char* sub : {"logs/running", "logs/succeeded", "logs/failed",
                          "state", "jobs", "summaries", "cancel"}) {
    fs::path p = dir / sub;
    std::error_code ec;
    fs::create_directories(p, ec);
    if (ec) {
      // Name the first folder on the way that could not be made.
      fs::path missing = p;
      while (missing.has_parent_path() && !fs::exists(missing.parent_path()))
        missing = missing.parent_path();
      throw Error(Errc::io, missing.string(),
                  "cannot create the nightly folder: " + ec.message())
          .with_errno(ec.value());
    }
  }
}

}  // namespace libpkg::nightly
