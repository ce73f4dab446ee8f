#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Real-world case: Debian's python3-zstandard (its C backend links the
# system's libzstd.so.1) rebuilt as a wheel, repaired, installed into a
# fresh venv, and run (import with the C backend forced, compress /
# decompress round trip) with the system's libzstd hidden by a bind mount.
# The unrepaired wheel must fail in that same environment.
source "$(dirname "$0")/lib/common.sh"
require_repair_tools
make_scratch
cd "$SCRATCH"

build_fixture zstandard
W=$WHEEL
make_plan plan.json "$W"
CALL='import zstandard as z
data = b"libpkg repair " * 5000
c = z.ZstdCompressor(level=9).compress(data)
assert z.ZstdDecompressor().decompress(c) == data
print(z.backend, len(c) < len(data) // 10)'
export PYTHON_ZSTANDARD_IMPORT_POLICY=cext

case_begin "show"
expect_status 0 "pkgtool show --json" "$PKGTOOL" show "$W" --json
cp "$SCRATCH/last.out" show.json
py_check "show vs independent plan" check-show plan.json show.json
expect_eq "plan grafts libzstd only" "libzstd.so.1" "$(plan_get plan.json '" ".join(sorted(p["grafts"]))')"

case_begin "repair"
expect_status 0 "pkgtool repair" "$PKGTOOL" repair "$W" -w out
R=$(repaired_wheel out)
if [[ -z $R ]]; then
  fail "no output wheel: $(ls out 2>&1)"
  finish
fi
py_check "repaired wheel vs plan" check-repaired plan.json "$R"
py_check "eu-elflint --gnu-ld: no new messages" check-elflint plan.json "$R"
readers_ok "$R"

case_begin "install and run with libzstd hidden"
venv_install v0 "$W"
venv_install v1 "$R"
expect_eq "unrepaired wheel works normally" "cext True" "$(v0/bin/python -c "$CALL" 2>&1)"
expect_eq "repaired wheel works normally" "cext True" "$(v1/bin/python -c "$CALL" 2>&1)"
if can_hide; then
  hide=$(system_realpaths plan.json)
  check "libzstd is what gets hidden ($hide)" grep -q 'libzstd' <<<"$hide"
  out=$(hidden_run "$hide" v0/bin/python -c "$CALL" || true)
  check "unrepaired wheel fails with libzstd hidden: $out" grep -Eq 'libzstd|file too short' <<<"$out"
  expect_eq "repaired wheel works with libzstd hidden" "cext True" "$(hidden_run "$hide" v1/bin/python -c "$CALL")"
fi

finish
