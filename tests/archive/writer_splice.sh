# SPDX-License-Identifier: BSD-3-Clause
# Splice and restart points against independent readers: members deflated
# by Python's zipfile (levels 1, 6, 9), by Info-ZIP zip and by our writer
# (with restart points) are edited (random patches, growth, a cut) through
# writer_pack_tool --edit. Every output: identical at -j1 and -j2, Python
# zipfile reads the edited member as the patches applied by hand (CRC
# checked), `unzip -t` and bsdtar accept it and bsdtar extracts the same
# bytes. The writer's own archives with restart points (a member of
# several chunks) pass the same readers, and a wheel with such a member,
# packed by `pkgtool wheel pack`, installs with pip (repair's spliced
# wheels are installed by tests/bundle/splice_repair.sh).
source "$(dirname "$0")/writer_lib.sh"
require_tools zip unzip bsdtar

src=$SCRATCH/src
mkdir -p "$src"
# Text, noise and zeros (3.5 MiB), so every kind of deflate block occurs.
"$LIBPKG_PYTHON" - "$src/lib.so" <<'PY'
import random, sys
r = random.Random(7)
out = bytearray()
while len(out) < 3_600_000:
    kind, n = r.randrange(3), r.randrange(1000, 90000)
    if kind == 0:
        out += b"".join(b"sym_%d_%s " % (r.randrange(4000), b"x" * r.randrange(9)) for _ in range(n // 12))
    elif kind == 1:
        out += r.randbytes(n)
    else:
        out += bytes(n)
open(sys.argv[1], "wb").write(out)
PY

# Inputs: zipfile at three levels, Info-ZIP, ours with 256 KiB chunks.
for level in 1 6 9; do
  "$LIBPKG_PYTHON" -c '
import sys, zipfile
with zipfile.ZipFile(sys.argv[1], "w", zipfile.ZIP_DEFLATED, compresslevel=int(sys.argv[3])) as z:
    z.write(sys.argv[2], "lib.so")
    z.writestr("other.txt", "kept as it is\n")
' "$SCRATCH/zipfile$level.zip" "$src/lib.so" "$level"
done
(cd "$src" && zip -q -6 "$SCRATCH/infozip.zip" lib.so)
"$PACK" --chunk-size 262144 "$SCRATCH/ours.zip" "$src"
check "our multi-chunk member has restart points that zipfile, unzip, bsdtar skip" \
  "$LIBPKG_PYTHON" -c '
import sys, zipfile, struct
z = zipfile.ZipFile(sys.argv[1])
i = z.getinfo("lib.so")
assert z.testzip() is None
assert z.read("lib.so") == open(sys.argv[2], "rb").read()
ids = []
e = i.extra
while len(e) >= 4:
    t, n = struct.unpack("<HH", e[:4]); ids.append(t); body = e[4:4+n]; e = e[4+n:]
    if t == 0x5052: assert body[:5] == b"LPRX\x01", body[:5]
assert 0x5052 in ids, ids
' "$SCRATCH/ours.zip" "$src/lib.so"
check "unzip -t ours" unzip -tqq "$SCRATCH/ours.zip"
check "bsdtar reads ours" bash -c "bsdtar -xOf '$SCRATCH/ours.zip' lib.so | cmp - '$src/lib.so'"

# Random edits: EDITS files in writer_pack_tool's format and the expected
# content, made by Python from the original.
make_edits() {  # SEED OUT.edits OUT.expected
  "$LIBPKG_PYTHON" - "$src/lib.so" "$@" <<'PY'
import random, sys
orig, seed, edits, expected = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
data = bytearray(open(orig, "rb").read())
r = random.Random(seed)
lines = []
for _ in range(r.randrange(1, 5)):
    at = r.choice([0, len(data) - 1, r.randrange(len(data))])
    n = min(r.randrange(1, 3000), len(data) - at)
    b = r.randbytes(n)
    data[at:at + n] = b
    lines.append("%d %s" % (at, b.hex()))
mode = seed % 3
if mode == 1:  # grows, with a patch in the new part
    size = len(data) + r.randrange(1, 600000)
    data += bytes(size - len(data))
    at = len(data) - r.randrange(1, 5000)
    data[at:at + 4] = b"TAIL"[: len(data) - at]
    lines += ["size %d" % size, "%d %s" % (at, b"TAIL"[: len(data) - at].hex())]
elif mode == 2:  # cut
    size = r.randrange(len(data) // 2, len(data))
    del data[size:]
    lines.append("size %d" % size)
open(edits, "w").write("\n".join(lines) + "\n")
open(expected, "wb").write(data)
PY
}

empty=$SCRATCH/empty
mkdir -p "$empty"
n=0
for input in zipfile1 zipfile6 zipfile9 infozip ours; do
  for seed in 1 2 3; do
    n=$((n + 1))
    e=$SCRATCH/e$n
    make_edits $((seed + n * 10)) "$e.edits" "$e.expected"
    for j in 1 2; do
      "$PACK" -j $j --chunk-size 262144 --timestamp 1700000000 --record \
        --edit "$SCRATCH/$input.zip" lib.so "$e.edits" "$e.j$j.zip" "$empty" >"$e.j$j.record" ||
        fail "$input seed $seed: writer_pack_tool --edit -j$j failed"
    done
    check "$input seed $seed: -j1 and -j2 write the same bytes" cmp "$e.j1.zip" "$e.j2.zip"
    check "$input seed $seed: spliced" grep -q " spliced reused=" "$e.j1.record"
    check "$input seed $seed: zipfile reads the edit" "$LIBPKG_PYTHON" -c '
import sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
assert z.testzip() is None
assert z.read("lib.so") == open(sys.argv[2], "rb").read(), "content differs"
' "$e.j1.zip" "$e.expected"
    check "$input seed $seed: unzip -t" unzip -tqq "$e.j1.zip"
    check "$input seed $seed: bsdtar extracts the edit" \
      bash -c "bsdtar -xOf '$e.j1.zip' lib.so | cmp - '$e.expected'"
  done
done
# Small edits of a big member re-use most of it.
check "most of an edited member's deflate data is the input's" "$LIBPKG_PYTHON" -c '
import re, sys
reused = [int(m) for f in sys.argv[1:] for m in re.findall(r"reused=(\d+)", open(f).read())]
assert len(reused) == 15 and sum(1 for x in reused if x > 500000) >= 10, reused
' "$SCRATCH"/e*.j1.record

# pip installs a wheel whose big member carries restart points.
PKGTOOL=${PKGTOOL:-}
[[ -x $PKGTOOL ]] || fail "PKGTOOL not set"
tree=$SCRATCH/wheeltree
mkdir -p "$tree/spl" "$tree/spl-1.0.dist-info"
head -c 9500000 /dev/zero | tr '\0' 'a' >"$tree/spl/big.txt"
cat "$src/lib.so" >>"$tree/spl/big.txt"
echo 'BIG = "ok"' >"$tree/spl/__init__.py"
printf 'Metadata-Version: 2.1\nName: spl\nVersion: 1.0\n' >"$tree/spl-1.0.dist-info/METADATA"
printf 'Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n' \
  >"$tree/spl-1.0.dist-info/WHEEL"
"$PKGTOOL" wheel pack "$tree" -d "$SCRATCH/dist" --no-cache >/dev/null ||
  fail "pkgtool wheel pack failed"
whl=$SCRATCH/dist/spl-1.0-py3-none-any.whl
check "the packed wheel's big member has restart points" "$LIBPKG_PYTHON" -c '
import sys, zipfile
i = zipfile.ZipFile(sys.argv[1]).getinfo("spl/big.txt")
assert b"\x52\x50" in i.extra and b"LPRX" in i.extra, i.extra
' "$whl"
venv=$SCRATCH/venv
"$LIBPKG_PYTHON" -m venv "$venv" >/dev/null || fail "python3 -m venv failed"
check "pip installs the wheel with restart points" \
  "$venv/bin/pip" install --no-index --no-deps -q "$whl"
check "installed bytes are the packed ones" cmp "$tree/spl/big.txt" \
  "$("$venv/bin/python" -c 'import spl, os; print(os.path.join(os.path.dirname(spl.__file__), "big.txt"))')"
finish
