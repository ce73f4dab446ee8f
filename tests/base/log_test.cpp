// SPDX-License-Identifier: BSD-3-Clause
// Logger: level filtering and sinks.
#include "libpkg/base/log.hpp"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace libpkg {
namespace {

using Lines = std::vector<std::pair<LogLevel, std::string>>;

Logger::Sink collect(Lines& lines) {
  return [&lines](LogLevel level, std::string_view m) {
    lines.emplace_back(level, std::string(m));
  };
}

TEST(Log, LevelNames) {
  EXPECT_STREQ(log_level_name(LogLevel::error), "error");
  EXPECT_STREQ(log_level_name(LogLevel::warning), "warning");
  EXPECT_STREQ(log_level_name(LogLevel::info), "info");
  EXPECT_STREQ(log_level_name(LogLevel::debug), "debug");
}

TEST(Log, FiltersByLevel) {
  Lines lines;
  Logger log(LogLevel::info, collect(lines));
  EXPECT_EQ(log.level(), LogLevel::info);
  EXPECT_TRUE(log.enabled(LogLevel::error));
  EXPECT_TRUE(log.enabled(LogLevel::info));
  EXPECT_FALSE(log.enabled(LogLevel::debug));
  log.error("e");
  log.warning("w");
  log.info("i");
  log.debug("d");
  log.log(LogLevel::warning, "w2");
  EXPECT_EQ(lines, (Lines{{LogLevel::error, "e"},
                          {LogLevel::warning, "w"},
                          {LogLevel::info, "i"},
                          {LogLevel::warning, "w2"}}));
}

TEST(Log, ErrorLevelOnlyErrors) {
  Lines lines;
  Logger log(LogLevel::error, collect(lines));
  log.warning("w");
  log.error("e");
  EXPECT_EQ(lines, (Lines{{LogLevel::error, "e"}}));
}

TEST(Log, DebugLevelEverything) {
  Lines lines;
  Logger log(LogLevel::debug, collect(lines));
  log.debug("d");
  EXPECT_EQ(lines.size(), 1u);
}

TEST(Log, DefaultPrintsWarningsToStderr) {
  Logger log;
  EXPECT_EQ(log.level(), LogLevel::warning);
  ::testing::internal::CaptureStderr();
  log.warning("disk is full");
  log.info("hidden");
  log.error(std::string_view("bad\0byte", 8).substr(0, 3));
  std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(err, "libpkg: warning: disk is full\nlibpkg: error: bad\n");
}

TEST(Log, SilentDropsEverything) {
  Logger log = Logger::silent();
  ::testing::internal::CaptureStderr();
  log.error("nothing");
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
}

TEST(Log, NullSinkIsSafe) {
  Logger log(LogLevel::debug, nullptr);
  log.error("x");
}

}  // namespace
}  // namespace libpkg
