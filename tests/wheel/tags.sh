#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# `pkgtool wheel tags`: new platform tags change the file name and WHEEL's
# Tag lines; the result verifies (ours, zipfile, WheelFile); every other
# member is a raw copy; '+x'/'-x' edit tag sets; --build; --remove; the same
# name without --in-place is refused. --strip-local-version renames the
# file, the .dist-info and .data directories and rewrites METADATA's
# Version only; the result is pip-installable and reports version 1.0.0.
source "$(dirname "$0")/lib/common.sh"
require_tools gcc unzip
make_scratch
py_facts
cd "$SCRATCH"

pack_demo_wheel in

case_begin "platform tag replaced"
mkdir out
printed=$("$PKGTOOL" wheel tags "in/$W" --platform-tag manylinux_2_17_x86_64.manylinux2014_x86_64 -d out)
M="demo-1.0-$PYTAG-$PYTAG-manylinux2014_x86_64.manylinux_2_17_x86_64.whl"
expect_eq "printed name" "$M" "$printed"
expect_ok "file exists" test -f "out/$M"
expect_eq "WHEEL Tag lines" "Tag: $PYTAG-$PYTAG-manylinux2014_x86_64 Tag: $PYTAG-$PYTAG-manylinux_2_17_x86_64 " \
  "$(unzip -p "out/$M" demo-1.0.dist-info/WHEEL | grep '^Tag:' | tr '\n' ' ')"
expect_eq "other WHEEL lines kept" "$(grep -v '^Tag:' tree/demo-1.0.dist-info/WHEEL)" \
  "$(unzip -p "out/$M" demo-1.0.dist-info/WHEEL | grep -v '^Tag:')"
expect_ok "verify" "$PKGTOOL" wheel verify "out/$M"
expect_ok "zipfile + WheelFile" "${CHECK[@]}" read "out/$M"
expect_ok "unzip -t" unzip -tq "out/$M"
expect_eq "raw copies: only WHEEL and RECORD differ" \
  "demo-1.0.dist-info/RECORD demo-1.0.dist-info/WHEEL " \
  "$("${CHECK[@]}" raw-diff "in/$W" "out/$M" | sort | tr '\n' ' ')"
expect_eq "same member order" "$("${CHECK[@]}" members "in/$W")" "$("${CHECK[@]}" members "out/$M")"
expect_ok "input kept" test -f "in/$W"

case_begin "+x / -x edits and --build"
mkdir out2
printed=$("$PKGTOOL" wheel tags "in/$W" --python-tag +py3 --abi-tag -none --platform-tag +any --build 5 -d out2)
expect_eq "added tags" "demo-1.0-5-$PYTAG.py3-$PYTAG-any.$PLATTAG.whl" "$printed"
expect_eq "WHEEL Build" "Build: 5" "$(unzip -p "out2/$printed" demo-1.0.dist-info/WHEEL | grep '^Build:')"
expect_eq "four Tag lines" "4" "$(unzip -p "out2/$printed" demo-1.0.dist-info/WHEEL | grep -c '^Tag:')"
expect_ok "verify" "$PKGTOOL" wheel verify "out2/$printed"
printed2=$("$PKGTOOL" wheel tags "out2/$printed" --python-tag -py3 --platform-tag -any --build "" -d out2)
expect_eq "removed again" "$W" "$printed2"
expect_ok "and verifies" "$PKGTOOL" wheel verify "out2/$printed2"
expect_status 2 "removing every tag is refused" "$PKGTOOL" wheel tags "in/$W" --abi-tag -"$PYTAG" -d out2
expect_status 2 "same name refused" "$PKGTOOL" wheel tags "in/$W"
expect_status 2 "bad build tag" "$PKGTOOL" wheel tags "in/$W" --build abc -d out2

case_begin "--in-place and --remove"
mkdir ip
cp "in/$W" ip/
before=$(sha256sum "ip/$W")
expect_ok "in place, same name" "$PKGTOOL" wheel tags "ip/$W" --in-place --build ""
expect_ok "still verifies" "$PKGTOOL" wheel verify "ip/$W"
printed=$("$PKGTOOL" wheel tags "ip/$W" --platform-tag "$PLATTAG.any" --remove)
expect_ok "input removed" test ! -e "ip/$W"
expect_ok "output present" test -f "ip/$printed"
expect_eq "hash unchanged by the no-op rewrite" "$(cut -d' ' -f1 <<<"$before")  -" "$(sha256sum <"in/$W")"

case_begin "strip local version"
make_tree ltree torchlike "1.0.0+cu124"
L="torchlike-1.0.0+cu124-$PYTAG-$PYTAG-$PLATTAG.whl"
S="torchlike-1.0.0-$PYTAG-$PYTAG-$PLATTAG.whl"
mkdir lin lout
"$PKGTOOL" wheel pack ltree -d lin >/dev/null
expect_ok "local-version input" test -f "lin/$L"
printed=$("$PKGTOOL" wheel tags "lin/$L" --strip-local-version -d lout)
expect_eq "printed name" "$S" "$printed"
members=$("${CHECK[@]}" members "lout/$S")
expect_ok "no old dist-info left" test -z "$(grep -F '1.0.0+cu124' <<<"$members" || true)"
expect_ok "dist-info renamed" grep -q '^torchlike-1.0.0.dist-info/METADATA$' <<<"$members"
expect_ok ".data renamed" grep -q '^torchlike-1.0.0.data/scripts/torchlike-run$' <<<"$members"
expect_eq "METADATA rewritten in one line" \
  "< Version: 1.0.0+cu124|> Version: 1.0.0|" \
  "$({ diff <(unzip -p "lin/$L" 'torchlike-1.0.0+cu124.dist-info/METADATA') \
          <(unzip -p "lout/$S" torchlike-1.0.0.dist-info/METADATA) || true; } | grep '^[<>]' | tr '\n' '|')"
expect_ok "verify" "$PKGTOOL" wheel verify "lout/$S"
expect_ok "zipfile + WheelFile" "${CHECK[@]}" read "lout/$S"
expect_eq "renamed members are raw copies" \
  "torchlike-1.0.0.dist-info/METADATA torchlike-1.0.0.dist-info/RECORD " \
  "$("${CHECK[@]}" raw-diff "lin/$L" "lout/$S" \
     '{"torchlike-1.0.0.dist-info/WHEEL": "torchlike-1.0.0+cu124.dist-info/WHEEL",
       "torchlike-1.0.0.dist-info/LICENSE": "torchlike-1.0.0+cu124.dist-info/LICENSE",
       "torchlike-1.0.0.data/scripts/torchlike-run": "torchlike-1.0.0+cu124.data/scripts/torchlike-run"}' \
     | sort | tr '\n' ' ')"
pip_install_check "lout/$S" torchlike venv
expect_eq "installed version" \
  "1.0.0" "$(venv/bin/python -c 'import importlib.metadata as m; print(m.version("torchlike"))')"

finish
