# SPDX-License-Identifier: BSD-3-Clause
# A member larger than 4 GiB: a sparse 4.2 GiB file of zeros at level 1,
# chunked on two threads; Python's zipfile streams it back and recomputes its
# CRC, `unzip -t` tests it. Then the same file stored (level 0) followed by a
# small member whose local header lies past 4 GiB (ZIP64 offset in the
# central extra). Needs 10 GB free (the stored archive takes 4.2 GB).
source "$(dirname "$0")/writer_lib.sh"

free_kb=$(df -Pk "$SCRATCH" | awk 'NR==2 {print $4}')
((free_kb >= 10 * 1024 * 1024)) || skip "less than 10 GB free in $SCRATCH"

SIZE=$((42 * 1024 * 1024 * 1024 / 10))  # 4.2 GiB
mkdir -p "$SCRATCH/t"
truncate -s $SIZE "$SCRATCH/t/zeros.bin"
"$PACK" -j 2 -z 1 "$SCRATCH/big.zip" "$SCRATCH/t"
log "archive: $(stat -c %s "$SCRATCH/big.zip") bytes"
expect_ok "zipfile streams $SIZE zero bytes with the right CRC" "${CHECK[@]}" bigzero "$SCRATCH/big.zip" $SIZE
expect_ok "unzip -t" unzip -tqq "$SCRATCH/big.zip"
expect_ok "bsdtar -tvf lists the full size" bash -c 'bsdtar -tvf "$1" | grep -q " $2 "' _ "$SCRATCH/big.zip" $SIZE

log "--- stored, with a member after the 4 GiB mark"
rm -f "$SCRATCH/big.zip"
echo "after the big one" >"$SCRATCH/t/zz-after.txt"
"$PACK" -j 2 -z 0 "$SCRATCH/stored.zip" "$SCRATCH/t"
expect_ok "member after 4 GiB readable" "${CHECK[@]}" after4g "$SCRATCH/stored.zip" zz-after.txt "after the big one
"
expect_ok "unzip -l lists both members (stored)" bash -c 'unzip -l "$1" | grep -q zz-after.txt' _ "$SCRATCH/stored.zip"
expect_ok "bsdtar -tf (stored)" bsdtar -tf "$SCRATCH/stored.zip"
finish
