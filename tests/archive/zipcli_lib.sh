# SPDX-License-Identifier: BSD-3-Clause
# Shared harness for the zipcli_*.sh scripts (sourced, not run).
#
# Environment (set by ctest): PKGTOOL, LIBPKG_PYTHON, LIBPKG_SOURCE_DIR.
# TEST_KEEP=1 keeps the scratch directory.
# log/fail/pass/skip/case_begin/finish/make_scratch/require_tools come from
# the shared harness.
source "$(dirname "${BASH_SOURCE[0]}")/../lib/harness.sh"

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TOOL=("$LIBPKG_PYTHON" "$HERE/zipcli_tool.py")
make_scratch
umask 022

# expect_in FILE TEXT DESCRIPTION
expect_in() {
  if grep -qF -- "$2" "$1"; then
    pass
  else
    fail "$3: '$2' not in $(basename "$1"):"
    sed 's/^/  | /' "$1" >&2
  fi
}
