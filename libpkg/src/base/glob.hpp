// SPDX-License-Identifier: BSD-3-Clause
// Shell-style name patterns (private to the library): --exclude, keep-name
// and allow-list globs.
#pragma once

#include <fnmatch.h>

#include <string>
#include <string_view>
#include <vector>

namespace libpkg {

// fnmatch(3) without FNM_PATHNAME: "*" also matches '/', so "/opt/*" covers
// a whole tree, as auditwheel's --exclude does.
inline bool glob_match(const std::string& pattern, std::string_view text) {
  return ::fnmatch(pattern.c_str(), std::string(text).c_str(), 0) == 0;
}

inline bool matches_any(const std::vector<std::string>& patterns,
                        std::string_view text) {
  for (const auto& p : patterns)
    if (glob_match(p, text)) return true;
  return false;
}

}  // namespace libpkg
