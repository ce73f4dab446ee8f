#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# `pkgtool wheel pack --reuse OLD.whl`: after changing files, members whose
# content is unchanged are copied raw from OLD (their compressed bytes are
# OLD's, proven by packing OLD at another deflate level), changed ones are
# compressed anew; the result verifies (ours, zipfile, WheelFile) and, when
# OLD was packed at the same level, is byte-identical to a fresh pack. A
# RECORD row in OLD that doesn't match the content prevents reuse.
source "$(dirname "$0")/lib/common.sh"
require_tools gcc
make_scratch
py_facts
cd "$SCRATCH"
export SOURCE_DATE_EPOCH=1600000000

make_tree tree demo 1.0 3000000
W="demo-1.0-$PYTAG-$PYTAG-$PLATTAG.whl"
MEMBERS=11 # 10 files + RECORD
mkdir old old1
expect_ok "pack old (level 6)" "$PKGTOOL" wheel pack tree -d old
expect_ok "pack old (level 1)" "$PKGTOOL" wheel pack tree -d old1 -z 1

case_begin "nothing changed"
mkdir same
out=$("$PKGTOOL" wheel pack tree -d same --reuse "old/$W")
expect_eq "all reused" "Reused $((MEMBERS - 1)) of $MEMBERS members from old/$W" "$(grep Reused <<<"$out")"
expect_ok "identical to the old wheel" cmp "old/$W" "same/$W"

# Change two files: one to a new size, one in place (same size).
sed -i 's/hello/good morning/' tree/demo/pure.py
sed -i 's/alpha,1/alpha,3/' tree/demo/data/table.csv

case_begin "two files changed, same level"
mkdir new fresh
out=$("$PKGTOOL" wheel pack tree -d new --reuse "old/$W" -j 2)
expect_eq "reused count" "Reused $((MEMBERS - 3)) of $MEMBERS members from old/$W" "$(grep Reused <<<"$out")"
expect_ok "fresh pack" "$PKGTOOL" wheel pack tree -d fresh
expect_ok "equals a fresh pack" cmp "new/$W" "fresh/$W"
expect_ok "verify" "$PKGTOOL" wheel verify "new/$W"
expect_ok "zipfile + WheelFile" "${CHECK[@]}" read "new/$W"

case_begin "old packed at level 1: raw copies keep OLD's bytes"
mkdir new1
out=$("$PKGTOOL" wheel pack tree -d new1 --reuse "old1/$W")
expect_eq "reused count" "Reused $((MEMBERS - 3)) of $MEMBERS members from old1/$W" "$(grep Reused <<<"$out")"
expect_eq "only the changed members and RECORD differ from OLD" \
  "demo-1.0.dist-info/RECORD demo/data/table.csv demo/pure.py " \
  "$("${CHECK[@]}" raw-diff "old1/$W" "new1/$W" | sort | tr '\n' ' ')"
expect_eq "changed members are compressed anew (= fresh level 6 bytes)" \
  "0" "$("${CHECK[@]}" raw-diff "fresh/$W" "new1/$W" | grep -c -e pure.py -e table.csv || true)"
expect_ok "big member really is the level-1 copy (differs from level 6)" \
  grep -q big.dat <<<"$("${CHECK[@]}" raw-diff "fresh/$W" "new1/$W")"
expect_ok "verify" "$PKGTOOL" wheel verify "new1/$W"
expect_ok "zipfile + WheelFile" "${CHECK[@]}" read "new1/$W"
expect_ok "contents equal the fresh pack" "${CHECK[@]}" compare "fresh/$W" "new1/$W"

case_begin "OLD's RECORD disagrees with a member: not reused"
mkdir bad out3
target=$("${CHECK[@]}" tamper record-hash "fresh/$W" "bad/$W")
out=$("$PKGTOOL" wheel pack tree -d out3 --reuse "bad/$W")
expect_eq "reused count" "Reused $((MEMBERS - 2)) of $MEMBERS members from bad/$W" "$(grep Reused <<<"$out")"
expect_ok "verify" "$PKGTOOL" wheel verify "out3/$W"
expect_eq "$target recompressed by us" \
  "0" "$("${CHECK[@]}" raw-diff "fresh/$W" "out3/$W" | grep -c "$target" || true)"

case_begin "bad --reuse input"
printf 'not a zip' >junk.whl
expect_status 2 "unreadable OLD" "$PKGTOOL" wheel pack tree -d out3 --reuse junk.whl

finish
