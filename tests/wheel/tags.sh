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

make_tree tree demo 1.0
W="demo-1.0-$PYTAG-$PYTAG-$PLATTAG.whl"
mkdir in
"$PKGTOOL" wheel pack tree -d in >/dev/null

case_begin "platform tag replaced"
mkdir out
printed=$("$PKGTOOL" wheel tags "in/$W" --platform-tag manylinux_2_17_x86_64.manylinux2014_x86_64 -d out)
M="demo-1.0-$PYTAG-$PYTAG-manylinux2014_x86_64.manylinux_2_17_x86_64.whl"
check_eq "printed name" "$printed" "$M"
check "file exists" test -f "out/$M"
check_eq "WHEEL Tag lines" "$(unzip -p "out/$M" demo-1.0.dist-info/WHEEL | grep '^Tag:' | tr '\n' ' ')" \
  "Tag: $PYTAG-$PYTAG-manylinux2014_x86_64 Tag: $PYTAG-$PYTAG-manylinux_2_17_x86_64 "
check_eq "other WHEEL lines kept" "$(unzip -p "out/$M" demo-1.0.dist-info/WHEEL | grep -v '^Tag:')" \
  "$(grep -v '^Tag:' tree/demo-1.0.dist-info/WHEEL)"
check "verify" "$PKGTOOL" wheel verify "out/$M"
check "zipfile + WheelFile" "${CHECK[@]}" read "out/$M"
check "unzip -t" unzip -tq "out/$M"
check_eq "raw copies: only WHEEL and RECORD differ" \
  "$("${CHECK[@]}" raw-diff "in/$W" "out/$M" | sort | tr '\n' ' ')" \
  "demo-1.0.dist-info/RECORD demo-1.0.dist-info/WHEEL "
check_eq "same member order" "$("${CHECK[@]}" members "out/$M")" "$("${CHECK[@]}" members "in/$W")"
check "input kept" test -f "in/$W"

case_begin "+x / -x edits and --build"
mkdir out2
printed=$("$PKGTOOL" wheel tags "in/$W" --python-tag +py3 --abi-tag -none --platform-tag +any --build 5 -d out2)
check_eq "added tags" "$printed" "demo-1.0-5-$PYTAG.py3-$PYTAG-any.$PLATTAG.whl"
check_eq "WHEEL Build" "$(unzip -p "out2/$printed" demo-1.0.dist-info/WHEEL | grep '^Build:')" "Build: 5"
check_eq "four Tag lines" "$(unzip -p "out2/$printed" demo-1.0.dist-info/WHEEL | grep -c '^Tag:')" "4"
check "verify" "$PKGTOOL" wheel verify "out2/$printed"
printed2=$("$PKGTOOL" wheel tags "out2/$printed" --python-tag -py3 --platform-tag -any --build "" -d out2)
check_eq "removed again" "$printed2" "$W"
check "and verifies" "$PKGTOOL" wheel verify "out2/$printed2"
check_status 2 "removing every tag is refused" "$PKGTOOL" wheel tags "in/$W" --abi-tag -"$PYTAG" -d out2
check_status 2 "same name refused" "$PKGTOOL" wheel tags "in/$W"
check_status 2 "bad build tag" "$PKGTOOL" wheel tags "in/$W" --build abc -d out2

case_begin "--in-place and --remove"
mkdir ip
cp "in/$W" ip/
before=$(sha256sum "ip/$W")
check "in place, same name" "$PKGTOOL" wheel tags "ip/$W" --in-place --build ""
check "still verifies" "$PKGTOOL" wheel verify "ip/$W"
printed=$("$PKGTOOL" wheel tags "ip/$W" --platform-tag "$PLATTAG.any" --remove)
check "input removed" test ! -e "ip/$W"
check "output present" test -f "ip/$printed"
check_eq "hash unchanged by the no-op rewrite" "$(sha256sum <"in/$W")" "$(cut -d' ' -f1 <<<"$before")  -"

case_begin "strip local version"
make_tree ltree torchlike "1.0.0+cu124"
L="torchlike-1.0.0+cu124-$PYTAG-$PYTAG-$PLATTAG.whl"
S="torchlike-1.0.0-$PYTAG-$PYTAG-$PLATTAG.whl"
mkdir lin lout
"$PKGTOOL" wheel pack ltree -d lin >/dev/null
check "local-version input" test -f "lin/$L"
printed=$("$PKGTOOL" wheel tags "lin/$L" --strip-local-version -d lout)
check_eq "printed name" "$printed" "$S"
members=$("${CHECK[@]}" members "lout/$S")
check "no old dist-info left" test -z "$(grep -F '1.0.0+cu124' <<<"$members" || true)"
check "dist-info renamed" grep -q '^torchlike-1.0.0.dist-info/METADATA$' <<<"$members"
check ".data renamed" grep -q '^torchlike-1.0.0.data/scripts/torchlike-run$' <<<"$members"
check_eq "METADATA rewritten in one line" \
  "$({ diff <(unzip -p "lin/$L" 'torchlike-1.0.0+cu124.dist-info/METADATA') \
          <(unzip -p "lout/$S" torchlike-1.0.0.dist-info/METADATA) || true; } | grep '^[<>]' | tr '\n' '|')" \
  "< Version: 1.0.0+cu124|> Version: 1.0.0|"
check "verify" "$PKGTOOL" wheel verify "lout/$S"
check "zipfile + WheelFile" "${CHECK[@]}" read "lout/$S"
check_eq "renamed members are raw copies" \
  "$("${CHECK[@]}" raw-diff "lin/$L" "lout/$S" \
     '{"torchlike-1.0.0.dist-info/WHEEL": "torchlike-1.0.0+cu124.dist-info/WHEEL",
       "torchlike-1.0.0.dist-info/LICENSE": "torchlike-1.0.0+cu124.dist-info/LICENSE",
       "torchlike-1.0.0.data/scripts/torchlike-run": "torchlike-1.0.0+cu124.data/scripts/torchlike-run"}' \
     | sort | tr '\n' ' ')" \
  "torchlike-1.0.0.dist-info/METADATA torchlike-1.0.0.dist-info/RECORD "
pip_install_check "lout/$S" torchlike venv
check_eq "installed version" \
  "$(venv/bin/python -c 'import importlib.metadata as m; print(m.version("torchlike"))')" "1.0.0"

finish
