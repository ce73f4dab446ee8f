// Name rules shared by analysis and planning (private to bundle/): glob
// matching for --exclude and keep-name patterns, libpython.
#pragma once

#include <fnmatch.h>

#include <string>
#include <string_view>
#include <vector>

namespace libpkg::bundle {

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

// libpython is provided by the interpreter that loads the extension: never
// bundled, and its NEEDED entries are dropped (as auditwheel does).
inline bool is_libpython(std::string_view soname) {
  return soname.starts_with("libpython");
}

}  // namespace libpkg::bundle
