#!/usr/bin/env bash
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
  check_status 2 "unpack refused" "$PKGTOOL" wheel unpack "$w" -d work/dest
  check_status 2 "unpack --no-verify refused" "$PKGTOOL" wheel unpack "$w" -d work/dest --no-verify
  check "nothing written in the target" test -z "$(ls -A work/dest)"
  check "nothing written outside" test ! -e work/evil.txt -a ! -e evil.txt -a ! -e /tmp/libpkg-evil.txt
  out=$("$PKGTOOL" wheel unpack "$w" -d work/dest 2>&1 || true)
  check "error names the wheel" grep -q "pkg-1.0-py3-none-any.whl" <<<"$out"
done

case_begin "not a wheel"
printf 'garbage' >work/junk-1.0-py3-none-any.whl
check_status 2 "not a zip" "$PKGTOOL" wheel unpack work/junk-1.0-py3-none-any.whl -d work/dest
cp work/junk-1.0-py3-none-any.whl work/junk.zip
check_status 2 "not a wheel name" "$PKGTOOL" wheel unpack work/junk.zip -d work/dest
check_status 2 "info on garbage" "$PKGTOOL" wheel info work/junk-1.0-py3-none-any.whl
check_status 2 "tags on garbage" "$PKGTOOL" wheel tags work/junk-1.0-py3-none-any.whl --build 1 -d work
check_status 2 "unknown subcommand" "$PKGTOOL" wheel frobnicate
check_status 2 "unknown option" "$PKGTOOL" wheel verify --bogus x.whl

finish
