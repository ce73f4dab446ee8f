# SPDX-License-Identifier: BSD-3-Clause
# A member larger than 4 GiB (4.2 GiB of zeros, deflate level 1, ZIP64) made
# by Python's zipfile: `pkgtool zip list` must report its 64-bit size and
# `pkgtool zip test` must inflate it all and check its CRC. The archive
# itself is small, but the 10 GB free-space guard keeps the test away from
# nearly full disks.
source "$(dirname "$0")/zipcli_lib.sh"

free_kb=$(df -Pk "$SCRATCH" | awk 'NR==2 {print $4}')
((free_kb >= 10 * 1024 * 1024)) || skip "less than 10 GB free in $SCRATCH"

SIZE=$((42 * 1024 * 1024 * 1024 / 10)) # 4.2 GiB
start=$SECONDS
"${TOOL[@]}" big "$SCRATCH/big.zip" $SIZE
log "zipfile wrote $(stat -c %s "$SCRATCH/big.zip") bytes in $((SECONDS - start)) s"

"$PKGTOOL" zip list --json "$SCRATCH/big.zip" >"$SCRATCH/big.json"
check "list --json matches zipfile" "${TOOL[@]}" compare "$SCRATCH/big.zip" "$SCRATCH/big.json"
check "64-bit size listed" grep -q "\"size\": $SIZE" "$SCRATCH/big.json"
start=$SECONDS
expect_status 0 "zip test inflates the 4.2 GiB member" "$PKGTOOL" zip test "$SCRATCH/big.zip"
expect_in "$SCRATCH/last.out" "OK (2 members)" "zip test output"
log "pkgtool zip test took $((SECONDS - start)) s"
finish
