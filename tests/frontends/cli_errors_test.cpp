// SPDX-License-Identifier: BSD-3-Clause
// The one place command-line and escaping errors become one `error:` line
// (frontends/common/cli_parse.hpp, guarded.hpp): CLI11's errors rephrased
// and kept on one line, hand-written usage errors on one line too, and the
// std exceptions the library may let through shown with their path.
#include <gtest/gtest.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>
#include <new>
#include <string>
#include <system_error>
#include <vector>

#include "cli_parse.hpp"
#include "guarded.hpp"
#include "libpkg/base/error.hpp"

namespace {

namespace fs = std::filesystem;

// What guarded() prints on stderr and returns for `body`.
struct Outcome {
  int code;
  std::string err;
};

Outcome run_guarded(const std::function<int()>& body) {
  std::fflush(stderr);
  testing::internal::CaptureStderr();
  int code = pkgtool::guarded(body);
  return {code, testing::internal::GetCapturedStderr()};
}

// Parses `args` into an app like the commands', returns the error line.
std::string parse_error(std::vector<std::string> args) {
  CLI::App app{"test", "cmd"};
  std::string input, out;
  int jobs = 0, level = 0;
  bool a = false, b = false;
  app.add_option("input", input)->required();
  app.add_option("-o,--out", out);
  app.add_option("-j,--jobs", jobs);
  app.add_option("--level", level)->check(CLI::Range(0, 9));
  auto* fa = app.add_flag("--a", a);
  app.add_flag("--b", b)->excludes(fa);
  Outcome o = run_guarded([&] {
    pkgtool::parse_cli(app, args, "pkgtool cmd", "usage: pkgtool cmd INPUT");
    return 0;
  });
  EXPECT_EQ(o.code, 2) << o.err;
  return o.err;
}

TEST(OneLine, Collapses) {
  EXPECT_EQ(pkgtool::one_line("  a\n  b\t c \n"), "a b c");
  EXPECT_EQ(pkgtool::one_line(""), "");
}

TEST(ParseCli, EveryMistakeIsOneLineWithTheHint) {
  const std::string hint = " (run 'pkgtool cmd --help')\n";
  EXPECT_EQ(parse_error({"x", "--bogus"}),
            "error: pkgtool cmd: unknown option '--bogus'" + hint);
  // CLI11 would say "input is required": the unknown option comes first.
  EXPECT_EQ(parse_error({"--bogus"}),
            "error: pkgtool cmd: unknown option '--bogus'" + hint);
  EXPECT_EQ(parse_error({"x", "y"}),
            "error: pkgtool cmd: unexpected argument 'y'" + hint);
  // An option among stray positionals is the one named.
  EXPECT_EQ(parse_error({"x", "y", "--bogus"}),
            "error: pkgtool cmd: unknown option '--bogus'" + hint);
  EXPECT_EQ(parse_error({"x", "-o"}),
            "error: pkgtool cmd: --out needs a value" + hint);
  EXPECT_EQ(parse_error({"x", "-j", "many"}),
            "error: pkgtool cmd: --jobs: 'many' is not a valid value" + hint);
  EXPECT_EQ(parse_error({}), "error: pkgtool cmd: input is required" + hint);
  for (const auto& line : {parse_error({"x", "--level", "12"}),
                           parse_error({"x", "--a", "--b"})}) {
    EXPECT_TRUE(line.starts_with("error: pkgtool cmd: ")) << line;
    EXPECT_TRUE(line.ends_with(hint)) << line;
    EXPECT_EQ(line.find('\n'), line.size() - 1) << line;
  }
}

TEST(ParseCli, HelpPrintsTheUsageAndStops) {
  CLI::App app{"test", "cmd"};
  testing::internal::CaptureStdout();
  bool go_on = pkgtool::parse_cli(app, {"--help"}, "pkgtool cmd",
                                  "usage: pkgtool cmd INPUT");
  std::string out = testing::internal::GetCapturedStdout();
  EXPECT_FALSE(go_on);
  EXPECT_NE(out.find("usage: pkgtool cmd INPUT\n"), std::string::npos) << out;
}

TEST(Guarded, UsageErrorsAreOneLine) {
  // usage_error, the way hand-written parsers refuse: a message spanning
  // lines still prints as one line with the hint.
  Outcome o = run_guarded([]() -> int {
    pkgtool::usage_error("pkgtool x", "bad flag\n  see below\n");
  });
  EXPECT_EQ(o.code, 2);
  EXPECT_EQ(o.err,
            "error: pkgtool x: bad flag see below (run 'pkgtool x --help')\n");
  // The message is printed as thrown, nothing cut from it: a usage refusal
  // that lists its reasons keeps them (repair --plat).
  o = run_guarded([]() -> int {
    throw libpkg::Error(libpkg::Errc::usage, "w.whl",
                        "cannot repair to P:\n  _C.so needs GLIBC_2.34");
  });
  EXPECT_EQ(o.code, 2);
  EXPECT_EQ(o.err,
            "error: w.whl: cannot repair to P:\n  _C.so needs GLIBC_2.34\n");
  // Other errors keep every line (repair lists each missing library).
  o = run_guarded([]() -> int {
    throw libpkg::Error(libpkg::Errc::not_found, "w.whl",
                        "dependencies not found:\n  a needs b");
  });
  EXPECT_EQ(o.err, "error: w.whl: dependencies not found:\n  a needs b\n");
}

TEST(Guarded, FilesystemErrorsNameThePath) {
  // A real one, from the library the tools use: a directory that cannot be
  // created because a regular file is in the way.
  const fs::path dir = fs::path(testing::TempDir()) /
                       ("cli_errors_test_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const fs::path file = dir / "file";
  std::FILE* f = std::fopen(file.c_str(), "w");
  ASSERT_NE(f, nullptr);
  std::fclose(f);
  Outcome o = run_guarded([&] {
    fs::create_directories(file / "sub");
    return 0;
  });
  EXPECT_EQ(o.code, 2);
  EXPECT_EQ(o.err.rfind("error: " + (file / "sub").string() + ": ", 0), 0u)
      << o.err;
  EXPECT_NE(o.err.find("Not a directory"), std::string::npos) << o.err;
  EXPECT_EQ(o.err.find("filesystem error"), std::string::npos) << o.err;
  EXPECT_EQ(o.err.find('['), std::string::npos) << o.err;
  // Two paths: both named, first.
  o = run_guarded([&]() -> int {
    throw fs::filesystem_error(
        "cannot copy", file, dir / "to",
        std::make_error_code(std::errc::permission_denied));
  });
  EXPECT_EQ(o.err, "error: " + file.string() + " -> " + (dir / "to").string() +
                       ": cannot copy: Permission denied\n");
  fs::remove_all(dir);
}

TEST(Guarded, OtherStdExceptions) {
  Outcome o = run_guarded([]() -> int { throw std::bad_alloc(); });
  EXPECT_EQ(o.code, 2);
  EXPECT_EQ(o.err, "error: out of memory\n");
  o = run_guarded([]() -> int {
    throw std::system_error(
        std::make_error_code(std::errc::resource_unavailable_try_again),
        "thread");
  });
  EXPECT_EQ(o.code, 2);
  EXPECT_EQ(o.err.rfind("error: thread: ", 0), 0u) << o.err;
  EXPECT_EQ(run_guarded([] { return 1; }).code, 1);
}

}  // namespace
