#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The chunk cache through pkgtool (archive/chunk_cache.hpp): `wheel pack`,
# `wheel update` and `repair` write byte-identical archives with and without
# the cache, cold and warm, at -j1 and -j2; a corrupted or truncated entry is
# warned about, recompressed and the archive still equal and valid (Python
# zipfile testzip); two concurrent processes share one cache directory;
# --no-cache and LIBPKG_NO_CACHE=1 write nothing to it; an unwritable cache
# directory is a warning, not a failure; `cache stats|prune|clear`, which
# never create the default cache directory (only a store does).
#
# Fixture (built here): libbig.so carries 24 MiB of compressible data and
# 4 MiB of random bytes (.incbin), so it spans several 8 MiB chunks, both
# cached (compressible) and bypassed (incompressible); ext.so needs it.
source "$(dirname "$0")/../lib/harness.sh"
require_tools gcc cmp
make_scratch
cd "$SCRATCH"
PY=$LIBPKG_PYTHON
export SOURCE_DATE_EPOCH=1700000000

# --- fixture ----------------------------------------------------------------
"$PY" - <<'EOF'
import random
r = random.Random(7)
words = [bytes(r.choice(b"abcdefghijklmnopqrstuvwxyz") for _ in range(r.randint(2, 9))) for _ in range(5000)]
with open("data.bin", "wb") as f:
    n = 0
    while n < 24 << 20:
        line = b" ".join(r.choice(words) for _ in range(12)) + b" %d\n" % r.randint(0, 10**9)
        f.write(line)
        n += len(line)
    f.write(r.randbytes(4 << 20))
EOF
cat >blob.S <<'EOF'
  .section .rodata
  .globl big_blob
big_blob:
  .incbin "data.bin"
  .section .note.GNU-stack,"",@progbits
EOF
cat >big.c <<'EOF'
extern const char big_blob[];
int big_first(void) { return big_blob[0]; }
EOF
cat >ext.c <<'EOF'
int big_first(void);
int ext_value(void) { return big_first(); }
EOF
mkdir -p libs tree/pkg tree/pkg-1.0.dist-info
gcc -shared -fPIC -o libs/libbig.so -Wl,-soname,libbig.so big.c blob.S || fail "building libbig.so"
gcc -shared -fPIC -o tree/pkg/_ext.cpython-311-x86_64-linux-gnu.so ext.c -Llibs -lbig || fail "building _ext.so"
cp data.bin tree/pkg/data.bin  # a large plain member for wheel pack
echo 'x = 1' >tree/pkg/__init__.py
printf 'Metadata-Version: 2.1\nName: pkg\nVersion: 1.0\n' >tree/pkg-1.0.dist-info/METADATA
printf 'Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: false\nTag: cp311-cp311-linux_x86_64\n' \
  >tree/pkg-1.0.dist-info/WHEEL
((FAILS == 0)) || finish

testzip() {
  "$PY" -c 'import sys, zipfile; z = zipfile.ZipFile(sys.argv[1]); assert z.testzip() is None' "$1"
}
# pack OUTDIR ARGS...: wheel pack of the tree into OUTDIR.
pack() {
  local out=$1
  shift
  rm -rf "$out"
  "$PKGTOOL" wheel pack tree -d "$out" "$@"
}
WHL=pkg-1.0-cp311-cp311-linux_x86_64.whl

case_begin "wheel pack: same bytes with and without the cache"
expect_status 0 "pack --no-cache" pack ref --no-cache -j 2
check "reference passes testzip" testzip ref/$WHL
for j in 1 2; do
  expect_status 0 "pack cold -j$j" pack cold$j --cache-dir c$j -j $j
  expect_same_file "cold -j$j equals no cache" ref/$WHL cold$j/$WHL
  check "cold -j$j: misses reported" grep -Eq ' 0 hits, [1-9][0-9]* misses' "$SCRATCH/last.err"
  expect_status 0 "pack warm -j$j" pack warm$j --cache-dir c$j -j $j
  expect_same_file "warm -j$j equals no cache" ref/$WHL warm$j/$WHL
  check "warm -j$j: hits, no misses" grep -Eq '[1-9][0-9]* hits, 0 misses' "$SCRATCH/last.err"
done
# A cache filled at -j1 serves -j2.
expect_status 0 "pack -j2 over the -j1 cache" pack x --cache-dir c1 -j 2
expect_same_file "-j2 from the -j1 cache" ref/$WHL x/$WHL

case_begin "--no-cache and LIBPKG_NO_CACHE=1 write nothing"
expect_status 0 "pack --no-cache --cache-dir" pack n1 --no-cache --cache-dir off1
check "--no-cache: no cache directory" test ! -e off1
LIBPKG_NO_CACHE=1 expect_status 0 "LIBPKG_NO_CACHE=1 pack" pack n2 --cache-dir off2
check "LIBPKG_NO_CACHE=1: no cache directory" test ! -e off2
expect_same_file "--no-cache output" ref/$WHL n1/$WHL
expect_same_file "LIBPKG_NO_CACHE output" ref/$WHL n2/$WHL

case_begin "corrupted and truncated entries"
cp -r c1 bad
# The chunks of a committed archive are pointers into a link to it (a pack,
# chunk_cache.hpp): damage the pack's bytes under one pointer (the archive
# changed in place) and truncate another pointer. Entries of incompressible
# verdicts (empty markers) and member memos are merely not believed when
# damaged (computed again and rewritten), without a warning.
mapfile -t pointers < <("$PY" - bad <<'EOF'
import os, sys
for sub in sorted(os.listdir(sys.argv[1])):
    d = os.path.join(sys.argv[1], sub)
    if len(sub) != 2 or not os.path.isdir(d):
        continue
    for name in sorted(os.listdir(d)):
        p = os.path.join(d, name)
        if open(p, "rb").read(8) == b"LPKPTR01":
            print(p)
EOF
)
check "the cache holds pointers into a pack" test "${#pointers[@]}" -ge 3
damaged_pack=$("$PY" - bad "${pointers[0]}" "${pointers[1]}" <<'EOF'
import os, sys
cache, flip, cut = sys.argv[1:4]
b = open(flip, "rb").read()
size = int.from_bytes(b[8:16], "little")
offset = int.from_bytes(b[32:40], "little")
pack = os.path.join(cache, "packs", b[40:56].hex())
with open(pack, "r+b") as f:
    f.seek(offset + size // 2)
    c = f.read(1)
    f.seek(offset + size // 2)
    f.write(bytes([c[0] ^ 0x10]))
os.truncate(cut, os.path.getsize(cut) // 2)
print(pack)
EOF
)
expect_status 0 "pack over a damaged cache" pack damaged --cache-dir bad -j 2
check "warned about both entries" test "$(grep -c 'compressed again' "$SCRATCH/last.err")" -eq 2
check "warned that the archive changed" grep -q 'changed in place' "$SCRATCH/last.err"
check "corrupt entries counted" grep -q '(2 corrupt)' "$SCRATCH/last.err"
check "the damaged pack removed" test ! -e "$damaged_pack"
expect_same_file "output equal despite the damage" ref/$WHL damaged/$WHL
check "output passes testzip" testzip damaged/$WHL
# Pointers that hit the pack before it was found damaged are dead now:
# misses once more, never warnings; then the cache is whole again.
expect_status 0 "pack again" pack again --cache-dir bad
check "no corrupt entry left" grep -Eq ' misses \(0 corrupt\)' "$SCRATCH/last.err"
expect_status 0 "pack once more" pack again2 --cache-dir bad
check "damaged entries were replaced" grep -Eq ' 0 misses \(0 corrupt\)' "$SCRATCH/last.err"
expect_same_file "output equal after the repair" ref/$WHL again2/$WHL

case_begin "two concurrent processes share one cache directory"
for round in 1 2; do
  pack p1 --cache-dir shared -j 2 >p1.log 2>&1 &
  a=$!
  pack p2 --cache-dir shared -j 2 >p2.log 2>&1 &
  b=$!
  wait $a && wait $b
  check "round $round: both succeeded" test $? -eq 0
  expect_same_file "round $round: first writer" ref/$WHL p1/$WHL
  expect_same_file "round $round: second writer" ref/$WHL p2/$WHL
done
check "no temporary files left" test -z "$(find shared -name '.tmp-*')"
check "no corrupt entry seen" bash -c "! grep -q 'compressed again' p1.log p2.log"

case_begin "unwritable cache directory: a warning, the archive still written"
echo file >notadir
expect_status 0 "pack with the cache below a regular file" pack u --cache-dir notadir/chunks
check "warned" grep -q 'stores nothing more' "$SCRATCH/last.err"
expect_same_file "output equal" ref/$WHL u/$WHL

case_begin "wheel update --add through the cache"
expect_status 0 "update --no-cache" "$PKGTOOL" wheel update ref/$WHL --add pkg/more.bin=data.bin -o up-ref.whl --no-cache
expect_status 0 "update cold" "$PKGTOOL" wheel update ref/$WHL --add pkg/more.bin=data.bin -o up-cold.whl --cache-dir cu
expect_status 0 "update warm" "$PKGTOOL" wheel update ref/$WHL --add pkg/more.bin=data.bin -o up-warm.whl --cache-dir cu
check "warm update hit" grep -Eq '[1-9][0-9]* hits, 0 misses' "$SCRATCH/last.err"
expect_same_file "update cold" up-ref.whl up-cold.whl
expect_same_file "update warm" up-ref.whl up-warm.whl
check "updated wheel passes testzip" testzip up-warm.whl

case_begin "repair grafts through the cache"
rm -rf tree/pkg/data.bin
# libbig.so unchanged for 2 s: its graft gets a member memo (member_memo.hpp).
sleep 2.1
expect_status 0 "pack the unrepaired wheel" pack in --no-cache
repair() { "$PKGTOOL" repair in/$WHL --lib-path libs --libc glibc -w "$@"; }
expect_status 0 "repair --no-cache" repair r0 --no-cache
expect_status 0 "repair cold" repair r1 --cache-dir cr -j 1
expect_status 0 "repair warm" repair r2 --cache-dir cr -j 2 --json
check "warm repair reports hits, all trusted by their tag" "$PY" -c '
import json, sys
r = json.load(open(sys.argv[1]))["result"]["cache"]
assert r["hits"] > 0 and r["misses"] == 0 and r["bytes_saved"] >= 16 << 20, r
assert r["tagged_hits"] == r["hits"], r
assert r["memo_hits"] == 1, r  # the graft, from its memo' "$SCRATCH/last.out"
chmod 0644 cr/.hit-key-"$(id -u)"
expect_status 0 "repair warm, tag key open to others" repair r3 --cache-dir cr --json
check "the open key is refused with a warning" grep -q 'not used as the chunk cache.s tag key' "$SCRATCH/last.err"
check "its hits are inflated, none trusted by tag" "$PY" -c '
import json, sys
r = json.load(open(sys.argv[1]))["result"]["cache"]
assert r["hits"] > 0 and r["misses"] == 0 and r["tagged_hits"] == 0, r
assert r["memo_hits"] == 0, r  # nor memos, which only a tag vouches for' "$SCRATCH/last.out"
chmod 0600 cr/.hit-key-"$(id -u)"
r0=$(ls r0/*.whl) r1=$(ls r1/*.whl) r2=$(ls r2/*.whl) r3=$(ls r3/*.whl)
expect_same_file "repair cold" "$r0" "$r1"
expect_same_file "repair warm" "$r0" "$r2"
expect_same_file "repair warm, hits inflated" "$r0" "$r3"
check "repaired wheel passes testzip" testzip "$r2"

case_begin "cache stats, prune, clear"
# A second, smaller wheel packed into c1 after everything there was aged:
# prune removes the least recently used first, a linked archive (pack)
# with all its pointers at once, so what is left is the second wheel's.
"$PY" - <<'EOF'
import random
r = random.Random(11)
with open("tree_b.bin", "wb") as f:
    f.write(b"".join(b"%d %x\n" % (r.randint(0, 99), r.randint(0, 255)) for _ in range(1_600_000)))
EOF
mkdir -p tree_b/pkg tree_b/pkg-1.0.dist-info
mv tree_b.bin tree_b/pkg/data_b.bin
cp tree/pkg-1.0.dist-info/* tree_b/pkg-1.0.dist-info/
find c1 -type f -exec touch -d '3 hours ago' {} +
rm -rf b1
expect_status 0 "pack a second wheel into c1" "$PKGTOOL" wheel pack tree_b -d b1 --cache-dir c1
check "the second wheel linked" test "$(find c1/packs -samefile b1/$WHL | wc -l)" -eq 1
expect_status 0 "stats --json" "$PKGTOOL" cache stats --cache-dir c1 --json
entries=$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["entries"])' "$SCRATCH/last.out")
bytes=$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["bytes"])' "$SCRATCH/last.out")
check "stats counts entries" test "$entries" -ge 3
half=$((bytes / 2))
expect_status 0 "prune --to half" "$PKGTOOL" cache prune --cache-dir c1 --to "$half"
expect_status 0 "stats after prune" "$PKGTOOL" cache stats --cache-dir c1 --json
left=$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["bytes"])' "$SCRATCH/last.out")
check "prune kept at most half" test "$left" -le "$half"
check "prune kept something" test "$left" -gt 0
check "prune kept the recent wheel's pack" test "$(find c1/packs -samefile b1/$WHL | wc -l)" -eq 1
expect_status 0 "clear" "$PKGTOOL" cache clear --cache-dir c1
expect_status 0 "stats after clear" "$PKGTOOL" cache stats --cache-dir c1 --json
check "clear removed every entry" grep -q '"entries": 0' "$SCRATCH/last.out"
expect_status 2 "a bad --to" "$PKGTOOL" cache prune --cache-dir c1 --to 12X

case_begin "the default directory: made by the first store, never by a read"
# XDG_CACHE_HOME names it; stats, prune and clear only read (or remove
# entries of) the cache: none of them may create it.
for sub in stats prune clear; do
  expect_status 0 "cache $sub without a cache" env XDG_CACHE_HOME="$SCRATCH/xdg" "$PKGTOOL" cache "$sub"
  check "cache $sub created nothing" test ! -e "$SCRATCH/xdg"
done
check "stats said 0 entries" grep -q ': 0 entries' <(env XDG_CACHE_HOME="$SCRATCH/xdg" "$PKGTOOL" cache stats)
check "still nothing" test ! -e "$SCRATCH/xdg"
cp data.bin tree/pkg/data.bin  # a member large enough to be cached
expect_status 0 "pack without a cache" pack dref --no-cache
expect_status 0 "pack through the default cache" env XDG_CACHE_HOME="$SCRATCH/xdg" "$PKGTOOL" wheel pack tree -d dflt
expect_eq "the first store made it, mode 0700" 700 "$(stat -c %a "$SCRATCH/xdg/libpkg/chunks")"
expect_same_file "output equal" "$(ls dref/*.whl)" "$(ls dflt/*.whl)"
expect_status 2 "an unknown subcommand" "$PKGTOOL" cache frob

finish
