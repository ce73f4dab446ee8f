# SPDX-License-Identifier: BSD-3-Clause
# Shared harness for package-level integration scripts (sourced, not run);
# tests/lib/testlib.py is its Python side.
#
# Environment (set by ctest through libpkg_add_script_test): PKGTOOL,
# LIBPKG_PYTHON, LIBPKG_SOURCE_DIR, LIBPKG_BINARY_DIR. TEST_KEEP=1 keeps the
# scratch directory. Exit status: 0 pass, 1 a check failed (or something the
# test needs is missing), 77 skipped (only for what setup.sh cannot install:
# no GPU / CUDA toolkit, see tests/skip-allowlist.txt).
set -Eeuo pipefail
shopt -s nullglob
trap 'echo "ERROR: unexpected failure at ${BASH_SOURCE[1]:-$0}:$LINENO: $BASH_COMMAND" >&2' ERR

LIBPKG_PYTHON=${LIBPKG_PYTHON:-/usr/bin/python3}
PKGTOOL=${PKGTOOL:?PKGTOOL must point at the pkgtool binary (run through ctest)}
unset LD_LIBRARY_PATH LD_PRELOAD

FAILS=0
CHECKS=0
CURRENT_CASE=""

log() { printf '%s\n' "$*"; }
fail() {
  FAILS=$((FAILS + 1))
  local msg="$*"
  # Many checks start their message with the case name; add it otherwise.
  if [[ -n $CURRENT_CASE && $msg != "$CURRENT_CASE"* ]]; then
    msg="[$CURRENT_CASE] $msg"
  fi
  printf 'FAIL: %s\n' "$msg" >&2
}
pass() { CHECKS=$((CHECKS + 1)); }
# abort WHAT: fail and stop here, for a step every later check needs.
abort() {
  fail "$@"
  finish
}
# missing WHAT: fail now; scripts/setup.sh (or the build) provides WHAT.
missing() {
  printf 'FAIL: %s (scripts/setup.sh installs the tools; build the targets)\n' "$*" >&2
  exit 1
}
skip() {
  printf 'SKIP: %s\n' "$*"
  exit 77
}
case_begin() {
  CURRENT_CASE=$1
  log "--- $1"
}
finish() {
  CURRENT_CASE=""
  if ((FAILS > 0)); then
    log "$FAILS check(s) FAILED, $CHECKS passed"
    exit 1
  fi
  log "PASS: $CHECKS checks"
  exit 0
}

# make_scratch: a private scratch directory in $SCRATCH, removed on exit.
make_scratch() {
  SCRATCH=$(mktemp -d "${TMPDIR:-/tmp}/libpkg-test.XXXXXX")
  if [[ ${TEST_KEEP:-0} == 1 ]]; then
    log "scratch directory kept: $SCRATCH"
  else
    # Tests may leave read-only directories behind (mode checks).
    trap 'chmod -R u+rwX "$SCRATCH" 2>/dev/null; rm -rf "$SCRATCH"' EXIT
  fi
}

# require_tools TOOL...: a missing tool is a failure, never a skip.
require_tools() {
  local t
  for t in "$@"; do
    command -v "$t" >/dev/null || missing "$t not installed"
  done
}

# check DESCRIPTION COMMAND...: the command must succeed (its output is not
# captured, so it may be a function that sets variables).
check() {
  local what=$1
  shift
  if "$@"; then pass; else fail "$what"; fi
}
# expect_status N DESCRIPTION COMMAND...: the command must exit with N; its
# output is kept in $SCRATCH/last.out and last.err (shown on failure).
expect_status() {
  local want=$1 what=$2 rc=0
  shift 2
  "$@" >"$SCRATCH/last.out" 2>"$SCRATCH/last.err" || rc=$?
  if ((rc == want)); then
    pass
  else
    fail "$what: exit $rc, expected $want"
    sed 's/^/  | /' "$SCRATCH/last.out" "$SCRATCH/last.err" >&2
  fi
}
# expect_eq WHAT EXPECTED ACTUAL
expect_eq() {
  if [[ $2 == "$3" ]]; then pass; else fail "$1: expected [$2], got [$3]"; fi
}
# expect_same_file WHAT A B: byte-identical.
expect_same_file() {
  if cmp -s "$2" "$3"; then
    pass
  else
    fail "$1: $3 differs from $2 ($(cmp "$2" "$3" 2>&1 | head -n 1 || true))"
  fi
}
# expect_ok WHAT CMD...: the command must succeed (its output goes to
# $SCRATCH/out.log, shown on failure).
expect_ok() {
  local what=$1
  shift
  if "$@" >"$SCRATCH/out.log" 2>&1; then
    pass
  else
    fail "$what: '$*' failed (exit $?): $(head -c 2000 "$SCRATCH/out.log")"
  fi
}
# succeeds WHAT CMD...: expect_ok that also returns whether CMD succeeded,
# for `if succeeds ...; then <checks that need it>; fi`.
succeeds() {
  local before=$FAILS
  expect_ok "$@"
  ((FAILS == before))
}
# expect_exit WHAT CODE PATTERN CMD...: the command must exit with CODE and
# print PATTERN (an extended regex) on stdout/stderr.
expect_exit() {
  local what=$1 code=$2 pattern=$3
  shift 3
  local rc=0
  "$@" >"$SCRATCH/out.log" 2>&1 || rc=$?
  if ((rc != code)); then
    fail "$what: expected exit $code, got $rc: $(head -c 2000 "$SCRATCH/out.log")"
  elif ! grep -Eq -- "$pattern" "$SCRATCH/out.log"; then
    fail "$what: output lacks /$pattern/: $(head -c 2000 "$SCRATCH/out.log")"
  else
    pass
  fi
}
# dynamic_values FILE TAG: the values of FILE's TAG entries (NEEDED, SONAME,
# RPATH, RUNPATH), one a line, as `readelf -dW` prints them.
dynamic_values() {
  readelf -dW "$1" | sed -n "s/^ *0x[0-9a-f]* *($2) *[^[]*\[\(.*\)\]\$/\1/p"
}
# tree_digest DIR: one line per entry (type, mode, path, content hash or link
# target), sorted: equal digests mean equal trees.
tree_digest() {
  (cd "$1" && find . -mindepth 1 -printf '%y %m %P\n' | sort | while read -r type mode path; do
    case $type in
      f) printf 'f %s %s %s\n' "$mode" "$path" "$(sha256sum <"$path" | cut -d' ' -f1)" ;;
      l) printf 'l %s -> %s\n' "$path" "$(readlink "$path")" ;;
      *) printf '%s %s %s\n' "$type" "$mode" "$path" ;;
    esac
  done)
}
