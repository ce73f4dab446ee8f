// SPDX-License-Identifier: BSD-3-Clause
#include "guarded.hpp"

#include <cstdio>
#include <new>
#include <string_view>

namespace pkgtool {
namespace {

// Removes " [P]" from the end of `text` when present.
void drop_path_suffix(std::string& text, const std::filesystem::path& p) {
  if (p.empty()) return;
  const std::string suffix = " [" + p.string() + "]";
  if (text.ends_with(suffix)) text.resize(text.size() - suffix.size());
}

void print(const std::string& line) {
  std::fprintf(stderr, "error: %s\n", line.c_str());
}

}  // namespace

std::string describe_error(const libpkg::Error& e) {
  // The message as thrown: parse errors are one line (usage_error), and a
  // refusal that lists what blocks it (repair's policy blockers, missing
  // libraries) is the answer, so its list is kept.
  return e.what();
}

std::string describe_filesystem_error(
    const std::filesystem::filesystem_error& e) {
  // libstdc++ renders "filesystem error: WHAT: REASON [PATH1] [PATH2]";
  // keep WHAT: REASON and put the paths first, like every other error.
  std::string text = e.what();
  constexpr std::string_view kPrefix = "filesystem error: ";
  if (text.starts_with(kPrefix)) text.erase(0, kPrefix.size());
  drop_path_suffix(text, e.path2());
  drop_path_suffix(text, e.path1());
  if (e.path1().empty()) return text;
  std::string where = e.path1().string();
  if (!e.path2().empty()) where += " -> " + e.path2().string();
  return where + ": " + text;
}

int guarded(const std::function<int()>& body) {
  try {
    return body();
  } catch (const libpkg::Error& e) {
    print(describe_error(e));
    return e.exit_code();
  } catch (const std::filesystem::filesystem_error& e) {
    print(describe_filesystem_error(e));
    return 2;
  } catch (const std::bad_alloc&) {
    print("out of memory");
    return 2;
  } catch (const std::exception& e) {
    print(e.what());
    return 2;
  }
}

}  // namespace pkgtool
