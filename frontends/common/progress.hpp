// SPDX-License-Identifier: BSD-3-Clause
// A one-line progress indicator that only draws on a terminal.
//
// Long operations (repairing a GB wheel) report `advance(bytes)`; on a TTY the
// line is redrawn at most ~10 times a second with `\r`, and cleared at the
// end. When the stream is not a terminal (CI logs, pipes) nothing is printed,
// so logs stay clean. Thread-safe: workers may advance concurrently.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <mutex>
#include <string>

namespace pkgtool {

class Progress {
 public:
  // `stream` is drawn to only if it is a terminal (or `force` is set).
  Progress(std::string label, std::uint64_t total, std::FILE* stream = stderr,
           bool force = false);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  void advance(std::uint64_t amount);
  void finish();
  bool active() const { return active_; }
  std::uint64_t done() const { return done_.load(); }
  // The line as it would be drawn now (for tests).
  std::string render() const;

 private:
  void draw(bool final);

  std::string label_;
  std::uint64_t total_;
  std::FILE* stream_;
  bool active_;
  std::atomic<std::uint64_t> done_{0};
  std::mutex mutex_;
  std::chrono::steady_clock::time_point last_draw_{};
  std::chrono::steady_clock::time_point start_;
  bool finished_ = false;
};

}  // namespace pkgtool
