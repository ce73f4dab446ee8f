#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# `wheel unpack` and `check_binary` inflate each member once (hashed while
# extracted, RECORD checked against those digests): every tampering that
# `wheel verify` finds is still found. For each kind, check_binary's
# integrity check reports exactly verify's findings, and unpack refuses the
# wheel (exit 2, naming verify's first finding) leaving nothing at all in
# the destination (no target, no staging directory). A member whose stored
# bytes no longer match its CRC-32 is refused by both. On the good wheel
# check_binary hashes as many bytes as verify does and unpack writes exactly
# the members' bytes.
source "$(dirname "$0")/lib/common.sh"
require_tools gcc
: "${CHECK_BINARY:?CHECK_BINARY must point at check_binary (run through ctest)}"
make_scratch
py_facts
cd "$SCRATCH"

pack_demo_wheel good

# verify's finding kinds, sorted; check_binary's integrity problems' kinds.
# (Both exit 1 on a finding: their JSON is read once they are done.)
verify_kinds() {
  local json
  json=$("$PKGTOOL" wheel verify --json "$1") || true
  "${PY[@]}" -c 'import json,sys
print(" ".join(sorted(f["kind"] for w in json.load(sys.stdin) for f in w.get("findings", []))))' <<<"$json"
}
check_integrity() {  # WHEEL → "STATUS KIND..." of the integrity check
  local json
  json=$("$CHECK_BINARY" "$1" --no-runtime --json) || true
  "${PY[@]}" -c 'import json,sys
c = next(c for c in json.load(sys.stdin)["checks"] if c["id"] == "integrity")
print(" ".join([c["status"]] + sorted(p["message"].split(":")[0] for p in c.get("problems", []))))' <<<"$json"
}

case_begin "good wheel"
expect_eq "integrity passes" "pass" "$(check_integrity "good/$W")"
summary=$("$CHECK_BINARY" "good/$W" --no-runtime --json | "${PY[@]}" -c 'import json,sys
print(next(c for c in json.load(sys.stdin)["checks"] if c["id"] == "integrity")["summary"])')
want=$("$PKGTOOL" wheel verify --json "good/$W" | "${PY[@]}" -c 'import json,sys
r = json.load(sys.stdin)[0]; print("RECORD: %d members, %d bytes hashed" % (r["members"], r["hashed_bytes"]))')
expect_ok "check_binary hashed what verify hashes ($want)" grep -qF -- "$want" <<<"$summary"
mkdir u-good
expect_ok "unpack" "$PKGTOOL" wheel unpack "good/$W" -d u-good
expect_ok "unpacked files are the members' bytes" "${PY[@]}" -c '
import sys, zipfile, pathlib
root = pathlib.Path(sys.argv[2])
with zipfile.ZipFile(sys.argv[1]) as z:
    for i in z.infolist():
        if not i.is_dir():
            assert (root / i.filename).read_bytes() == z.read(i), i.filename
    names = {i.filename for i in z.infolist() if not i.is_dir()}
files = {str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()}
assert files == names, (files ^ names)' "good/$W" u-good/demo-1.0

for t in content size missing extra md5 norecord record-hash two-dist-info duplicate-row; do
  case_begin "tampered: $t"
  mkdir "t-$t" "u-$t"
  "${CHECK[@]}" tamper "$t" "good/$W" "t-$t/$W" >/dev/null
  want=$(verify_kinds "t-$t/$W")
  expect_ok "verify finds something ($want)" test -n "$want"
  expect_eq "check_binary integrity reports verify's findings" "fail $want" \
    "$(check_integrity "t-$t/$W")"
  rc=0
  "$PKGTOOL" wheel unpack "t-$t/$W" -d "u-$t" 2>err.txt || rc=$?
  expect_eq "unpack exit status" "2" "$rc"
  expect_ok "unpack names verify's first finding" grep -q "RECORD check failed.*first: ${want%% *}" err.txt
  expect_eq "nothing left in the destination" "" "$(ls -A "u-$t")"
done

case_begin "a member whose bytes fail their CRC-32"
mkdir t-crc u-crc
target=$("${CHECK[@]}" tamper crc "good/$W" "t-crc/$W")
expect_eq "verify: corrupt member" "corrupt-member" "$(verify_kinds "t-crc/$W")"
rc=0
"$PKGTOOL" wheel unpack "t-crc/$W" -d u-crc 2>err.txt || rc=$?
expect_eq "unpack exit status" "2" "$rc"
expect_ok "unpack names the corrupt member" grep -q "first: corrupt-member: $target" err.txt
expect_eq "nothing left in the destination" "" "$(ls -A u-crc)"
rc=0
"$CHECK_BINARY" "t-crc/$W" --no-runtime >out.txt 2>err.txt || rc=$?
expect_eq "check_binary: bad input" "2" "$rc"
expect_ok "check_binary names the member and the CRC" grep -q "$target: CRC-32 mismatch" err.txt
rc=0
"$PKGTOOL" wheel unpack "t-crc/$W" -d u-crc --no-verify 2>err.txt || rc=$?
expect_eq "unpack --no-verify still refuses a corrupt member" "2" "$rc"
expect_eq "nothing left in the destination" "" "$(ls -A u-crc)"

finish
