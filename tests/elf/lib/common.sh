# SPDX-License-Identifier: BSD-3-Clause
# ELF-specific part of the harness for the tests/elf integration scripts
# (sourced, not run). The generic helpers (fail/pass/check/expect_*, finish,
# make_scratch, require_tools, missing, the shell options and ERR trap) come
# from the shared tests/lib/harness.sh; this file adds only the patchelf and
# ELF helpers.
#
# Environment (set by ctest through libpkg_add_script_test):
#   PKGTOOL, PATCHELF_OURS        the tools under test
#   PATCHELF_UNDER_TEST           overrides the patchelf implementation under test
#                                 (e.g. /usr/bin/patchelf to validate the scripts)
#   LIBPKG_PYTHON                 /usr/bin/python3
#   ELF_TARGETS                   space-separated targets (x86_64 i686 aarch64 s390x armhf)
#   ELFTEST_KEEP=1                keep the scratch directory (same as TEST_KEEP=1)

# harness.sh sets exactly the options these scripts always ran under
# (set -Eeuo pipefail, nullglob, an ERR trap naming the failing line), so
# sourcing it does not change how the ELF scripts behave.
source "$(dirname "${BASH_SOURCE[0]}")/../../lib/harness.sh"

ELFTEST_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
TEST_KEEP=${TEST_KEEP:-${ELFTEST_KEEP:-0}}
REF_PATCHELF=${REF_PATCHELF:-/usr/bin/patchelf}
PATCHELF_OURS=${PATCHELF_OURS:-}
TOOL=${PATCHELF_UNDER_TEST:-$PATCHELF_OURS}
ELFCHECK=("$LIBPKG_PYTHON" "$ELFTEST_DIR/lib/elfcheck.py")

# is_ours: true when the patchelf under test is libpkg's (strict error-format checks).
is_ours() {
  [[ -n $PATCHELF_OURS && $TOOL == "$PATCHELF_OURS" ]]
}

# require_elf_tools TOOL...: the patchelf under test, python, readelf and
# TOOL... must exist; a missing one is a failure (harness.sh's missing).
require_elf_tools() {
  [[ -n $TOOL ]] || missing "neither PATCHELF_UNDER_TEST nor PATCHELF_OURS is set"
  [[ -x $TOOL ]] || missing "patchelf under test not found: $TOOL"
  [[ -x $LIBPKG_PYTHON ]] || missing "python not found: $LIBPKG_PYTHON"
  require_tools readelf "$@"
  log "patchelf under test: $TOOL"
}

sha() { sha256sum "$1" | cut -d' ' -f1; }
fsize() { stat -c %s "$1"; }

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
