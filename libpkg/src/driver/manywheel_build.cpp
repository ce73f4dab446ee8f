#include "driver/manywheel_build.hpp"

#include <fmt/format.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>

#include "libpkg/base/error.hpp"

extern char** environ;

namespace fs = std::filesystem;

namespace libpkg::driver::detail {
namespace {

// *.whl files directly in `dir` with their modification times.
std::map<fs::path, fs::file_time_type> wheels_in(const fs::path& dir) {
  std::map<fs::path, fs::file_time_type> out;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return out;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.path().extension() == ".whl" && e.is_regular_file(ec))
      out[e.path()] = e.last_write_time(ec);
  return out;
}

// sh -c COMMAND in `cwd`, stdout sent to our stderr; the exit status.
int run_shell(const std::string& command, const fs::path& cwd) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, STDERR_FILENO, STDOUT_FILENO);
  posix_spawn_file_actions_addchdir_np(&actions, cwd.c_str());
  std::string sh = "/bin/sh", c = "-c", cmd = command;
  char* argv[] = {sh.data(), c.data(), cmd.data(), nullptr};
  pid_t pid = 0;
  int rc = ::posix_spawn(&pid, sh.c_str(), &actions, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0)
    throw Error(
        Errc::io, sh,
        fmt::format("cannot run the build command: {}", std::strerror(rc)));
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) throw_errno(sh, "wait for");
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

}  // namespace

fs::path dist_dir(const ManywheelOptions& o) {
  if (o.dist_dir.empty()) return o.source_dir / "dist";
  return o.dist_dir.is_absolute() ? o.dist_dir : o.source_dir / o.dist_dir;
}

fs::path build_wheel(const ManywheelOptions& o) {
  std::error_code ec;
  if (!fs::is_directory(o.source_dir, ec))
    throw Error(Errc::not_found, o.source_dir.string(),
                "source directory not found");
  const fs::path dist = dist_dir(o);
  const auto before = wheels_in(dist);
  if (o.common.log)
    o.common.log(fmt::format("running '{}' in {}", o.build_command,
                             o.source_dir.string()));
  if (int status = run_shell(o.build_command, o.source_dir); status != 0)
    throw Error(Errc::io, o.source_dir.string(),
                fmt::format("the build command '{}' failed with status {}",
                            o.build_command, status));
  std::vector<fs::path> fresh;
  for (const auto& [path, mtime] : wheels_in(dist)) {
    auto it = before.find(path);
    if (it == before.end() || it->second != mtime) fresh.push_back(path);
  }
  if (fresh.empty())
    throw Error(Errc::not_found, dist.string(),
                fmt::format("the build command '{}' wrote no wheel here "
                            "(give the directory it writes to with "
                            "--dist-dir)",
                            o.build_command));
  if (fresh.size() > 1) {
    std::string names;
    for (const auto& p : fresh)
      names += (names.empty() ? "" : ", ") + p.filename().string();
    throw Error(Errc::usage, dist.string(),
                fmt::format("the build command wrote {} wheels ({}); pass "
                            "the one to repair with --wheel",
                            fresh.size(), names));
  }
  return fresh.front();
}

}  // namespace libpkg::driver::detail
