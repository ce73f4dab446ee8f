// SPDX-License-Identifier: BSD-3-Clause
#include "libpkg/nightly/control.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <ctime>
#include <fstream>
#include <system_error>

#include "clock.hpp"
#include "libpkg/base/error.hpp"
#include "libpkg/nightly/runner.hpp"

namespace libpkg::nightly {

namespace fs = std::filesystem;

namespace {

JobRecord known_job(const Layout& layout, const std::string& job) {
  for (const auto& r : read_states(layout))
    if (r.job == job) return r;
  throw Error(Errc::not_found, layout.dir.string(),
              "no job named '" + job + "'");
}

// Days since 1970-01-01 of a YYYY_MM_DD name.
long day_number(const std::string& date) {
  std::tm tm{};
  tm.tm_year = std::stoi(date.substr(0, 4)) - 1900;
  tm.tm_mon = std::stoi(date.substr(5, 2)) - 1;
  tm.tm_mday = std::stoi(date.substr(8, 2));
  return static_cast<long>(timegm(&tm) / 86400);
}

}  // namespace

std::string cancel_job(const Layout& layout, const std::string& job) {
  JobRecord r = known_job(layout, job);
  if (is_finished(r.state))
    throw Error(Errc::usage, job,
                std::string("already finished (") + state_name(r.state) + ")");
  if (LockHolder runner = RunnerLock::holder(layout)) {
    write_text_atomically(layout.cancel_request(job), "cancel\n");
    return job + ": cancel requested from the runner (" + runner.describe() +
           ")";
  }
  // No runner: whatever is left of the job is stopped and recorded here.
  if (r.state == JobState::running) kill_recorded_job_group(r);
  r.state = JobState::cancelled;
  r.end = iso_utc(std::chrono::system_clock::now());
  if (r.failed_step.empty())
    r.failed_step = r.start.empty() ? "pending" : "run";
  write_state(layout, r);
  return job + ": recorded CANCELLED (no runner holds this nightly)";
}

fs::path find_log(const Layout& layout, const std::string& job) {
  known_job(layout, job);
  for (const auto& p : {layout.running_log(job), layout.succeeded_log(job),
                        layout.failed_log(job)}) {
    std::error_code ec;
    if (fs::exists(p, ec)) return p;
  }
  throw Error(Errc::not_found, job, "has no log yet (it has not started)");
}

namespace {

constexpr std::size_t kTailBlock = 64 * 1024;

// pread that retries on EINTR and reads the whole range unless the file
// ends first; returns the bytes read.
std::size_t read_at(int fd, char* buf, std::size_t len, std::uint64_t offset,
                    const std::string& origin) {
  std::size_t done = 0;
  while (done < len) {
    ssize_t n =
        ::pread(fd, buf + done, len - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw_errno(origin, "read");
    if (n == 0) break;
    done += static_cast<std::size_t>(n);
  }
  return done;
}

}  // namespace

std::uint64_t tail_start(int fd, std::uint64_t size, std::size_t lines,
                         const std::string& origin, std::uint64_t* bytes_read) {
  if (bytes_read) *bytes_read = 0;
  if (lines == 0 || size == 0) return 0;
  std::vector<char> block(kTailBlock);
  // The newline ending the last line does not start a line: the newlines
  // that count are those before `end`.
  std::uint64_t end = size;
  std::size_t seen = 0;
  bool first = true;
  while (end > 0) {
    std::uint64_t begin = end > kTailBlock ? end - kTailBlock : 0;
    std::size_t len = static_cast<std::size_t>(end - begin);
    std::size_t got = read_at(fd, block.data(), len, begin, origin);
    if (bytes_read) *bytes_read += got;
    if (got < len)  // the file shrank under us: what remains is all there is
      len = got;
    std::size_t i = len;
    if (first && i > 0 && end == size && block[i - 1] == '\n') --i;
    first = false;
    while (i > 0) {
      if (block[i - 1] == '\n' && ++seen == lines) return begin + i;
      --i;
    }
    end = begin;
  }
  return 0;
}

std::uint64_t copy_to_end(int fd, std::uint64_t offset, std::FILE* out,
                          const std::string& origin) {
  std::vector<char> block(kTailBlock);
  for (;;) {
    std::size_t got = read_at(fd, block.data(), block.size(), offset, origin);
    if (got == 0) break;
    if (std::fwrite(block.data(), 1, got, out) != got)
      throw_errno("<stdout>", "write");
    offset += got;
  }
  if (std::fflush(out) != 0) throw_errno("<stdout>", "write");
  return offset;
}

std::string tail_lines(const fs::path& file, std::size_t lines) {
  int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw_errno(file.string(), "open");
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) throw_errno(file.string(), "stat");
  auto size = static_cast<std::uint64_t>(st.st_size);
  std::uint64_t start = tail_start(fd, size, lines, file.string());
  std::string out(static_cast<std::size_t>(size - start), '\0');
  out.resize(read_at(fd, out.data(), out.size(), start, file.string()));
  return out;
}

std::vector<NightlyInfo> list_nightlies(const fs::path& root) {
  std::vector<NightlyInfo> out;
  std::error_code ec;
  if (!fs::is_directory(root, ec))
    throw Error(Errc::not_found, root.string(), "no such nightly root");
  for (const auto& e : fs::directory_iterator(root)) {
    std::string name = e.path().filename().string();
    if (!e.is_directory() || !is_nightly_name(name)) continue;
    Layout layout(root, name);
    NightlyInfo info;
    info.date = name;
    info.runner = RunnerLock::holder(layout);
    for (const auto& r : read_states(layout)) {
      ++info.jobs;
      switch (r.state) {
        case JobState::succeeded:
          ++info.succeeded;
          break;
        case JobState::failed:
          ++info.failed;
          break;
        case JobState::cancelled:
          ++info.cancelled;
          break;
        default:
          ++info.unfinished;
      }
    }
    out.push_back(info);
  }
  std::sort(out.begin(), out.end(),
            [](const NightlyInfo& a, const NightlyInfo& b) {
              return a.date < b.date;
            });
  return out;
}

std::vector<fs::path> prune_nightlies(const fs::path& root, unsigned keep_days,
                                      const std::string& today) {
  std::vector<fs::path> removed;
  long today_n = day_number(normalize_date(today));
  std::error_code ec;
  if (!fs::is_directory(root, ec)) return removed;
  std::vector<fs::path> candidates;
  for (const auto& e : fs::directory_iterator(root)) {
    std::string name = e.path().filename().string();
    if (!e.is_directory() || e.is_symlink() || !is_nightly_name(name)) continue;
    if (name == normalize_date(today)) continue;
    if (today_n - day_number(name) <= static_cast<long>(keep_days)) continue;
    candidates.push_back(e.path());
  }
  std::sort(candidates.begin(), candidates.end());
  for (const auto& dir : candidates) {
    Layout layout(root, dir.filename().string());
    if (RunnerLock::holder(layout)) continue;
    // Renamed first, then removed: a folder half deleted by a crash is never
    // mistaken for a nightly.
    fs::path doomed = root / ("." + dir.filename().string() + ".deleting");
    fs::rename(dir, doomed, ec);
    if (ec)
      throw Error(Errc::io, dir.string(), "cannot remove: " + ec.message());
    fs::remove_all(doomed, ec);
    if (ec)
      throw Error(Errc::io, doomed.string(), "cannot remove: " + ec.message());
    removed.push_back(dir);
  }
  return removed;
}

}  // namespace libpkg::nightly
