// SPDX-License-Identifier: BSD-3-Clause
#include "archive/file_state.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <ctime>

namespace libpkg::archive {
namespace {

// Files changed this recently are not memoized (see the header).
constexpr i64 kSettleNs = 2'000'000'000;

i64 ns(const struct timespec& t) {
  return static_cast<i64>(t.tv_sec) * 1'000'000'000 + t.tv_nsec;
}

}  // namespace

FileState file_state(const struct stat& st) {
  FileState s;
  s.dev = static_cast<u64>(st.st_dev);
  s.ino = static_cast<u64>(st.st_ino);
  s.size = static_cast<u64>(st.st_size);
  s.mtime_ns = ns(st.st_mtim);
  s.ctime_ns = ns(st.st_ctim);
  struct timespec now {};
  s.settled = ::clock_gettime(CLOCK_REALTIME, &now) == 0 &&
              ns(now) - std::max(s.mtime_ns, s.ctime_ns) >= kSettleNs;
  return s;
}

bool same_file_state(const FileState& a, const FileState& b) {
  return a.dev == b.dev && a.ino == b.ino && a.size == b.size &&
         a.mtime_ns == b.mtime_ns && a.ctime_ns == b.ctime_ns;
}

std::string file_identity(std::string_view kind, const FileState& state,
                          const std::filesystem::path& path) {
  return fmt::format(
      "{}; uid {}; dev {}; ino {}; size {}; mtime {}; ctime {}; path {}", kind,
      ::geteuid(), state.dev, state.ino, state.size, state.mtime_ns,
      state.ctime_ns, path.string());
}

}  // namespace libpkg::archive
