#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# `pkgtool wheel update`: member-level edits of an existing wheel. Untouched
# members keep their compressed bytes (proven by updating a level-1 wheel at
# level 9: their raw bytes must still equal the input's), changed and added
# members carry the new content, removed ones are gone, RECORD matches
# (ours, zipfile + WheelFile), and the result installs with pip.
source "$(dirname "$0")/lib/common.sh"
require_tools gcc
make_scratch
py_facts
cd "$SCRATCH"
export SOURCE_DATE_EPOCH=1600000000

make_tree tree demo 1.0 200000
W="demo-1.0-$PYTAG-$PYTAG-$PLATTAG.whl"
mkdir in out
expect_ok "pack (level 1)" "$PKGTOOL" wheel pack tree -d in -z 1

printf 'def greet(who):\n    return "hello " + who\n# updated\n' >pure.py
printf 'new file\n' >extra.txt
case_begin "set, add, remove"
expect_ok "update" "$PKGTOOL" wheel update "in/$W" -d out -z 9 \
  --set demo/pure.py=pure.py --add demo/extra.txt=extra.txt --remove demo/data/table.csv
expect_ok "verify" "$PKGTOOL" wheel verify "out/$W"
expect_ok "zipfile + WheelFile" "${CHECK[@]}" read "out/$W"
"${PY[@]}" - "in/$W" "out/$W" >facts.txt <<'PY'
import sys, zipfile
def raw(z, info):
    # The compressed bytes of a member: after its local header.
    z.fp.seek(info.header_offset)
    h = z.fp.read(30)
    n, e = int.from_bytes(h[26:28], "little"), int.from_bytes(h[28:30], "little")
    z.fp.seek(info.header_offset + 30 + n + e)
    return z.fp.read(info.compress_size)
a, b = zipfile.ZipFile(sys.argv[1]), zipfile.ZipFile(sys.argv[2])
ia = {i.filename: i for i in a.infolist()}
ib = {i.filename: i for i in b.infolist()}
for name in sorted(ia.keys() | ib.keys()):
    if name not in ib:
        print("removed", name)
    elif name not in ia:
        print("added", name, b.read(name).decode().strip())
    elif raw(a, ia[name]) == raw(b, ib[name]):
        print("raw", name)
    else:
        print("changed", name)
print("content", b.read("demo/pure.py").decode().splitlines()[-1].strip())
PY
expect_eq "pure.py content" 'content # updated' "$(grep '^content' facts.txt)"
expect_eq "removed" "removed demo/data/table.csv" "$(grep '^removed' facts.txt)"
expect_eq "added" "added demo/extra.txt new file" "$(grep '^added' facts.txt)"
expect_eq "changed: the edit and RECORD only" "changed demo-1.0.dist-info/RECORD changed demo/pure.py " \
  "$(grep '^changed' facts.txt | tr '\n' ' ')"
expect_eq "untouched members copied raw" "8" "$(grep -c '^raw' facts.txt)"
pip_install_check "out/$W" demo venv

case_begin "rename and errors"
mkdir renamed
expect_ok "rename" "$PKGTOOL" wheel update "in/$W" -o "renamed/$W" --rename demo/pure.py=demo/pure2.py
expect_ok "verify renamed" "$PKGTOOL" wheel verify "renamed/$W"
expect_eq "renamed member" "['demo/pure2.py']" "$("${PY[@]}" -c 'import sys, zipfile; print(sorted(n for n in zipfile.ZipFile(sys.argv[1]).namelist() if "pure" in n))' "renamed/$W")"
expect_status 2 "absent member" "$PKGTOOL" wheel update "in/$W" -d out2 --set demo/nope.py=pure.py
expect_status 2 "output = input" "$PKGTOOL" wheel update "in/$W" -d in --set demo/pure.py=pure.py
expect_status 2 "bad pair" "$PKGTOOL" wheel update "in/$W" -d out2 --set demo/pure.py
expect_status 2 "missing file" "$PKGTOOL" wheel update "in/$W" -d out2 --set demo/pure.py=does-not-exist
[[ ! -e out2/$W ]] && pass || fail "failed updates left out2/$W"
mkdir inplace && cp "in/$W" inplace/
expect_ok "in place" "$PKGTOOL" wheel update "inplace/$W" --in-place --set demo/pure.py=pure.py
expect_ok "verify in place" "$PKGTOOL" wheel verify "inplace/$W"
expect_eq "in-place content" "# updated" "$("${PY[@]}" -c 'import sys, zipfile; print(zipfile.ZipFile(sys.argv[1]).read("demo/pure.py").decode().splitlines()[-1])' "inplace/$W")"
finish
