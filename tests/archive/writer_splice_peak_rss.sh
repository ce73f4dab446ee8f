# SPDX-License-Identifier: BSD-3-Clause
# The splice's memory bound (docs/archives.md, "Splice"): editing a 300 MiB
# member keeps the writer's peak RSS above the process's own baseline
# within the writer's bound,
#   (2T + 1) x (chunk + deflate bound of a chunk) + (T + 1) MiB + T x 2 MiB,
# by chunks (our writer's member, restart points) and by blocks (Python
# zipfile's member, one deflate stream; blocks of zeros there decode to
# MiBs). The edits: a patch at the start, one in the middle, growth with a
# patch in the new part. Also checked: -j1 and -j2 write the same bytes,
# `unzip -t` accepts them, and the member was spliced (input bytes reused).
source "$(dirname "$0")/writer_lib.sh"

TIME=/usr/bin/time  # Debian package `time` (scripts/setup.sh)
[[ -x $TIME ]] || { fail "$TIME missing (install the 'time' package)"; finish; }

mkdir -p "$SCRATCH/in" "$SCRATCH/empty"
"$LIBPKG_PYTHON" - "$SCRATCH/in/big" "$SCRATCH/edits" <<'EOF'
import os, random, sys
rnd = random.Random(2)
words = [bytes(rnd.choice(b"abcdefghijklmnop") for _ in range(rnd.randint(3, 9))) for _ in range(4000)]
text = bytearray()
while len(text) < 1 << 20:
    text += rnd.choice(words) + b" "
text = bytes(text[: 1 << 20])
with open(sys.argv[1], "wb") as f:
    for i in range(300):
        f.write((os.urandom(1 << 20), text, bytes(1 << 20))[i % 3])
size = 300 << 20
with open(sys.argv[2], "w") as f:
    f.write("16 %s\n" % os.urandom(64).hex())
    f.write("%d %s\n" % (size // 2 + 12345, os.urandom(4000).hex()))
    f.write("size %d\n" % (size + (5 << 20)))
    f.write("%d %s\n" % (size + (3 << 20), os.urandom(100).hex()))
EOF
"$PACK" -j 2 --chunk-size $((8 << 20)) "$SCRATCH/ours.zip" "$SCRATCH/in" ||
  fail "packing the input failed"
"$LIBPKG_PYTHON" -c '
import sys, zipfile
with zipfile.ZipFile(sys.argv[1], "w", zipfile.ZIP_DEFLATED, compresslevel=6) as z:
    z.write(sys.argv[2], "big")
' "$SCRATCH/zipfile.zip" "$SCRATCH/in/big"

peak_kib() {  # OUT ARGS...: prints the peak RSS in KiB
  local out=$1
  shift
  "$TIME" -f %M -o "$SCRATCH/rss" "$PACK" --timestamp 315532800 "$@" "$out" "$SCRATCH/empty" \
    >"$out.record" || return 1
  tail -1 "$SCRATCH/rss"
}

MIB=1024
SLOT_KIB=$((2 * 8 * MIB + 9))
for input in ours zipfile; do
  for j in 1 2; do
    case_begin "$input -j $j"
    base=$(peak_kib "$SCRATCH/tiny.zip" -j $j --raw "$SCRATCH/$input.zip" big big) ||
      { fail "raw copy failed"; continue; }
    peak=$(peak_kib "$SCRATCH/$input$j.zip" -j $j --record \
      --edit "$SCRATCH/$input.zip" big "$SCRATCH/edits") || { fail "splice failed"; continue; }
    bound=$(((2 * j + 1) * SLOT_KIB + (j + 1) * MIB + j * 2 * MIB))
    log "peak RSS ${peak} KiB, baseline ${base} KiB: splice $((peak - base)) KiB, bound ${bound} KiB"
    if ((peak - base <= bound)); then pass; else fail "splice used $((peak - base)) KiB > bound $bound KiB"; fi
  done
  case_begin "$input output"
  check "-j1 and -j2 write the same bytes" cmp "$SCRATCH/${input}1.zip" "$SCRATCH/${input}2.zip"
  check "unzip -t" unzip -tqq "$SCRATCH/${input}2.zip"
  check "spliced, most of the input reused" "$LIBPKG_PYTHON" -c '
import re, sys
m = re.search(r" spliced reused=(\d+)", open(sys.argv[1]).read())
assert m and int(m.group(1)) > 100 << 20, open(sys.argv[1]).read()
' "$SCRATCH/${input}2.zip.record"
done
finish
