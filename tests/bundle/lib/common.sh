# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=bash
# Shared helpers for the tests/bundle repair scripts (sourced, not run).
#
# Fixtures are compiled at test time by lib/repaircheck.py (gcc/g++ and the
# interpreter's headers) and packed with `pkgtool wheel pack`. Expectations
# (which libraries get grafted under which names, which tag is reachable,
# what blocks a tag) are computed by repaircheck.py with ldd, readelf and
# the policy JSON: independently of libpkg.
source "$(dirname "${BASH_SOURCE[0]}")/../../lib/harness.sh"

REPAIRTEST_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
RC=("$LIBPKG_PYTHON" "$REPAIRTEST_DIR/lib/repaircheck.py")
# AUDITWHEEL_PLAT would change the default --plat.
unset PIP_INDEX_URL PIP_FIND_LINKS PYTHON_ZSTANDARD_IMPORT_POLICY AUDITWHEEL_PLAT

require_repair_tools() {
  require_tools gcc readelf ldd unzip "$@"
  "$LIBPKG_PYTHON" -c 'import sysconfig, os, sys; sys.exit(not os.path.exists(sysconfig.get_paths()["include"] + "/Python.h"))' ||
    missing "Python.h missing for $LIBPKG_PYTHON (python3-dev)"
  # The commands under test must exist in this pkgtool.
  "$PKGTOOL" repair --help >/dev/null 2>&1 || missing "this pkgtool has no 'repair' command"
  "$PKGTOOL" show --help >/dev/null 2>&1 || missing "this pkgtool has no 'show' command"
}

# build_fixture KIND: builds the fixture wheel into $SCRATCH/fx (our own
# libraries go to $SCRATCH/fx/libs) and sets $WHEEL. Fails the test on a
# build error or a missing tool (the builder exits 1 for both).
build_fixture() {
  local rc=0 out
  out=$("${RC[@]}" build "$1" "$SCRATCH/fx" 2>&1) || rc=$?
  if ((rc != 0)); then
    fail "building fixture $1: $out"
    finish
  fi
  WHEEL=$(tail -n1 <<<"$out")
  LIBS=$SCRATCH/fx/libs
}

# make_plan OUT.json WHEEL [plan options]: the independent repair plan.
make_plan() {
  local out=$1
  shift
  if ! "${RC[@]}" plan "$@" >"$out" 2>"$SCRATCH/plan.err"; then
    fail "independent plan for $*: $(cat "$SCRATCH/plan.err")"
    finish
  fi
}
plan_get() { # plan_get PLAN.json PYTHON-EXPR-ON-p
  "$LIBPKG_PYTHON" -c "import json,sys; p=json.load(open(sys.argv[1])); print($2)" "$1"
}

# py_check WHAT SUBCOMMAND ARGS...: a repaircheck.py check; its FAIL lines
# are shown on failure.
py_check() {
  local what=$1 out
  shift
  if out=$("${RC[@]}" "$@" 2>&1); then
    pass
  else
    fail "$what:"$'\n'"$out"
  fi
}

# repaired_wheel DIR: the single .whl in DIR (empty when none or several).
repaired_wheel() {
  local w=("$1"/*.whl)
  ((${#w[@]} == 1)) && printf '%s\n' "${w[0]}"
  return 0
}

# expect_empty_dir WHAT DIR: DIR is absent or holds nothing (not even
# temporary files).
expect_empty_dir() {
  if [[ ! -d $2 || -z $(ls -A "$2") ]]; then
    pass
  else
    fail "$1: $2 is not empty: $(ls -A "$2" | head -5 | tr '\n' ' ')"
  fi
}

# readers_ok WHEEL: zipfile -t, pkgtool wheel verify, wheel's WheelFile.
readers_ok() {
  expect_ok "python -m zipfile -t" "$LIBPKG_PYTHON" -m zipfile -t "$1"
  expect_ok "pkgtool wheel verify" "$PKGTOOL" wheel verify "$1"
  expect_ok "wheel.wheelfile.WheelFile (python3-wheel) reads every member against RECORD" "$LIBPKG_PYTHON" -c '
import sys
from wheel.wheelfile import WheelFile
with WheelFile(sys.argv[1]) as wf:
    for info in wf.infolist():
        wf.read(info.filename)
' "$1"
}

# venv_install VENV WHEEL: a fresh venv (no pip of its own) with WHEEL
# installed by the interpreter's pip, no index, no deps.
venv_install() {
  local venv=$1 wheel=$2 out
  rm -rf "$venv"
  if ! out=$("$LIBPKG_PYTHON" -m venv --without-pip "$venv" 2>&1); then
    fail "venv creation: $out"
    return 1
  fi
  if ! out=$("$LIBPKG_PYTHON" -m pip --python "$venv/bin/python" install --no-index --no-deps \
    --disable-pip-version-check -q "$wheel" 2>&1); then
    fail "pip install $wheel: $out"
    return 1
  fi
  pass
}

# can_hide: whether unshare can give us a private mount namespace; a
# failure (util-linux missing, user namespaces refused) is a failed check,
# never a skipped sub-case: the hidden run is the test's oracle.
can_hide() {
  require_tools unshare
  local out
  if out=$(unshare --user --map-root-user --mount sh -c 'mount --bind /dev/null /dev/null && echo ok' 2>&1) &&
    [[ $out == ok ]]; then
    return 0
  fi
  fail "unshare --user --map-root-user --mount refused: $out"
  return 1
}

# hidden_run "FILE1 FILE2 ..." CMD...: runs CMD in a private mount
# namespace where each FILE (a real path) is replaced by /dev/null, so the
# dynamic loader cannot load it from the system. Output on stdout+stderr.
hidden_run() {
  local files=$1
  shift
  # shellcheck disable=SC2016
  unshare --user --map-root-user --mount sh -c '
    for f in $0; do mount --bind /dev/null "$f" || exit 99; done
    exec "$@"' "$files" "$@" 2>&1
}

# system_realpaths PLAN.json: the real paths of grafted libraries that come
# from outside $SCRATCH (system libraries), space separated.
system_realpaths() {
  "$LIBPKG_PYTHON" -c '
import json, sys
p = json.load(open(sys.argv[1]))
print(" ".join(sorted({g["realpath"] for g in p["grafts"].values() if not g["realpath"].startswith(sys.argv[2])})))
' "$1" "$SCRATCH"
}
