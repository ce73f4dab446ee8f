#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# check_binary expands $LIB and $PLATFORM in RPATH entries as ld.so would for
# each file: "lib" for a 32-bit object, "lib64" for a 64-bit one, and the
# file's own machine for $PLATFORM (they were fixed to lib64/x86_64 before).
# Fixtures: libtorch trees holding one cross-compiled library whose RPATH
# leaves the tree through $LIB or $PLATFORM; the rpath check must name the
# directory the loader would really use.
source "$(dirname "${BASH_SOURCE[0]}")/../lib/harness.sh"
[[ -n ${CHECK_BINARY:-} && -x $CHECK_BINARY ]] || missing "CHECK_BINARY not set (build check_binary, run through ctest)"
# Every target the header promises: a missing cross compiler is a failure.
require_tools gcc i686-linux-gnu-gcc aarch64-linux-gnu-gcc readelf
make_scratch
tmp=$SCRATCH
cases=0

# case CC ENTRY EXPECTED: a tree with lib/libx.so built by CC with RPATH ENTRY;
# the rpath check's problem must mention EXPECTED.
case_() {
  local cc=$1 entry=$2 expected=$3 dir
  case_begin "$cc: '$entry' points at ...$expected"
  cases=$((cases + 1))
  dir=$tmp/$cc-$cases/libtorch
  mkdir -p "$dir/lib" "$dir/include" "$dir/share" "$dir/bin"
  echo 1.0.0 >"$dir/build-version"
  echo abc >"$dir/build-hash"
  echo 'int x(void) { return 1; }' >"$tmp/x.c"
  if ! "$cc" -shared -fPIC -nostdlib -o "$dir/lib/libx.so" "$tmp/x.c" "-Wl,-rpath,$entry"; then
    fail "$cc could not build the fixture"
    return
  fi
  check "the fixture has its RPATH" grep -q 'R.*PATH.*\$' <(readelf -d "$dir/lib/libx.so")
  "$CHECK_BINARY" "$dir" --no-env --only rpath --json >"$tmp/report.json" || true
  check "the rpath check names the directory the loader uses" "$LIBPKG_PYTHON" - "$tmp/report.json" "$expected" <<'PY'
import json, sys
report, expected = json.load(open(sys.argv[1])), sys.argv[2]
(rpath,) = [c for c in report["checks"] if c["id"] == "rpath"]
messages = [p["message"] for p in rpath["problems"]]
ok = rpath["status"] == "fail" and any(expected in m for m in messages)
if not ok:
    print("  got:", rpath["status"], messages)
sys.exit(0 if ok else 1)
PY
}

case_ i686-linux-gnu-gcc '$ORIGIN/../../../$LIB' '/lib)'
case_ gcc '$ORIGIN/../../../$LIB' '/lib64)'
case_ aarch64-linux-gnu-gcc '$ORIGIN/../../../$PLATFORM' '/aarch64)'
case_ gcc '$ORIGIN/../../../$PLATFORM' '/x86_64)'
finish
