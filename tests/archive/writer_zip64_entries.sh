# SPDX-License-Identifier: BSD-3-Clause
# More than 65 535 members: the writer must add the ZIP64 end record and
# locator, and Python's zipfile, `unzip -t` and bsdtar must accept it.
source "$(dirname "$0")/writer_lib.sh"

T=$SCRATCH/many
"$LIBPKG_PYTHON" - "$T" <<'PY'
import os, sys
root = sys.argv[1]
for d in range(70):
    os.makedirs(f"{root}/d{d:02}")
    for i in range(1000):
        with open(f"{root}/d{d:02}/f{i:04}", "w") as f:
            f.write(f"{d}/{i}\n")
PY
N=70070  # 70 000 files + 70 directories
"$PACK" -j 2 -z 6 "$SCRATCH/many.zip" "$T"
expect_ok "zipfile reads $N members" "${CHECK[@]}" count "$SCRATCH/many.zip" $N
expect_ok "zipfile: contents match" "${CHECK[@]}" tree "$SCRATCH/many.zip" "$T"
expect_ok "unzip -t" unzip -tqq "$SCRATCH/many.zip"
expect_ok "bsdtar lists $N members" bash -c '[[ $(bsdtar -tf "$1" | wc -l) == "$2" ]]' _ "$SCRATCH/many.zip" $N
expect_ok "end records: ZIP64 locator + 0xFFFF in the classic record" "$LIBPKG_PYTHON" -c '
import struct, sys
data = open(sys.argv[1], "rb").read()
eocd = data[-22:]
assert eocd[:4] == b"PK\x05\x06"
assert struct.unpack("<HH", eocd[8:12]) == (0xFFFF, 0xFFFF)
loc = data[-42:-22]
assert loc[:4] == b"PK\x06\x07"
off = struct.unpack("<Q", loc[8:16])[0]
rec = data[off:off + 56]
assert rec[:4] == b"PK\x06\x06"
assert struct.unpack("<QQ", rec[24:40]) == (int(sys.argv[2]),) * 2
' "$SCRATCH/many.zip" $N
finish
