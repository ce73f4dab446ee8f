# SPDX-License-Identifier: BSD-3-Clause
# The zip writer's memory bound (docs/archives.md, zip_writer.hpp): peak RSS
# above the process's own baseline stays within
#   (2T + 1) x (chunk + deflate bound of a chunk)   full-size chunk slots
#   + (T + 1) MiB                                   small members' jobs
#   + T x 2 MiB                                     per worker (compressor,
#                                                   joining pass, stack)
# whatever the member sizes and their order. The input is what broke the old
# buffer pool: three 300 MiB members (8 MiB runs of compressible text and
# random bytes, so both the deflated and the stored path run) with 300 tiny
# files between them; tiny members' jobs took the pool's 8 MiB buffers and
# full-size chunks then allocated new ones (142 MB at -j1, 325 MB at -j2).
# A memory bound, not a timing test; the -j1 and -j2 archives must also be
# byte-identical and pass `unzip -t`. Then a tree of 70 000 small files:
# the memory per member stays bounded (below).
source "$(dirname "$0")/writer_lib.sh"

TIME=/usr/bin/time  # Debian package `time` (scripts/setup.sh)
if [[ ! -x $TIME ]]; then
  fail "$TIME missing (install the 'time' package: scripts/setup.sh)"
  finish
fi

"$LIBPKG_PYTHON" - "$SCRATCH/in" <<'EOF'
import os, random, sys
root = sys.argv[1]
os.makedirs(root)
rnd = random.Random(1)
words = [bytes(rnd.choice(b"abcdefghijklmnop") for _ in range(rnd.randint(3, 9))) for _ in range(4000)]
text = bytearray()
while len(text) < 1 << 20:
    text += rnd.choice(words) + b" "
text = bytes(text[: 1 << 20])
for k, name in enumerate(["a-big", "c-big", "e-big"]):
    with open(os.path.join(root, name), "wb") as f:
        for i in range(300):
            f.write(os.urandom(1 << 20) if (i // 8 + k) % 2 else text)
    if k < 2:
        d = os.path.join(root, "bd"[k] + "-small")
        os.mkdir(d)
        for i in range(300):
            with open(os.path.join(d, f"f{i:03d}"), "wb") as f:
                f.write(text[: rnd.randint(100, 60000)])
EOF
mkdir -p "$SCRATCH/tiny" && echo tiny >"$SCRATCH/tiny/a"

# peak_kib OUT DIR ARGS...: packs DIR into OUT; prints the peak RSS in KiB.
peak_kib() {
  local out=$1 dir=$2
  shift 2
  "$TIME" -f %M -o "$SCRATCH/rss" "$PACK" "$@" "$out" "$dir" || return 1
  tail -1 "$SCRATCH/rss"
}

MIB=1024
CHUNK_MIB=8
# libdeflate's bound for 8 MiB is 8 MiB + 8399 bytes; 6 more for the join.
SLOT_KIB=$((2 * CHUNK_MIB * MIB + 9))
# within_bound OUT DIR J BOUND_KIB: packing DIR into OUT at -j J peaks at
# most BOUND_KIB above the pack of a one-file tree.
within_bound() {
  local out=$1 dir=$2 j=$3 bound=$4 base peak
  base=$(peak_kib "$SCRATCH/tiny.zip" "$SCRATCH/tiny" -j "$j" -z 1 --timestamp 315532800) ||
    { fail "pack of a tiny tree failed"; return; }
  peak=$(peak_kib "$out" "$dir" -j "$j" -z 1 --timestamp 315532800) || { fail "pack failed"; return; }
  log "peak RSS ${peak} KiB, baseline ${base} KiB: writer $((peak - base)) KiB, bound ${bound} KiB"
  if ((peak - base <= bound)); then pass; else fail "writer used $((peak - base)) KiB > bound $bound KiB"; fi
}
for j in 1 2; do
  case_begin "-j $j"
  within_bound "$SCRATCH/out$j.zip" "$SCRATCH/in" $j $(((2 * j + 1) * SLOT_KIB + (j + 1) * MIB + j * 2 * MIB))
done
case_begin "output"
expect_ok "-j1 and -j2 archives are byte-identical" cmp "$SCRATCH/out1.zip" "$SCRATCH/out2.zip"
expect_ok "unzip -t" unzip -tqq "$SCRATCH/out2.zip"

# Many small files: 70 000 (a wheel of a big Python package). What a member
# holds until it is written (its source, name, attributes) used to be kept
# for every member until commit(): 178 MB at 70 000 files. Queued members
# are now written in batches (ZipWriter::kMaxQueued), and what stays per
# member until commit (its name check, central directory record and
# result, and this tool's own list of the tree) is bounded per member.
"$LIBPKG_PYTHON" - "$SCRATCH/many" <<'PY'
import os, sys
root = sys.argv[1]
for d in range(70):
    os.makedirs(os.path.join(root, f"pkg{d:02d}"))
    for i in range(1000):
        with open(os.path.join(root, f"pkg{d:02d}", f"module_with_a_typical_name_{i:04d}.py"), "w") as f:
            f.write(f"value = {i}\n")
PY
PER_MEMBER=768  # bytes above the baseline per member (measured: see docs/archives.md)
for j in 1 2; do
  case_begin "70 000 small files, -j $j"
  within_bound "$SCRATCH/many$j.zip" "$SCRATCH/many" $j $((70000 * PER_MEMBER / 1024 + (j + 1) * MIB + j * 2 * MIB))
done
case_begin "70 000 small files: output"
expect_ok "-j1 and -j2 archives are byte-identical" cmp "$SCRATCH/many1.zip" "$SCRATCH/many2.zip"
check "70 000 members" test "$(unzip -Z1 "$SCRATCH/many2.zip" | grep -c '\.py$')" -eq 70000
finish
