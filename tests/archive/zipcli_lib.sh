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

# check DESCRIPTION COMMAND...: the command must succeed.
check() {
  local what=$1
  shift
  if "$@"; then CHECKS=$((CHECKS + 1)); else fail "$what"; fi
}
# expect_status N DESCRIPTION COMMAND...: the command must exit with N;
# its stderr is kept in $SCRATCH/last.err.
expect_status() {
  local want=$1 what=$2 rc=0
  shift 2
  "$@" >"$SCRATCH/last.out" 2>"$SCRATCH/last.err" || rc=$?
  if ((rc == want)); then
    CHECKS=$((CHECKS + 1))
  else
    fail "$what: exit $rc, expected $want"
    sed 's/^/  | /' "$SCRATCH/last.err" "$SCRATCH/last.out" >&2
  fi
}
# expect_in FILE TEXT DESCRIPTION
expect_in() {
  if grep -qF -- "$2" "$1"; then
    CHECKS=$((CHECKS + 1))
  else
    fail "$3: '$2' not in $(basename "$1"):"
    sed 's/^/  | /' "$1" >&2
  fi
}
