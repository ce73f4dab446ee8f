# SPDX-License-Identifier: BSD-3-Clause
# Hostile archives: `pkgtool zip extract` must refuse each with exit 2 and an
# error naming the member, creating nothing at the target and nothing outside
# it; corrupt members make `zip test` exit 1 with one line per failure and
# unreadable archives exit 2; a symlink already in the target must not
# redirect a write; limits from the command line are enforced.
source "$(dirname "$0")/zipcli_lib.sh"

H=$SCRATCH/hostile
"${TOOL[@]}" hostile "$H"
rm -f /tmp/zipcli-absolute-evil.txt

W=$SCRATCH/work
mkdir -p "$W/sub"
snapshot() { (cd "$SCRATCH" && find . -path ./last.err -prune -o -path ./last.out -prune -o -print | sort); }

declare -A WHY=(
  [dotdot]="../evil.txt: '..' segment"
  [deep-dotdot]="'..' segment"
  [absolute]="absolute path"
  [backslash]="backslash"
  [case-dup]="readme: differs from 'README' only in case"
  [nfc-nfd]="Unicode normalisation"
  [duplicate]="same: duplicate member name"
  [under-symlink]="escape/evil.txt: is below symlink member 'escape'"
  [symlink-escape]="a/link: symlink target '../../outside' escapes"
  [symlink-absolute]="link: symlink to the absolute path '/etc'"
  [dot-segment-dup]="a/./b: names the same path as 'a/b'"
  [nul]='evil\x00txt: name contains a NUL byte'
  [bad-crc]="bad.txt: CRC-32 mismatch"
  [bomb]="(zeros): compression ratio"
)
for case in "${!WHY[@]}"; do
  before=$(snapshot)
  expect_status 2 "$case: extraction refused" "$PKGTOOL" zip extract "$H/$case.zip" -d "$W/sub/out"
  expect_in "$SCRATCH/last.err" "${WHY[$case]}" "$case: error names the member and the problem"
  expect_in "$SCRATCH/last.err" "$case.zip" "$case: error names the archive"
  after=$(snapshot)
  if [[ $before == "$after" ]]; then
    pass
  else
    fail "$case: files appeared:"
    diff <(echo "$before") <(echo "$after") >&2 || true
  fi
done
check "nothing written at an absolute path" test ! -e /tmp/zipcli-absolute-evil.txt

# zip test: per-member failures exit 1, unreadable archives exit 2.
expect_status 1 "zip test of a CRC-damaged archive" "$PKGTOOL" zip test "$H/bad-crc.zip"
expect_in "$SCRATCH/last.out" "bad.txt: FAILED: bad.txt: CRC-32 mismatch" "one line per failed member"
check "only the bad member failed" test "$(grep -c FAILED "$SCRATCH/last.out")" -eq 1
head -c 1000 /dev/urandom >"$SCRATCH/garbage.zip"
expect_status 2 "zip test of garbage" "$PKGTOOL" zip test "$SCRATCH/garbage.zip" "$H/bad-crc.zip"
expect_in "$SCRATCH/last.err" "garbage.zip: not a zip archive" "unreadable archive named"
expect_in "$SCRATCH/last.out" "bad.txt: FAILED" "later archives still tested"
expect_status 2 "zip list of garbage" "$PKGTOOL" zip list "$SCRATCH/garbage.zip"
expect_status 2 "zip test of a missing file" "$PKGTOOL" zip test "$SCRATCH/missing.zip"
expect_status 0 "zip test of a good archive" "$PKGTOOL" zip test "$H/symlink-ok.zip"

# Limits from the command line.
expect_status 2 "--max-entries" "$PKGTOOL" zip extract "$H/symlink-ok.zip" -d "$W/lim" --max-entries 1
expect_in "$SCRATCH/last.err" "more than the limit of 1" "--max-entries message"
expect_status 2 "--max-total-size" "$PKGTOOL" zip extract "$H/bad-crc.zip" -d "$W/lim" --max-total-size 100
expect_in "$SCRATCH/last.err" "exceeds" "--max-total-size message"
expect_status 2 "--max-ratio 100 refuses 50 MiB of zeros" "$PKGTOOL" zip extract "$H/zeros.zip" -d "$W/lim" --max-ratio 100
expect_in "$SCRATCH/last.err" "(zeros): compression ratio" "--max-ratio message"
expect_status 0 "the default ratio limit accepts them" "$PKGTOOL" zip extract "$H/zeros.zip" -d "$W/lim"
check "zeros extracted in full" test "$(stat -c %s "$W/lim/zeros")" -eq $((50 << 20))
expect_status 2 "zip test refuses the bomb header" "$PKGTOOL" zip test "$H/bomb.zip"
expect_status 2 "--no-symlinks" "$PKGTOOL" zip extract "$H/symlink-ok.zip" -d "$W/nolink" --no-symlinks
expect_in "$SCRATCH/last.err" "l: is a symlink and symlinks are not allowed" "--no-symlinks message"
check "--no-symlinks created nothing" test ! -e "$W/nolink"
expect_status 2 "unknown option" "$PKGTOOL" zip extract "$H/symlink-ok.zip" -d "$W/x" --bogus
expect_status 2 "missing -d" "$PKGTOOL" zip extract "$H/symlink-ok.zip"

# Non-empty target without --overwrite is left alone.
mkdir -p "$W/full"
echo keep >"$W/full/keep"
expect_status 2 "non-empty target refused" "$PKGTOOL" zip extract "$H/symlink-ok.zip" -d "$W/full"
expect_in "$SCRATCH/last.err" "not empty" "non-empty target message"
check "non-empty target untouched" test "$(ls "$W/full")" = keep

# A symlink planted inside the target must not redirect the write.
mkdir -p "$W/outside" "$W/planted"
ln -s "$W/outside" "$W/planted/lib"
expect_status 0 "extract over a planted symlink" "$PKGTOOL" zip extract "$H/payload.zip" -d "$W/planted" --overwrite
check "nothing written through the planted symlink" test -z "$(ls -A "$W/outside")"
check "payload extracted inside the target" test "$(cat "$W/planted/lib/payload.so")" = payload
check "the planted symlink is gone" test ! -L "$W/planted/lib"
finish
