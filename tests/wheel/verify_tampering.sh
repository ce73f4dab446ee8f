#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# `pkgtool wheel verify` catches each tampering separately, with exit 1 and
# exactly the expected finding (checked in --json): modified content with a
# stale RECORD, a wrong RECORD size, a member listed but missing, a member
# present but unlisted, tags in the file name that WHEEL doesn't declare, an
# md5 row, no RECORD, two .dist-info directories. An unreadable file is exit 2; a good wheel exit 0, and
# several wheels at once give the worst status.
source "$(dirname "$0")/lib/common.sh"
require_tools gcc
make_scratch
py_facts
cd "$SCRATCH"

pack_demo_wheel good
expect_ok "good wheel verifies" "$PKGTOOL" wheel verify "good/$W"

# kinds KIND... from a --json report, sorted and space-separated.
kinds() {
  "${PY[@]}" -c 'import json,sys; r=json.load(sys.stdin)
print(" ".join(sorted(f["kind"] for w in r for f in w.get("findings", []))))'
}
member_of() {
  "${PY[@]}" -c 'import json,sys; r=json.load(sys.stdin)
print(" ".join(f["member"] for w in r for f in w.get("findings", [])))'
}

# expect TAMPER KINDS: tamper a copy and check verify's findings.
expect() {
  local tamper=$1 want=$2 dir target json rc=0
  case_begin "$tamper → $want"
  dir=t-$tamper
  mkdir "$dir"
  target=$("${CHECK[@]}" tamper "$tamper" "good/$W" "$dir/$W")
  json=$("$PKGTOOL" wheel verify --json "$dir/$W") || rc=$?
  expect_eq "exit status" "1" "$rc"
  expect_eq "findings" "$want" "$(kinds <<<"$json")"
  case $want in
    hash-mismatch | size-mismatch | missing-member | bad-hash-algorithm)
      expect_eq "finding names the member" "$target" "$(member_of <<<"$json")" ;;
    unlisted-member)
      expect_eq "finding names the member" "intruder.py" "$(member_of <<<"$json")" ;;
  esac
  # The text report says the same.
  rc=0
  "$PKGTOOL" wheel verify "$dir/$W" >text.out || rc=$?
  expect_ok "text report names $want" grep -q -- "$want" text.out
}

expect content hash-mismatch
expect size size-mismatch
expect missing missing-member
expect extra unlisted-member
expect md5 bad-hash-algorithm
expect norecord record-missing
expect two-dist-info dist-info-count
expect duplicate-row duplicate-row

# No laundering: tools that rewrite a wheel (tags, update, repair) refuse one that
# fails verification, and with --allow-unverified the output still fails it
# (an unlisted or doubly listed member stays unlisted, a stale hash stale).
printf 'new\n' >added.txt
for t in extra norecord content duplicate-row; do
  case_begin "rewriting a wheel that fails verify: $t"
  mkdir -p "tags-$t" "upd-$t"
  expect_status 2 "tags refuses it" "$PKGTOOL" wheel tags "t-$t/$W" --build 7 -d "tags-$t"
  expect_ok "tags wrote nothing" test -z "$(ls -A "tags-$t")"
  expect_status 2 "update refuses it" "$PKGTOOL" wheel update "t-$t/$W" \
    --add added.txt=added.txt -o "upd-$t/$W"
  expect_ok "update wrote nothing" test -z "$(ls -A "upd-$t")"
  expect_ok "tags --allow-unverified writes it" "$PKGTOOL" wheel tags "t-$t/$W" \
    --build 7 -d "tags-$t" --allow-unverified
  expect_status 1 "which still fails verify" "$PKGTOOL" wheel verify "tags-$t"/*.whl
  expect_ok "update --allow-unverified writes it" "$PKGTOOL" wheel update "t-$t/$W" \
    --add added.txt=added.txt -o "upd-$t/$W" --allow-unverified
  expect_status 1 "which still fails verify" "$PKGTOOL" wheel verify "upd-$t/$W"
  mkdir -p "rep-$t"
  expect_status 2 "repair refuses it" "$PKGTOOL" repair "t-$t/$W" -w "rep-$t" --plat linux
  expect_ok "repair wrote nothing" test -z "$(ls -A "rep-$t")"
  expect_ok "repair --allow-unverified writes it" "$PKGTOOL" repair "t-$t/$W" -w "rep-$t" \
    --plat linux --allow-unverified
  expect_status 1 "which still fails verify" "$PKGTOOL" wheel verify "rep-$t"/*.whl
done

case_begin "repair of a wheel whose ELF member fails RECORD"
# The repair's analysis decodes each ELF member whole once and the RECORD
# check takes that pass's SHA-256 (MemberView::digest()): it must still
# catch a changed byte (here in the library's .comment).
mkdir -p t-elf rep-elf rep-elf2
target=$("${CHECK[@]}" tamper elf-content "good/$W" "t-elf/$W")
rc=0
json=$("$PKGTOOL" wheel verify --json "t-elf/$W") || rc=$?
expect_eq "verify finds it" "1 hash-mismatch $target" "$rc $(kinds <<<"$json") $(member_of <<<"$json")"
rc=0
"$PKGTOOL" repair "t-elf/$W" -w rep-elf --plat linux >rep-elf.out 2>&1 || rc=$?
expect_eq "repair refuses it (exit 2)" "2" "$rc"
expect_ok "naming the member" grep -q -- "$target" rep-elf.out
expect_ok "repair wrote nothing" test -z "$(ls -A rep-elf)"
expect_ok "repair --allow-unverified writes it" "$PKGTOOL" repair "t-elf/$W" -w rep-elf2 \
  --plat linux --allow-unverified
expect_status 1 "which still fails verify" "$PKGTOOL" wheel verify rep-elf2/*.whl

case_begin "expected vs actual values"
json=$("$PKGTOOL" wheel verify --json "t-content/$W") || true
expect_ok "hash finding carries both hashes" "${PY[@]}" -c '
import json,sys; f=json.load(sys.stdin)[0]["findings"][0]
assert f["expected"].startswith("sha256=") and f["actual"].startswith("sha256="), f
assert f["expected"] != f["actual"], f' <<<"$json"

case_begin "tags in the file name don't match WHEEL"
mkdir renamed
R="demo-1.0-$PYTAG-$PYTAG-manylinux_2_17_x86_64.whl"
cp "good/$W" "renamed/$R"
rc=0
json=$("$PKGTOOL" wheel verify --json "renamed/$R") || rc=$?
expect_eq "exit status" "1" "$rc"
expect_eq "findings" "tag-mismatch" "$(kinds <<<"$json")"
mkdir renamed2
cp "good/$W" "renamed2/other-1.0-$PYTAG-$PYTAG-$PLATTAG.whl"
rc=0
json=$("$PKGTOOL" wheel verify --json "renamed2/other-1.0-$PYTAG-$PYTAG-$PLATTAG.whl") || rc=$?
expect_eq "name mismatch exit" "1" "$rc"
expect_eq "name mismatch findings" "name-mismatch" "$(kinds <<<"$json")"

case_begin "python's WheelFile agrees on the content tampering"
expect_status 1 "WheelFile rejects modified content" "${CHECK[@]}" read "t-content/$W"

case_begin "unreadable and mixed"
head -c 200 "good/$W" >"trunc-$W"
expect_status 2 "truncated wheel" "$PKGTOOL" wheel verify "trunc-$W"
expect_status 2 "missing file" "$PKGTOOL" wheel verify nothere.whl
expect_status 1 "good + tampered" "$PKGTOOL" wheel verify "good/$W" "t-md5/$W"
expect_status 2 "good + unreadable" "$PKGTOOL" wheel verify "good/$W" "trunc-$W"
expect_status 2 "unpack refuses a tampered wheel" "$PKGTOOL" wheel unpack "t-content/$W" -d x
expect_ok "nothing unpacked" test ! -e x/demo-1.0
expect_ok "--no-verify unpacks it" "$PKGTOOL" wheel unpack "t-content/$W" -d x --no-verify

finish
