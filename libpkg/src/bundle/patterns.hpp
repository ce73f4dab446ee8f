// Name rules shared by analysis and planning (private to bundle/): glob
// matching (base/glob.hpp) for --exclude and keep-name patterns, libpython.
#pragma once

#include <string_view>

#include "base/glob.hpp"

namespace libpkg::bundle {

using libpkg::glob_match;
using libpkg::matches_any;

// libpython is provided by the interpreter that loads the extension: never
// bundled, and its NEEDED entries are dropped (as auditwheel does).
inline bool is_libpython(std::string_view soname) {
  return soname.starts_with("libpython");
}

}  // namespace libpkg::bundle
