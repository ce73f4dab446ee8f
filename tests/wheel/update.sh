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
check "pack (level 1)" "$PKGTOOL" wheel pack tree -d in -z 1

printf 'def greet(who):\n    return "hello " + who\n# updated\n' >pure.py
printf 'new file\n' >extra.txt
case_begin "set, add, remove"
check "update" "$PKGTOOL" wheel update "in/$W" -d out -z 9 \
  --set demo/pure.py=pure.py --add demo/extra.txt=extra.txt --remove demo/data/table.csv
check "verify" "$PKGTOOL" wheel verify "out/$W"
check "zipfile + WheelFile" "${CHECK[@]}" read "out/$W"
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
check_eq "pure.py content" "$(grep '^content' facts.txt)" 'content # updated'
check_eq "removed" "$(grep '^removed' facts.txt)" "removed demo/data/table.csv"
check_eq "added" "$(grep '^added' facts.txt)" "added demo/extra.txt new file"
check_eq "changed: the edit and RECORD only" "$(grep '^changed' facts.txt | tr '\n' ' ')" \
  "changed demo-1.0.dist-info/RECORD changed demo/pure.py "
check_eq "untouched members copied raw" "$(grep -c '^raw' facts.txt)" "8"
pip_install_check "out/$W" demo venv

case_begin "rename and errors"
mkdir renamed
check "rename" "$PKGTOOL" wheel update "in/$W" -o "renamed/$W" --rename demo/pure.py=demo/pure2.py
check "verify renamed" "$PKGTOOL" wheel verify "renamed/$W"
check_eq "renamed member" "$("${PY[@]}" -c 'import sys, zipfile; print(sorted(n for n in zipfile.ZipFile(sys.argv[1]).namelist() if "pure" in n))' "renamed/$W")" "['demo/pure2.py']"
check_status 2 "absent member" "$PKGTOOL" wheel update "in/$W" -d out2 --set demo/nope.py=pure.py
check_status 2 "output = input" "$PKGTOOL" wheel update "in/$W" -d in --set demo/pure.py=pure.py
check_status 2 "bad pair" "$PKGTOOL" wheel update "in/$W" -d out2 --set demo/pure.py
check_status 2 "missing file" "$PKGTOOL" wheel update "in/$W" -d out2 --set demo/pure.py=does-not-exist
[[ ! -e out2/$W ]] && pass || fail "failed updates left out2/$W"
mkdir inplace && cp "in/$W" inplace/
check "in place" "$PKGTOOL" wheel update "inplace/$W" --in-place --set demo/pure.py=pure.py
check "verify in place" "$PKGTOOL" wheel verify "inplace/$W"
check_eq "in-place content" "$("${PY[@]}" -c 'import sys, zipfile; print(zipfile.ZipFile(sys.argv[1]).read("demo/pure.py").decode().splitlines()[-1])' "inplace/$W")" "# updated"
finish
