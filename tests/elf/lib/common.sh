# SPDX-License-Identifier: BSD-3-Clause
# Shared harness for the tests/elf integration scripts (sourced, not run).
#
# Environment (set by ctest through libpkg_add_script_test):
#   PKGTOOL, PATCHELF_OURS        the tools under test
#   PATCHELF_UNDER_TEST           overrides the patchelf implementation under test
#                                 (e.g. /usr/bin/patchelf to validate the scripts)
#   LIBPKG_PYTHON                 /usr/bin/python3
#   ELF_TARGETS                   space-separated targets (x86_64 i686 aarch64 s390x armhf)
#   ELFTEST_KEEP=1                keep the scratch directory (its path is printed)
set -Eeuo pipefail
shopt -s nullglob
# An unexpected failing command aborts the script (set -e); say where.
trap 'echo "ERROR: unexpected failure at ${BASH_SOURCE[0]##*/}:$LINENO: $BASH_COMMAND" >&2' ERR

ELFTEST_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
LIBPKG_PYTHON=${LIBPKG_PYTHON:-/usr/bin/python3}
REF_PATCHELF=${REF_PATCHELF:-/usr/bin/patchelf}
PATCHELF_OURS=${PATCHELF_OURS:-}
TOOL=${PATCHELF_UNDER_TEST:-$PATCHELF_OURS}
PKGTOOL=${PKGTOOL:-}
ELFCHECK=("$LIBPKG_PYTHON" "$ELFTEST_DIR/lib/elfcheck.py")
# A stray LD_LIBRARY_PATH would let programs find libraries the test did not
# put in place, hiding a broken RPATH/NEEDED edit.
unset LD_LIBRARY_PATH LD_PRELOAD

FAILS=0
CHECKS=0
CURRENT_CASE=""

log() { printf '%s\n' "$*"; }
fail() {
  FAILS=$((FAILS + 1))
  local msg="$*"
  # Checks usually start their message with the case name; add it otherwise.
  if [[ -n $CURRENT_CASE && $msg != "$CURRENT_CASE"* ]]; then
    msg="[$CURRENT_CASE] $msg"
  fi
  printf 'FAIL: %s\n' "$msg" >&2
}
pass() { CHECKS=$((CHECKS + 1)); }
skip() {
  printf 'SKIP: %s\n' "$*"
  exit 77
}
case_begin() {
  CURRENT_CASE=$1
  log "--- $1"
}

# finish: the script's last call; exit status 1 if any check failed.
finish() {
  CURRENT_CASE=""
  if ((FAILS > 0)); then
    log "$FAILS check(s) FAILED, $CHECKS passed (tool under test: $TOOL)"
    exit 1
  fi
  log "PASS: $CHECKS checks (tool under test: $TOOL)"
  exit 0
}

# is_ours: true when the patchelf under test is libpkg's (strict error-format checks).
is_ours() {
  [[ -n $PATCHELF_OURS && $TOOL == "$PATCHELF_OURS" ]]
}

# make_scratch: a private scratch directory in $SCRATCH, removed on exit.
make_scratch() {
  SCRATCH=$(mktemp -d "${TMPDIR:-/tmp}/libpkg-elftest.XXXXXX")
  if [[ ${ELFTEST_KEEP:-0} == 1 ]]; then
    log "scratch directory kept: $SCRATCH"
  else
    trap 'rm -rf "$SCRATCH"' EXIT
  fi
}

# require_tools: skip unless the tool under test and the helpers exist.
require_tools() {
  [[ -n $TOOL ]] || skip "neither PATCHELF_UNDER_TEST nor PATCHELF_OURS is set"
  [[ -x $TOOL ]] || skip "patchelf under test not found: $TOOL"
  [[ -x $LIBPKG_PYTHON ]] || skip "python not found: $LIBPKG_PYTHON"
  command -v readelf >/dev/null || skip "readelf not installed (binutils)"
  local t
  for t in "$@"; do
    command -v "$t" >/dev/null || skip "$t not installed"
  done
}

sha() { sha256sum "$1" | cut -d' ' -f1; }
fsize() { stat -c %s "$1"; }

# expect_eq WHAT EXPECTED ACTUAL
expect_eq() {
  if [[ $2 == "$3" ]]; then
    pass
  else
    fail "$1: expected [$2], got [$3]"
  fi
}

# expect_same_file WHAT A B: byte-identical (cmp).
expect_same_file() {
  if cmp -s "$2" "$3"; then
    pass
  else
    fail "$1: $3 differs from $2 ($(cmp "$2" "$3" 2>&1 | head -n 1 || true))"
  fi
}

# pe FILE... : run the patchelf under test, capturing stderr in $SCRATCH/pe.err;
# returns its exit status (never aborts the script).
pe() {
  local rc=0
  "$TOOL" "$@" 2>"$SCRATCH/pe.err" || rc=$?
  return $rc
}

# pe_ok WHAT ARGS...: run an edit that must succeed.
pe_ok() {
  local what=$1
  shift
  local rc=0
  pe "$@" || rc=$?
  if ((rc == 0)); then
    pass
    return 0
  fi
  fail "$what: patchelf $* exited $rc: $(head -c 400 "$SCRATCH/pe.err")"
  return 1
}
