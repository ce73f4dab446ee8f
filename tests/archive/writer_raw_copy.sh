# SPDX-License-Identifier: BSD-3-Clause
# add_raw: members of an archive made by Python's zipfile are copied (one
# renamed) without recompression: identical compressed bytes, CRC, method.
source "$(dirname "$0")/writer_lib.sh"

"$LIBPKG_PYTHON" - "$SCRATCH/src.zip" <<'PY'
import sys, zipfile
with zipfile.ZipFile(sys.argv[1], "w") as z:
    z.writestr(zipfile.ZipInfo("pkg/mod.py"), "print('hi')\n" * 500,
               compress_type=zipfile.ZIP_DEFLATED)
    z.writestr("pkg/data.bin", bytes(range(256)) * 40,
               compress_type=zipfile.ZIP_STORED)
    with open("/usr/bin/ls", "rb") as f:
        z.writestr("bin/ls", f.read(), compress_type=zipfile.ZIP_DEFLATED,
                   compresslevel=9)
PY
mkdir -p "$SCRATCH/tree"
echo fresh >"$SCRATCH/tree/fresh.txt"
"$PACK" --raw "$SCRATCH/src.zip" pkg/mod.py pkg/renamed.py \
        --raw "$SCRATCH/src.zip" pkg/data.bin pkg/data.bin \
        --raw "$SCRATCH/src.zip" bin/ls tools/ls \
        "$SCRATCH/out.zip" "$SCRATCH/tree"
expect_ok "raw copies identical" "${CHECK[@]}" raw "$SCRATCH/src.zip" "$SCRATCH/out.zip" \
  pkg/mod.py=pkg/renamed.py,pkg/data.bin=pkg/data.bin,bin/ls=tools/ls
expect_ok "unzip -t" unzip -tqq "$SCRATCH/out.zip"
expect_ok "bsdtar -tf" bsdtar -tf "$SCRATCH/out.zip"
expect_ok "zipfile testzip" "$LIBPKG_PYTHON" -c '
import sys, zipfile
z = zipfile.ZipFile(sys.argv[1]); assert z.testzip() is None
assert z.read("fresh.txt") == b"fresh\n"
assert z.namelist() == ["fresh.txt", "pkg/renamed.py", "pkg/data.bin", "tools/ls"], z.namelist()
' "$SCRATCH/out.zip"
finish
