// Name rules shared by analysis and planning (private to bundle/): glob
// matching (base/glob.hpp) for --exclude and keep-name patterns, libpython.
#pragma once

#include <string_view>

#include "base/glob.hpp"
#include "libpkg/deps/policy.hpp"

namespace libpkg::bundle {

using libpkg::glob_match;
using libpkg::matches_any;

// libpython is never bundled, and its NEEDED entries are dropped (as
// auditwheel does).
using deps::is_libpython;

}  // namespace libpkg::bundle
