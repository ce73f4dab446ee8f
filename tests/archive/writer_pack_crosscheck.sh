# SPDX-License-Identifier: BSD-3-Clause
# Packs a tree of random, zero, text and real ELF files (sizes around the
# chunk size) with writer_pack_tool at several levels and thread counts and
# cross-checks every archive with Python's zipfile, `unzip -t` and bsdtar;
# the output must be byte-identical for -j1/-j2/-j4.
source "$(dirname "$0")/writer_lib.sh"

T=$SCRATCH/tree
mkdir -p "$T/lib/nested/deeper" "$T/bin" "$T/data" "$T/empty-dir" "$T/lib-extra.d"
echo sibling >"$T/lib-extra.d/x"  # sorts between "lib" and "lib/" members
C=65536
"$LIBPKG_PYTHON" - "$T" $C <<'PY'
import os, random, sys
root, c = sys.argv[1], int(sys.argv[2])
rnd = random.Random(42)
words = b"wheel archive deflate chunk member zip64 record header".split()
for size in (0, 1, c - 1, c, c + 1, 5 * c + 77):
    with open(f"{root}/data/random-{size}", "wb") as f:
        f.write(rnd.randbytes(size))
    with open(f"{root}/data/zero-{size}", "wb") as f:
        f.write(bytes(size))
    with open(f"{root}/data/text-{size}", "wb") as f:
        out = bytearray()
        while len(out) < size:
            out += rnd.choice(words) + b" " + str(rnd.randrange(10**6)).encode() + b"\n"
        f.write(out[:size])
with open(f"{root}/lib/nested/deeper/caf\u00e9.txt", "w") as f:
    f.write("non-ASCII name\n")
PY
cp /usr/lib/x86_64-linux-gnu/libc.so.6 "$T/lib/libc.so.6"
for b in ls bash cp; do cp "/usr/bin/$b" "$T/bin/$b"; done
chmod 0755 "$T/bin/"*
chmod 0600 "$T/data/text-1"
ln -s libc.so.6 "$T/lib/libc.so"
ln -s ../lib "$T/bin/lib-link"
touch -d '2001-02-03 04:05:06 UTC' "$T/data/zero-0"

for level in 0 1 6 9; do
  log "--- level $level"
  for j in 1 2 4; do
    "$PACK" -j $j -z $level --chunk-size $C --record "$SCRATCH/l$level-j$j.zip" "$T" \
      >"$SCRATCH/l$level-j$j.record"
  done
  crosscheck "$SCRATCH/l$level-j1.zip" "$T"
  expect_ok "level $level: result rows" "${CHECK[@]}" record "$SCRATCH/l$level-j1.zip" "$SCRATCH/l$level-j1.record"
  for j in 2 4; do
    expect_ok "level $level: -j$j output identical to -j1" cmp "$SCRATCH/l$level-j1.zip" "$SCRATCH/l$level-j$j.zip"
  done
done

log "--- default chunk size (8 MiB) and forced ZIP64"
"$PACK" -z 6 "$SCRATCH/default.zip" "$T"
crosscheck "$SCRATCH/default.zip" "$T"
"$PACK" -z 6 --chunk-size $C --force-zip64 "$SCRATCH/z64.zip" "$T"
crosscheck "$SCRATCH/z64.zip" "$T"
expect_ok "forced ZIP64: zipfile sees ZIP64 extras" "$LIBPKG_PYTHON" -c '
import sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z:
    for i in z.infolist():
        assert i.extract_version == 45, (i.filename, i.extract_version)
        assert i.extra[:2] == b"\x01\x00", i.filename
' "$SCRATCH/z64.zip"

log "--- deflate kept although it did not shrink (joined chunks of random data)"
"$PACK" -z 6 --chunk-size $C --no-store-fallback "$SCRATCH/nofallback.zip" "$T"
crosscheck "$SCRATCH/nofallback.zip" "$T"
expect_ok "random data deflated (method 8) without fallback" "$LIBPKG_PYTHON" -c '
import sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z:
    i = z.getinfo("data/random-327757")
    assert i.compress_type == 8 and i.compress_size >= i.file_size, i
' "$SCRATCH/nofallback.zip"
finish
