# SPDX-License-Identifier: BSD-3-Clause
# pkgtool conda pack/extract/transmute against cph 2.0.1, Python's zipfile and
# tarfile, zstd and bzip2; determinism across runs and thread counts.
source "$(dirname "${BASH_SOURCE[0]}")/conda_lib.sh"
require_tools cph zstd bzip2 gcc

P=$SCRATCH/build_env_placehold_placehold
stage_prefix "$P"
OUT=$SCRATCH/out
check "pack both formats" "$PKGTOOL" conda pack "$P" --name foo --version 1.2.3 \
  --build-number 2 --depends 'libgcc-ng >=12' --license MIT --format both -o "$OUT"
CONDA=$OUT/foo-1.2.3-2.conda
BZ2=$OUT/foo-1.2.3-2.tar.bz2

log "== container checks"
check "zip layout, STORED, content size" "${CHECK[@]}" zip-layout "$CONDA"
check "bzip2 -t" bzip2 -t "$BZ2"
mkdir -p "$SCRATCH/members"
(cd "$SCRATCH/members" && "$LIBPKG_PYTHON" -c \
  'import sys,zipfile; zipfile.ZipFile(sys.argv[1]).extractall()' "$CONDA")
for z in "$SCRATCH"/members/*.tar.zst; do
  check "zstd -t $(basename "$z")" zstd -q -t "$z"
  check "zstd -l shows the size of $(basename "$z")" \
    bash -c "zstd -lv '$z' | grep -q 'Decompressed Size: .*($(zstd -dc "$z" | wc -c) B)'"
done
check "tar members anonymised" bash -c \
  "! tar -tvjf '$BZ2' | awk '{print \$2}' | grep -v '^0/0$'"

log "== extraction: ours, cph, staged input"
check "pkgtool extract .conda" "$PKGTOOL" conda extract "$CONDA" -d "$SCRATCH/x-ours-conda"
check "pkgtool extract .tar.bz2" "$PKGTOOL" conda extract "$BZ2" -d "$SCRATCH/x-ours-bz2"
check "cph extract .conda" cph x "$CONDA" --dest "$SCRATCH/x-cph-conda"
check "cph extract .tar.bz2" cph x "$BZ2" --dest "$SCRATCH/x-cph-bz2"
for d in x-ours-bz2 x-cph-conda x-cph-bz2; do
  check "$d == x-ours-conda" "${CHECK[@]}" tree-equal "$SCRATCH/x-ours-conda" "$SCRATCH/$d"
done
check "extracted == staged prefix" "${CHECK[@]}" tree-equal "$P" "$SCRATCH/x-ours-conda" --ignore-info
check "paths.json/files vs tree" "${CHECK[@]}" check-paths "$SCRATCH/x-ours-conda"
check "has_prefix: exactly the executable and the script" "${CHECK[@]}" has-prefix \
  "$SCRATCH/x-ours-conda" "$P" binary:bin/foo text:bin/run-foo
check "pkgtool verify ours" "$PKGTOOL" conda verify "$CONDA" "$BZ2"

log "== transmute"
mkdir -p "$SCRATCH/cph-t"
check "cph transmute ours .conda -> .tar.bz2" cph t "$CONDA" .tar.bz2 --out-folder "$SCRATCH/cph-t"
mkdir -p "$SCRATCH/cph-t2" && cp "$BZ2" "$SCRATCH/cph-t2/"
check "cph transmute ours .tar.bz2 -> .conda" cph t "$SCRATCH/cph-t2/foo-1.2.3-2.tar.bz2" .conda \
  --out-folder "$SCRATCH/cph-t"
for f in "$SCRATCH"/cph-t/foo-1.2.3-2.{tar.bz2,conda}; do
  rm -rf "$SCRATCH/x-t"
  check "extract cph-transmuted $(basename "$f")" "$PKGTOOL" conda extract "$f" -d "$SCRATCH/x-t"
  check "cph-transmuted $(basename "$f") == ours" "${CHECK[@]}" tree-equal "$SCRATCH/x-ours-conda" "$SCRATCH/x-t"
  check "verify cph-transmuted $(basename "$f")" "$PKGTOOL" conda verify "$f"
done
check "pkgtool transmute .conda -> .tar.bz2" "$PKGTOOL" conda transmute "$CONDA" --to tar.bz2 -o "$SCRATCH/our-t"
check "transmuted .tar.bz2 is byte-identical to the packed one" cmp "$SCRATCH/our-t/foo-1.2.3-2.tar.bz2" "$BZ2"
check "pkgtool transmute .tar.bz2 -> .conda" "$PKGTOOL" conda transmute "$BZ2" --to conda -o "$SCRATCH/our-t"
check "transmuted .conda is byte-identical to the packed one" cmp "$SCRATCH/our-t/foo-1.2.3-2.conda" "$CONDA"

log "== packages created by cph"
mkdir -p "$SCRATCH/cph-made"
cp -a "$SCRATCH/x-ours-conda" "$SCRATCH/cph-src"
check "cph create .conda" cph c "$SCRATCH/cph-src" foo-1.2.3-2.conda --out-folder "$SCRATCH/cph-made"
check "cph create .tar.bz2" cph c "$SCRATCH/cph-src" foo-1.2.3-2.tar.bz2 --out-folder "$SCRATCH/cph-made"
for ext in conda tar.bz2; do
  f=$SCRATCH/cph-made/foo-1.2.3-2.$ext
  check "verify cph-created .$ext" "$PKGTOOL" conda verify "$f"
  to=conda; [[ $ext == conda ]] && to=tar.bz2
  check "pkgtool transmute cph-created .$ext" "$PKGTOOL" conda transmute "$f" --to $to -o "$SCRATCH/ours-from-cph-$ext"
  out=$(ls "$SCRATCH/ours-from-cph-$ext"/foo-1.2.3-2.*)
  rm -rf "$SCRATCH/x-a" "$SCRATCH/x-b"
  check "cph extract cph-created .$ext" cph x "$f" --dest "$SCRATCH/x-a"
  check "cph extract our transmuted .$to" cph x "$out" --dest "$SCRATCH/x-b"
  check "transmute of cph .$ext keeps the tree" "${CHECK[@]}" tree-equal "$SCRATCH/x-a" "$SCRATCH/x-b"
  check "transmute of cph .$ext == staged" "${CHECK[@]}" tree-equal "$SCRATCH/x-ours-conda" "$SCRATCH/x-b"
done

log "== determinism"
check "second pack" "$PKGTOOL" conda pack "$P" --name foo --version 1.2.3 \
  --build-number 2 --depends 'libgcc-ng >=12' --license MIT --format both -o "$SCRATCH/again" -j 1
check ".conda identical (second run, -j1)" cmp "$CONDA" "$SCRATCH/again/foo-1.2.3-2.conda"
check ".tar.bz2 identical (second run, -j1)" cmp "$BZ2" "$SCRATCH/again/foo-1.2.3-2.tar.bz2"
# Several zstd jobs: a 24 MiB compressible file at level 3.
"$LIBPKG_PYTHON" -c '
import random, sys
r = random.Random(7)
words = [bytes(r.choice(b"abcdefgh") for _ in range(8)) for _ in range(512)]
with open(sys.argv[1], "wb") as f:
    f.write(b" ".join(r.choice(words) for _ in range(24 << 17)))
' "$P/share/blob.txt"
for j in 1 2 3; do
  check "pack -j $j" "$PKGTOOL" conda pack "$P" --name foo --version 1.2.3 -l 3 -j $j -o "$SCRATCH/j$j"
done
check "-j1 == -j2 with a multi-job zstd stream" cmp "$SCRATCH/j1/foo-1.2.3-0.conda" "$SCRATCH/j2/foo-1.2.3-0.conda"
check "-j1 == -j3" cmp "$SCRATCH/j1/foo-1.2.3-0.conda" "$SCRATCH/j3/foo-1.2.3-0.conda"
SOURCE_DATE_EPOCH=1700000001 check "pack with another timestamp" "$PKGTOOL" conda pack "$P" \
  --name foo --version 1.2.3 -l 3 -o "$SCRATCH/other-time"
check "another SOURCE_DATE_EPOCH changes the bytes" bash -c \
  "! cmp -s '$SCRATCH/j1/foo-1.2.3-0.conda' '$SCRATCH/other-time/foo-1.2.3-0.conda'"

finish
