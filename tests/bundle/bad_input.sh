#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Refusals, each with exit 2, a message naming the culprit, and nothing left
# in -w: a library that cannot be found (names the binary and the soname;
# --ignore-missing proceeds and keeps the NEEDED entry), ELF files of two
# architectures in one wheel, a pure-Python wheel, a missing input file,
# a file that is not a zip.
source "$(dirname "$0")/lib/common.sh"
require_repair_tools
make_scratch
cd "$SCRATCH"

case_begin "missing library"
build_fixture missing
W=$WHEEL
GHOST=$W
ext=$(unzip -Z1 "$W" | grep '\.so$')
expect_exit "repair with libghost.so.3 missing" 2 "libghost\.so\.3" "$PKGTOOL" repair "$W" -w out
check "the message names the binary ($ext)" grep -qF "${ext##*/}" "$SCRATCH/out.log"
log "  message: $(head -c 300 "$SCRATCH/out.log")"
expect_empty_dir "-w left empty" out
expect_status 0 "show reports it (exit 0)" "$PKGTOOL" show "$W" --json
expect_eq "show: missing" "libghost.so.3 ['$ext']" \
  "$(plan_get "$SCRATCH/last.out" '" ".join(str(x) for m in p["missing"] for x in (m["soname"], m["needed_by"]))' 2>&1)"
make_plan plan.json "$W"
expect_status 0 "repair --ignore-missing --dry-run" "$PKGTOOL" repair "$W" -w out --ignore-missing --dry-run --json
expect_eq "notes: the missing library and why no manylinux tag" "True True" \
  "$(plan_get "$SCRATCH/last.out" 'any("libghost.so.3" in n for n in p["notes"]), any("no manylinux tag" in n for n in p["notes"])')"
expect_status 0 "repair --ignore-missing" "$PKGTOOL" repair "$W" -w out --ignore-missing
R=$(repaired_wheel out)
if [[ -n $R ]]; then
  py_check "--ignore-missing result vs plan" check-repaired plan.json "$R"
  unzip -q -o "$R" "$ext" -d gx
  check "NEEDED libghost.so.3 kept" grep -q '(NEEDED).*\[libghost.so.3\]' <<<"$(readelf -dW "gx/$ext")"
else
  fail "--ignore-missing wrote no wheel: $(ls out 2>&1)"
fi

case_begin "found through LD_LIBRARY_PATH or --lib-path"
# The same wheel with libghost.so.3 rebuilt in a directory that only
# LD_LIBRARY_PATH (show and repair use it as ld.so does) or --lib-path name.
mkdir ghostdir
gcc -shared -fPIC -Wl,-soname,libghost.so.3 -o ghostdir/libghost.so.3 "$REPAIRTEST_DIR/src/ghost.c"
LD_LIBRARY_PATH=$PWD/ghostdir make_plan plan_g.json "$W"
expect_eq "independent plan grafts libghost" "libghost.so.3" "$(plan_get plan_g.json '" ".join(p["grafts"])')"
LD_LIBRARY_PATH=$PWD/ghostdir expect_status 0 "show with LD_LIBRARY_PATH" "$PKGTOOL" show "$W" --json
cp "$SCRATCH/last.out" show_g.json
py_check "show (LD_LIBRARY_PATH) vs plan" check-show plan_g.json show_g.json
expect_status 0 "show --lib-path" "$PKGTOOL" show "$W" --json --lib-path "$PWD/ghostdir"
cp "$SCRATCH/last.out" show_g2.json
py_check "show (--lib-path) vs plan" check-show plan_g.json show_g2.json
expect_status 0 "repair --lib-path" "$PKGTOOL" repair "$W" -w outg --lib-path "$PWD/ghostdir"
R=$(repaired_wheel outg)
[[ -n $R ]] && py_check "repair --lib-path result vs plan" check-repaired plan_g.json "$R"

case_begin "two architectures"
build_fixture twoarch
W=$WHEEL
expect_exit "repair of a wheel with x86_64 + foreign ELF" 2 "foreign\.so" "$PKGTOOL" repair "$W" -w out2
log "  message: $(head -c 300 "$SCRATCH/out.log")"
check "message names the other architecture" grep -Eiq 'aarch64|i686|i386|80386|arm' "$SCRATCH/out.log"
expect_empty_dir "-w left empty" out2
expect_exit "show of the same wheel" 2 "foreign\.so" "$PKGTOOL" show "$W"

case_begin "pure-Python wheel"
build_fixture pure
W=$WHEEL
expect_exit "repair of a pure wheel" 2 "pure|no ELF|no binar|platform" "$PKGTOOL" repair "$W" -w out3
log "  message: $(head -c 300 "$SCRATCH/out.log")"
expect_empty_dir "-w left empty" out3

case_begin "unreadable inputs"
expect_exit "missing input file" 2 "nothere-1.0-py3-none-any\.whl" "$PKGTOOL" repair nothere-1.0-py3-none-any.whl -w out4
printf 'not a zip' >fake-1.0-cp311-cp311-linux_x86_64.whl
expect_exit "not a zip" 2 "fake-1\.0" "$PKGTOOL" repair fake-1.0-cp311-cp311-linux_x86_64.whl -w out4
expect_exit "show: not a zip" 2 "fake-1\.0" "$PKGTOOL" show fake-1.0-cp311-cp311-linux_x86_64.whl
expect_exit "unknown --plat" 2 "manylinux_9_99" "$PKGTOOL" repair "$GHOST" -w out4 --ignore-missing --plat manylinux_9_99
expect_empty_dir "-w left empty" out4

finish
