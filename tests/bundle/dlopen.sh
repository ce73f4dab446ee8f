#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# --include: an extension dlopen()s libplugin.so.1 by name (no DT_NEEDED),
# and libplugin needs libchain2. `repair --include PATH` bundles libplugin
# under its own name plus its closure (libchain2, renamed), gives the
# extension (it imports dlopen) an RPATH to the graft directory, and the
# installed wheel's call works with our library directory deleted. Without
# --include the same call fails there (the control). --include by soname
# with --lib-path gives the same bytes as --include by path.
source "$(dirname "$0")/lib/common.sh"
require_repair_tools
make_scratch
cd "$SCRATCH"

build_fixture dlopen
W=$WHEEL
PLUGIN=$LIBS/libplugin.so.1
make_plan plan.json "$W" --include "$PLUGIN"
CALL='import dlopkg; print(dlopkg.call())'

case_begin "dry run"
expect_status 0 "repair --include --dry-run --json" "$PKGTOOL" repair "$W" -w out --include "$PLUGIN" --dry-run --json
cp "$SCRATCH/last.out" dry.json
py_check "dry-run plan vs independent plan" check-dry-run plan.json dry.json
expect_empty_dir "dry run writes nothing" out

case_begin "repair --include PATH"
expect_status 0 "repair --include $PLUGIN" "$PKGTOOL" repair "$W" -w out --include "$PLUGIN"
R=$(repaired_wheel out)
if [[ -z $R ]]; then
  fail "no output wheel: $(ls out 2>&1)"
  finish
fi
py_check "repaired wheel vs plan" check-repaired plan.json "$R"
py_check "eu-elflint --gnu-ld: no new messages" check-elflint plan.json "$R"
readers_ok "$R"
unzip -q "$R" -d ux
c2=$(plan_get plan.json 'p["grafts"]["libchain2.so"]["member"]')
check "libplugin.so.1 kept its name" test -f ux/dlopkg.libs/libplugin.so.1
d=$(readelf -dW ux/dlopkg.libs/libplugin.so.1 2>&1)
expect_eq "libplugin SONAME kept" "libplugin.so.1" "$(sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p' <<<"$d")"
check "libplugin NEEDED ${c2##*/}" grep -q "(NEEDED).*\[${c2##*/}\]" <<<"$d"
expect_eq "libplugin DT_RPATH" '$ORIGIN' "$(sed -n 's/.*(RPATH).*\[\(.*\)\]/\1/p' <<<"$d")"
expect_eq "extension DT_RPATH (it imports dlopen)" '$ORIGIN/../dlopkg.libs' \
  "$(dynamic_values ux/dlopkg/_dl.*.so RPATH)"

case_begin "install and run"
venv_install v1 "$R"
expect_status 0 "repair without --include" "$PKGTOOL" repair "$W" -w plain
P=$(repaired_wheel plain)
[[ -n $P ]] && venv_install v0 "$P"
# Baseline: with our directory on LD_LIBRARY_PATH the plain wheel works.
[[ -n $P ]] && expect_eq "plain repair works while libplugin is findable" "1023" \
  "$(LD_LIBRARY_PATH=$LIBS v0/bin/python -c "$CALL" 2>&1)"
mv "$LIBS" "$LIBS.gone"
expect_eq "--include wheel runs with libplugin/libchain deleted" "1023" "$(v1/bin/python -c "$CALL" 2>&1)"
if [[ -n $P ]]; then
  out=$(v0/bin/python -c "$CALL" 2>&1 || true)
  check "without --include the call fails: $out" grep -q 'libplugin.so.1' <<<"$out"
fi
mv "$LIBS.gone" "$LIBS"

case_begin "--include SONAME --lib-path DIR"
expect_status 0 "repair --include libplugin.so.1 --lib-path" \
  "$PKGTOOL" repair "$W" -w bysoname --include libplugin.so.1 --lib-path "$LIBS"
R2=$(repaired_wheel bysoname)
[[ -n $R2 ]] && expect_same_file "same bytes as --include PATH" "$R" "$R2"

# A candidate that cannot be read is reported, not passed over for the next
# directory's copy (it used to be taken for "not ELF"). As nobody: root reads
# a mode-000 file.
case_begin "--include SONAME: an unreadable candidate is an error"
mkdir denied
cp "$PLUGIN" denied/
chmod 000 denied/libplugin.so.1
chmod -R a+rX "$SCRATCH"
chmod 000 denied/libplugin.so.1
rc=0
setpriv --reuid=65534 --regid=65534 --clear-groups \
  "$PKGTOOL" repair "$W" -w denied-out --include libplugin.so.1 --lib-path "$SCRATCH/denied" \
  --lib-path "$LIBS" --dry-run >"$SCRATCH/last.out" 2>"$SCRATCH/last.err" || rc=$?
expect_eq "exit status with an unreadable --include candidate" 2 "$rc"
check "the error names the file and the reason: $(head -c 300 "$SCRATCH/last.err")" \
  grep -q "^error: .*denied/libplugin.so.1: cannot open: Permission denied" "$SCRATCH/last.err"

finish
