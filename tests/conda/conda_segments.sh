# SPDX-License-Identifier: BSD-3-Clause
# `pkgtool conda pack` writes the .tar.bz2 as bzip2 blocks compressed in
# parallel and joined into one stream, and the .conda's pkg-*.tar.zst as
# independent zstd frames (archive/segment_writer.hpp): every reader takes
# them (bzip2 -t, zstd -t, Python's bz2 / zstandard stream_reader /
# tarfile, bsdtar, cph), the bytes are the same for -j1/-j2 and with a cold
# or warm chunk cache, the large file's blocks and frames come from the
# cache on the second run, and the .tar.bz2 stays within 1 % of `bzip2 -9`
# over the same tar.
source "$(dirname "${BASH_SOURCE[0]}")/conda_lib.sh"
require_tools cph bzip2 zstd bsdtar gcc

P=$SCRATCH/build_env_placehold_placehold
stage_prefix "$P"
# A large binary (>= 8 MiB, so its data gets blocks and frames of its own):
# the first 12 MiB of a real shared library from the build's dependencies.
ICU=$("$LIBPKG_PYTHON" -c 'import ctypes.util; print(ctypes.util.find_library("icudata") or "")')
# awk reads to the end: exiting at the first match could kill ldconfig with
# SIGPIPE (its output exceeds a pipe's buffer), which pipefail reports.
ICU_PATH=$(ldconfig -p | awk -v n="$ICU" '$1 == n && !seen {print $NF; seen = 1}')
[[ -n $ICU_PATH && -f $ICU_PATH ]] || missing "libicudata (libicu-dev) not found"
head -c $((12 << 20)) "$ICU_PATH" >"$P/lib/libbig.so.1"
printf 'small file after the large one\n' >"$P/lib/libbig.txt"

# zstd level 3: frames of 8 MiB, so the library has two of its own.
pack() {
  local out=$1
  shift
  "$PKGTOOL" conda pack "$P" --name foo --version 1.2.3 --format both -l 3 \
    -o "$out" "$@"
}
BZ=foo-1.2.3-0.tar.bz2
CONDA=foo-1.2.3-0.conda

log "== the same bytes for any thread count, cold and warm cache"
expect_ok "pack -j1 --no-cache" pack "$SCRATCH/j1" -j 1 --no-cache
expect_ok "pack -j2 --no-cache" pack "$SCRATCH/j2" -j 2 --no-cache
expect_ok "pack -j2, cold cache" pack "$SCRATCH/cold" -j 2 --cache-dir "$SCRATCH/cache"
expect_ok "pack -j1, warm cache" pack "$SCRATCH/warm" -j 1 --cache-dir "$SCRATCH/cache"
# The library's own bzip2 blocks (12 MiB at level 9: 10 or more) and its
# two zstd frames, all hits: its 12.6 MB once per format.
check "warm run: the large file's blocks and frames were hits, no misses" \
  grep -Eq 'chunk cache .*: 1[0-9] hits, 0 misses \(0 corrupt\), 25\.2 MB not recompressed' \
  "$SCRATCH/out.log"
LIBPKG_NO_CACHE=1 expect_ok "LIBPKG_NO_CACHE=1" pack "$SCRATCH/env-off" -j 2 --cache-dir "$SCRATCH/cache"
check "LIBPKG_NO_CACHE: no cache line" bash -c "! grep -q 'chunk cache' '$SCRATCH/out.log'"
for f in $BZ $CONDA; do
  expect_same_file "-j1 == -j2 ($f)" "$SCRATCH/j1/$f" "$SCRATCH/j2/$f"
  expect_same_file "cold cache == no cache ($f)" "$SCRATCH/j1/$f" "$SCRATCH/cold/$f"
  expect_same_file "warm cache == no cache ($f)" "$SCRATCH/j1/$f" "$SCRATCH/warm/$f"
  expect_same_file "LIBPKG_NO_CACHE == no cache ($f)" "$SCRATCH/j1/$f" "$SCRATCH/env-off/$f"
done

F=$SCRATCH/j2/$BZ
log "== .tar.bz2 readers"
check "bzip2 -t" bzip2 -t "$F"
check "one stream (Python bz2: nothing after its end), several blocks, == bzip2 -dc" \
  "$LIBPKG_PYTHON" - "$F" <<'EOF'
import bz2, subprocess, sys
data = open(sys.argv[1], "rb").read()
d = bz2.BZ2Decompressor()
plain = d.decompress(data)
assert d.eof and d.unused_data == b"", "not exactly one bzip2 stream"
assert plain == subprocess.run(["bzip2", "-dc", sys.argv[1]], capture_output=True, check=True).stdout
# The 48-bit block magic at any bit offset (each occurrence is byte-aligned
# in exactly one of the 8 shifts): the small files, the library's own
# blocks, the rest.
bits = int.from_bytes(data, "big")
magic = bytes.fromhex("314159265359")
blocks = sum((bits << s).to_bytes(len(data) + 1, "big").count(magic) for s in range(8))
assert blocks >= 12, f"{blocks} blocks"
assert len(plain) % 512 == 0 and plain[-1024:] == bytes(1024), "end blocks"
EOF
# (bsdtar writes directories with a trailing slash.)
check "Python tarfile and bsdtar list the same members" bash -c \
  "diff <('$LIBPKG_PYTHON' -c 'import sys, tarfile; print(\"\\n\".join(m.name for m in tarfile.open(sys.argv[1])))' '$F') \
        <(bsdtar -tf '$F' | sed 's:/\$::')"
mkdir -p "$SCRATCH/x-bsdtar"
check "bsdtar -x" bsdtar -xf "$F" -C "$SCRATCH/x-bsdtar"
check "cph extract" cph x "$F" --dest "$SCRATCH/x-cph"
check "pkgtool extract" "$PKGTOOL" conda extract "$F" -d "$SCRATCH/x-ours"
check "cph == pkgtool" "${CHECK[@]}" tree-equal "$SCRATCH/x-ours" "$SCRATCH/x-cph"
check "bsdtar == pkgtool" "${CHECK[@]}" tree-equal "$SCRATCH/x-ours" "$SCRATCH/x-bsdtar"
check "extracted == staged prefix" "${CHECK[@]}" tree-equal "$P" "$SCRATCH/x-ours" --ignore-info
check "pkgtool verify" "$PKGTOOL" conda verify "$F"

log "== .conda readers"
C=$SCRATCH/j2/$CONDA
mkdir -p "$SCRATCH/members"
(cd "$SCRATCH/members" && "$LIBPKG_PYTHON" -c \
  'import sys,zipfile; zipfile.ZipFile(sys.argv[1]).extractall()' "$C")
Z=$SCRATCH/members/pkg-foo-1.2.3-0.tar.zst
check "zstd -t" zstd -q -t "$Z"
check "several frames; zstd -d, zstandard's stream_reader and the frames one by one agree" \
  "$LIBPKG_PYTHON" - "$Z" <<'EOF'
import io, subprocess, sys, tarfile, zstandard
data = open(sys.argv[1], "rb").read()
cli = subprocess.run(["zstd", "-dc", sys.argv[1]], capture_output=True, check=True).stdout
# What cph / conda-package-streaming do: a stream_reader under tarfile "r|".
streamed = zstandard.ZstdDecompressor().stream_reader(io.BytesIO(data)).read()
frames, rest, parts = 0, data, []
while rest:
    d = zstandard.ZstdDecompressor().decompressobj()
    parts.append(d.decompress(rest))
    rest = d.unused_data
    frames += 1
assert frames >= 4, f"{frames} frames"
assert cli == streamed == b"".join(parts), "decoders disagree"
names = [m.name for m in tarfile.open(fileobj=io.BytesIO(streamed), mode="r|")]
assert "lib/libbig.so.1" in names, names
EOF
check "bsdtar -x of the pkg component" bash -c \
  "mkdir -p '$SCRATCH/x-zst' && bsdtar -xf '$Z' -C '$SCRATCH/x-zst'"
check "cph extract .conda" cph x "$C" --dest "$SCRATCH/x-cph-conda"
check "pkgtool extract .conda" "$PKGTOOL" conda extract "$C" -d "$SCRATCH/x-ours-conda"
check "cph == pkgtool (.conda)" "${CHECK[@]}" tree-equal "$SCRATCH/x-ours-conda" "$SCRATCH/x-cph-conda"
check ".conda == .tar.bz2, extracted" "${CHECK[@]}" tree-equal "$SCRATCH/x-ours-conda" "$SCRATCH/x-ours"
check "pkgtool verify .conda" "$PKGTOOL" conda verify "$C"

log "== .tar.bz2 size against bzip2 -9 over the same tar"
bzip2 -dc "$F" >"$SCRATCH/pkg.tar"
bzip2 -9 -c "$SCRATCH/pkg.tar" >"$SCRATCH/ref.tar.bz2"
ours=$(stat -c %s "$F")
ref=$(stat -c %s "$SCRATCH/ref.tar.bz2")
log "ours $ours bytes, bzip2 -9 $ref bytes"
check "within 1 % of bzip2 -9 ($ours vs $ref)" test $((ours * 100)) -le $((ref * 101))

finish
