#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Hostile wheels: members named "../x", "/abs" or "pkg/../../x" make `pkgtool
# wheel unpack` fail with exit 2 before anything is written (with and
# without --no-verify); nothing appears outside (or inside) the target.
# A non-zip and a misnamed file are exit 2 as well.
source "$(dirname "$0")/lib/common.sh"
make_scratch
cd "$SCRATCH"
mkdir -p work/dest

for kind in dotdot absolute nested; do
  case_begin "$kind member"
  w=work/pkg-1.0-py3-none-any.whl
  rm -f "$w"
  "${CHECK[@]}" hostile "$kind" "$w"
  expect_status 2 "unpack refused" "$PKGTOOL" wheel unpack "$w" -d work/dest
  expect_status 2 "unpack --no-verify refused" "$PKGTOOL" wheel unpack "$w" -d work/dest --no-verify
  expect_ok "nothing written in the target" test -z "$(ls -A work/dest)"
  expect_ok "nothing written outside" test ! -e work/evil.txt -a ! -e evil.txt -a ! -e /tmp/libpkg-evil.txt
  out=$("$PKGTOOL" wheel unpack "$w" -d work/dest 2>&1 || true)
  expect_ok "error names the wheel" grep -q "pkg-1.0-py3-none-any.whl" <<<"$out"
done

case_begin "not a wheel"
printf 'garbage' >work/junk-1.0-py3-none-any.whl
expect_status 2 "not a zip" "$PKGTOOL" wheel unpack work/junk-1.0-py3-none-any.whl -d work/dest
cp work/junk-1.0-py3-none-any.whl work/junk.zip
expect_status 2 "not a wheel name" "$PKGTOOL" wheel unpack work/junk.zip -d work/dest
expect_status 2 "info on garbage" "$PKGTOOL" wheel info work/junk-1.0-py3-none-any.whl
expect_status 2 "tags on garbage" "$PKGTOOL" wheel tags work/junk-1.0-py3-none-any.whl --build 1 -d work
# The writer emits only names its reader (and Python's zipfile) accepts:
# pack refuses a non-UTF-8 file name instead of flagging it UTF-8, and tags
# refuses to copy names that unpack would refuse (a case collision).
case_begin "names the reader would refuse"
mkdir -p work/tree/pkg work/tree/pkg-1.0.dist-info work/out
printf 'x' >work/tree/pkg/__init__.py
printf 'x' >"work/tree/pkg/caf$(printf '\xe9').txt"
printf 'Metadata-Version: 2.1\nName: pkg\nVersion: 1.0\n' >work/tree/pkg-1.0.dist-info/METADATA
printf 'Wheel-Version: 1.0\nGenerator: t\nRoot-Is-Purelib: true\nTag: py3-none-any\n' \
  >work/tree/pkg-1.0.dist-info/WHEEL
expect_status 2 "pack refuses a non-UTF-8 name" "$PKGTOOL" wheel pack work/tree -d work/out
expect_ok "pack wrote no wheel" test -z "$(ls -A work/out)"
rm "work/tree/pkg/caf$(printf '\xe9').txt"
printf 'x' >"work/tree/pkg/caf$(printf '\xc3\xa9').txt"
expect_ok "pack takes a UTF-8 name" "$PKGTOOL" wheel pack work/tree -d work/out
expect_ok "Python's zipfile reads it" "$LIBPKG_PYTHON" -c \
  'import sys, zipfile; z = zipfile.ZipFile(sys.argv[1]); assert "pkg/caf\u00e9.txt" in z.namelist(); assert z.testzip() is None' \
  work/out/pkg-1.0-py3-none-any.whl
"$LIBPKG_PYTHON" - work/case-1.0-py3-none-any.whl <<'PY'
import sys, zipfile
with zipfile.ZipFile(sys.argv[1], "w") as z:
    z.writestr("case/a.py", "1")
    z.writestr("case/A.py", "2")
    z.writestr("case-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: case\nVersion: 1.0\n")
    z.writestr("case-1.0.dist-info/WHEEL", "Wheel-Version: 1.0\nGenerator: t\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
    z.writestr("case-1.0.dist-info/RECORD", "")
PY
mkdir -p work/tagged
expect_status 2 "unpack refuses a case collision" "$PKGTOOL" wheel unpack work/case-1.0-py3-none-any.whl -d work/case
expect_status 2 "tags refuses to copy it" "$PKGTOOL" wheel tags work/case-1.0-py3-none-any.whl --build 1 -d work/tagged
expect_ok "tags wrote no wheel" test -z "$(ls -A work/tagged)"
out=$("$PKGTOOL" wheel tags work/case-1.0-py3-none-any.whl --build 1 -d work/tagged --allow-unverified 2>&1 || true)
expect_ok "tags names the wheel and the member" grep -q "^error: .*case-1.0-py3-none-any.whl: case/A.py: " <<<"$out"

expect_status 2 "unknown subcommand" "$PKGTOOL" wheel frobnicate
expect_status 2 "unknown option" "$PKGTOOL" wheel verify --bogus x.whl

finish
