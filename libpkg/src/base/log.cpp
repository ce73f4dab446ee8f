// SPDX-License-Identifier: BSD-3-Clause
#include "libpkg/base/log.hpp"

#include <cstdio>
#include <mutex>

namespace libpkg {

const char* log_level_name(LogLevel level) {
  switch (level) {
    case LogLevel::error:
      return "error";
    case LogLevel::warning:
      return "warning";
    case LogLevel::info:
      return "info";
    case LogLevel::debug:
      return "debug";
  }
  return "?";
}

Logger::Logger(LogLevel level, Sink sink)
    : level_(level), sink_(std::move(sink)) {}

void Logger::log(LogLevel level, std::string_view message) const {
  if (enabled(level) && sink_) sink_(level, message);
}

Logger::Sink Logger::stderr_sink() {
  return [](LogLevel level, std::string_view message) {
    // One fprintf per line keeps lines from different threads whole.
    std::fprintf(stderr, "libpkg: %s: %.*s\n", log_level_name(level),
                 static_cast<int>(message.size()), message.data());
  };
}

Logger Logger::silent() { return Logger(LogLevel::error, nullptr); }

}  // namespace libpkg
