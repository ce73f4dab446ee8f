// SPDX-License-Identifier: BSD-3-Clause
#include "progress.hpp"

#include <fmt/format.h>
#include <unistd.h>

namespace pkgtool {

namespace {
std::string human_bytes(std::uint64_t n) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(n);
  int u = 0;
  while (v >= 1024 && u < 4) {
    v /= 1024;
    ++u;
  }
  return u == 0 ? fmt::format("{} B", n)
                : fmt::format("{:.1f} {}", v, units[u]);
}
}  // namespace

Progress::Progress(std::string label, std::uint64_t total, std::FILE* stream,
                   bool force)
    : label_(std::move(label)),
      total_(total),
      stream_(stream),
      active_(stream != nullptr && (force || ::isatty(::fileno(stream)))),
      start_(std::chrono::steady_clock::now()) {}

Progress::~Progress() { finish(); }

std::string Progress::render() const {
  std::uint64_t done = done_.load();
  if (total_ == 0) return fmt::format("{}: {}", label_, human_bytes(done));
  double pct = 100.0 * static_cast<double>(done) / static_cast<double>(total_);
  return fmt::format("{}: {:5.1f}% ({} / {})", label_, pct > 100 ? 100.0 : pct,
                     human_bytes(done), human_bytes(total_));
}

void Progress::advance(std::uint64_t amount) {
  done_ += amount;
  if (!active_) return;
  auto now = std::chrono::steady_clock::now();
  std::unique_lock lock(mutex_, std::try_to_lock);
  if (!lock.owns_lock()) return;  // another thread is drawing
  if (now - last_draw_ < std::chrono::milliseconds(100)) return;
  last_draw_ = now;
  draw(false);
}

void Progress::draw(bool final) {
  std::string line = render();
  std::fprintf(stream_, "\r\033[K%s%s", line.c_str(), final ? "\n" : "");
  std::fflush(stream_);
}

void Progress::finish() {
  std::lock_guard lock(mutex_);
  if (finished_) return;
  finished_ = true;
  if (active_) {
    std::fprintf(stream_, "\r\033[K");
    std::fflush(stream_);
  }
}

}  // namespace pkgtool
