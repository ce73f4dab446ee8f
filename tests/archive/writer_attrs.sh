# SPDX-License-Identifier: BSD-3-Clause
# Modes, symlinks and timestamps as other tools read them (`unzip -Z`,
# zipfile), SOURCE_DATE_EPOCH handling, and usage errors (exit 2, no output).
source "$(dirname "$0")/writer_lib.sh"

T=$SCRATCH/t
mkdir -p "$T/bin" "$T/share"
printf '#!/bin/sh\necho hi\n' >"$T/bin/run"
chmod 0750 "$T/bin/run"
echo data >"$T/share/data.txt"
chmod 0640 "$T/share/data.txt"
chmod 0711 "$T/share"
ln -s ../bin/run "$T/share/run-link"
touch -h -d '2020-06-07 08:09:10 UTC' "$T/bin/run" "$T/share/data.txt" "$T/share/run-link" "$T/bin" "$T/share"

"$PACK" "$SCRATCH/a.zip" "$T"
crosscheck "$SCRATCH/a.zip" "$T"
Z=$(unzip -Z "$SCRATCH/a.zip")
expect_ok "unzip -Z: executable mode" grep -Eq '^-rwxr-x---.* bin/run$' <<<"$Z"
expect_ok "unzip -Z: data mode" grep -Eq '^-rw-r-----.* share/data.txt$' <<<"$Z"
expect_ok "unzip -Z: directory mode" grep -Eq '^drwx--x--x.* share/$' <<<"$Z"
expect_ok "unzip -Z: symlink" grep -Eq '^lrwxrwxrwx.* share/run-link$' <<<"$Z"
expect_ok "unzip -Z: unix host" grep -Eq ' unx ' <<<"$Z"
expect_ok "mtime 2020-06-07 08:09:10" "${CHECK[@]}" time "$SCRATCH/a.zip" 2020 6 7 8 9 10

SOURCE_DATE_EPOCH=1700000000 "$PACK" "$SCRATCH/sde.zip" "$T"
expect_ok "SOURCE_DATE_EPOCH applies to every member" "${CHECK[@]}" time "$SCRATCH/sde.zip" 2023 11 14 22 13 20
SOURCE_DATE_EPOCH=100 "$PACK" "$SCRATCH/old.zip" "$T"
expect_ok "SOURCE_DATE_EPOCH before 1980 is clipped" "${CHECK[@]}" time "$SCRATCH/old.zip" 1980 1 1 0 0 0
SOURCE_DATE_EPOCH=100 "$PACK" "$SCRATCH/old2.zip" "$T"
expect_ok "same SOURCE_DATE_EPOCH: identical archives" cmp "$SCRATCH/old.zip" "$SCRATCH/old2.zip"

# expect_usage_error NAME CMD...: exit 2, "error:" on stderr, no output file.
expect_usage_error() {
  local what=$1 status=0
  shift
  "$@" >"$SCRATCH/err.out" 2>"$SCRATCH/err.txt" || status=$?
  if [[ $status == 2 ]] && grep -q '^error: ' "$SCRATCH/err.txt"; then pass; else
    fail "$what: status $status, stderr: $(cat "$SCRATCH/err.txt")"; fi
}
SOURCE_DATE_EPOCH=12abc expect_usage_error "bad SOURCE_DATE_EPOCH" "$PACK" "$SCRATCH/bad.zip" "$T"
expect_ok "bad SOURCE_DATE_EPOCH: named" grep -q SOURCE_DATE_EPOCH "$SCRATCH/err.txt"
expect_usage_error "missing tree" "$PACK" "$SCRATCH/bad.zip" "$SCRATCH/nonexistent"
expect_usage_error "level 13" "$PACK" -z 13 "$SCRATCH/bad.zip" "$T"
expect_ok "no output after errors" test ! -e "$SCRATCH/bad.zip"
# An unreadable file (only when not root: root reads anything).
if [[ $(id -u) != 0 ]]; then
  cp -r "$T" "$SCRATCH/t2" && chmod 000 "$SCRATCH/t2/share/data.txt"
  expect_usage_error "unreadable member" "$PACK" "$SCRATCH/bad.zip" "$SCRATCH/t2"
  expect_ok "unreadable member named" grep -q data.txt "$SCRATCH/err.txt"
fi
finish
