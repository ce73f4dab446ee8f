#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# `pkgtool wheel pack` on a tree with a compiled C extension, a pure module,
# package data (one name needing CSV quoting), an executable data script and
# a .dist-info: the result is read back by Python's zipfile (testzip) and
# wheel's WheelFile (every member checked against RECORD), `unzip -t` and
# bsdtar; same name, member order and contents as `python3 -m wheel pack`; pip
# installs it into a fresh venv and the extension and script work; unpack →
# pack → unpack round trips; packing is deterministic (twice, -j1 vs -j2,
# SOURCE_DATE_EPOCH); --build-number; bad trees are refused with exit 2.
source "$(dirname "$0")/lib/common.sh"
require_tools gcc unzip
make_scratch
py_facts
cd "$SCRATCH"

make_tree tree demo 1.0
touch -d @1700000000 tree/demo/pure.py
WANT="demo-1.0-$PYTAG-$PYTAG-$PLATTAG.whl"

case_begin "pack and read back"
mkdir ours
expect_ok "pkgtool wheel pack" "$PKGTOOL" wheel pack tree -d ours -j 2
if [[ ! -f ours/$WANT ]]; then
  fail "expected ours/$WANT, found: $(ls ours)"
  finish
fi
expect_ok "zipfile testzip + WheelFile reads every member" "${CHECK[@]}" read "ours/$WANT"
expect_ok "unzip -t" unzip -tq "ours/$WANT"
if command -v bsdtar >/dev/null; then
  expect_eq "bsdtar lists the same members" "$("${CHECK[@]}" members "ours/$WANT")" "$(bsdtar -tf "ours/$WANT")"
fi
expect_ok "pkgtool wheel verify" "$PKGTOOL" wheel verify "ours/$WANT"
modes=$("${CHECK[@]}" modes "ours/$WANT")
expect_eq "script mode" "0o755" "$(grep -- '-run ' <<<"$modes" | cut -d' ' -f2)"
expect_eq "module mode" "0o644" "$(grep 'pure.py ' <<<"$modes" | cut -d' ' -f2)"
# Without SOURCE_DATE_EPOCH each member keeps its file's mtime (DOS time, UTC).
expect_eq "mtime kept" "demo/pure.py $(date -u -d @1700000000 '+%Y-%m-%d %H:%M:%S')" \
  "$("${CHECK[@]}" dates "ours/$WANT" | grep pure.py)"
record=$("${CHECK[@]}" record "ours/$WANT")
expect_ok "RECORD quotes the odd name" grep -q 'odd, \\"name\\".txt' <<<"$record"
info=$("$PKGTOOL" wheel info "ours/$WANT" --json)
expect_eq "info members" "demo 1.0 10 ['$PYTAG-$PYTAG-$PLATTAG']" \
  "$("${PY[@]}" -c 'import json,sys; j=json.load(sys.stdin); print(j["name"], j["version"], j["members"], j["tags"])' <<<"$info")"

case_begin "same as python3 -m wheel pack"
"${PY[@]}" -c 'import wheel' || missing "python3-wheel not installed"
mkdir ref
"${PY[@]}" -m wheel pack tree -d ref >/dev/null
expect_eq "file name" "$WANT" "$(ls ref)"
expect_ok "member order and contents" "${CHECK[@]}" compare "ref/$WANT" "ours/$WANT"

case_begin "pip install into a fresh venv"
pip_install_check "ours/$WANT" demo venv

case_begin "unpack, pack, unpack round trip"
expect_ok "unpack" "$PKGTOOL" wheel unpack "ours/$WANT" -d u1
expect_eq "unpack dir" "demo-1.0" "$(ls u1)"
expect_ok "unpacked tree equals the source (minus RECORD)" diff -r --exclude=RECORD tree u1/demo-1.0
expect_eq "unpacked script keeps exec bit" "755" "$(stat -c %a u1/demo-1.0/demo-1.0.data/scripts/demo-run)"
mkdir re
expect_ok "repack" "$PKGTOOL" wheel pack u1/demo-1.0 -d re
expect_ok "unpack again" "$PKGTOOL" wheel unpack "re/$WANT" -d u2
expect_ok "identical trees" diff -r u1 u2
expect_eq "identical modes" "$(cd u2 && find . -printf '%p %m\n' | sort)" "$(cd u1 && find . -printf '%p %m\n' | sort)"

case_begin "deterministic output"
export SOURCE_DATE_EPOCH=1600000000
mkdir d1 d2 d3
expect_ok "pack -j1" "$PKGTOOL" wheel pack tree -d d1 -j 1
expect_ok "pack -j2" "$PKGTOOL" wheel pack tree -d d2 -j 2
expect_ok "pack again -j2" "$PKGTOOL" wheel pack tree -d d3 -j 2
expect_ok "-j1 vs -j2 identical bytes" cmp "d1/$WANT" "d2/$WANT"
expect_ok "twice identical bytes" cmp "d2/$WANT" "d3/$WANT"
expect_eq "SOURCE_DATE_EPOCH used" "$(date -u -d @1600000000 '+%Y-%m-%d %H:%M:%S')" \
  "$("${CHECK[@]}" dates "d1/$WANT" | awk '{print $(NF-1), $NF}' | sort -u)"
unset SOURCE_DATE_EPOCH
SOURCE_DATE_EPOCH=yesterday expect_status 2 "bad SOURCE_DATE_EPOCH" "$PKGTOOL" wheel pack tree -d d1

case_begin "--build-number"
cp tree/demo-1.0.dist-info/WHEEL wheel.before
mkdir b
expect_ok "pack --build-number 7" "$PKGTOOL" wheel pack tree -d b --build-number 7
B="demo-1.0-7-$PYTAG-$PYTAG-$PLATTAG.whl"
expect_ok "build tag in the name" test -f "b/$B"
expect_eq "WHEEL Build" "Build: 7" "$(unzip -p "b/$B" demo-1.0.dist-info/WHEEL | grep '^Build:')"
expect_ok "source WHEEL untouched" cmp wheel.before tree/demo-1.0.dist-info/WHEEL
expect_ok "verify" "$PKGTOOL" wheel verify "b/$B"
expect_status 2 "invalid build number" "$PKGTOOL" wheel pack tree -d b --build-number x1

case_begin "bad trees"
mkdir -p bad1/x bad2/a-1.dist-info bad2/b-1.dist-info bad3/c-1.dist-info
expect_status 2 "no dist-info" "$PKGTOOL" wheel pack bad1 -d b
expect_status 2 "two dist-infos" "$PKGTOOL" wheel pack bad2 -d b
expect_status 2 "no WHEEL" "$PKGTOOL" wheel pack bad3 -d b
printf 'Wheel-Version: 1.0\n' >bad3/c-1.dist-info/WHEEL
expect_status 2 "WHEEL without tags" "$PKGTOOL" wheel pack bad3 -d b
expect_status 2 "missing directory" "$PKGTOOL" wheel pack nowhere -d b
cp -r tree linked
ln -s ../demo linked/demo/loop
expect_status 2 "directory symlink refused" "$PKGTOOL" wheel pack linked -d b
rm linked/demo/loop
ln -s pure.py linked/demo/alias.py
mkdir l
expect_ok "file symlink followed" "$PKGTOOL" wheel pack linked -d l
expect_eq "symlinked content stored" "$(cat tree/demo/pure.py)" "$(unzip -p "l/$WANT" demo/alias.py)"

finish
