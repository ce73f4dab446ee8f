// SPDX-License-Identifier: BSD-3-Clause
// Levelled diagnostics without global state.
//
// A `Logger` is passed in options structs; the library never writes to
// stderr on its own. The default sink writes "libpkg: <level>: message" lines
// to stderr; frontends pick the level (-q / -v), Python installs a callback.
#pragma once

#include <functional>
#include <string>
#include <string_view>

namespace libpkg {

enum class LogLevel { error = 0, warning = 1, info = 2, debug = 3 };

const char* log_level_name(LogLevel level);

class Logger {
 public:
  using Sink = std::function<void(LogLevel, std::string_view)>;

  // A logger that prints warnings and errors to stderr.
  Logger() : Logger(LogLevel::warning) {}
  explicit Logger(LogLevel level, Sink sink = stderr_sink());

  LogLevel level() const { return level_; }
  bool enabled(LogLevel level) const { return level <= level_; }
  void log(LogLevel level, std::string_view message) const;
  void error(std::string_view m) const { log(LogLevel::error, m); }
  void warning(std::string_view m) const { log(LogLevel::warning, m); }
  void info(std::string_view m) const { log(LogLevel::info, m); }
  void debug(std::string_view m) const { log(LogLevel::debug, m); }

  static Sink stderr_sink();
  // A logger that drops everything.
  static Logger silent();

 private:
  LogLevel level_;
  Sink sink_;
};

}  // namespace libpkg
