#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# `pkgtool repair --strip-level debug` of a wheel that carries large ELF
# members of its own (CUDA's libcufft and libcurand as package data, as a
# torch wheel carries libtorch_cuda.so), with two pkgtool binaries side by
# side: --strip unpacks every ELF member, so this is the path where RECORD
# is checked from the digests taken while unpacking (one inflate) or by
# inflating them again. 3 rounds, alternating which goes first, pinned with
# taskset; the outputs must be byte-identical. One line per run on stderr.
#   bench/repair_strip_bench.sh OLD_PKGTOOL NEW_PKGTOOL [CPUS] [JOBS]
set -u
OLD=$1 NEW=$2 CPUS=${3:-0,1} J=${4:-2}
LIB=/usr/local/cuda/lib64
for l in libcufft.so.12 libcurand.so.10; do
  [[ -f $LIB/$l ]] || { echo "error: $LIB/$l not found (CUDA toolkit)" >&2; exit 2; }
done
WORK=$(mktemp -d "${TMPDIR:-/tmp}/repair-strip.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
export SOURCE_DATE_EPOCH=1700000000
T=$WORK/tree
mkdir -p "$T/bigpkg/lib" "$T/bigpkg-1.0.dist-info"
cp -L "$LIB/libcufft.so.12" "$LIB/libcurand.so.10" "$T/bigpkg/lib/"
printf 'int bigpkg_probe(void) { return 1; }\n' >"$WORK/probe.c"
gcc -shared -fPIC -O1 -o "$T/bigpkg/_probe.so" "$WORK/probe.c" \
  -L"$T/bigpkg/lib" -l:libcufft.so.12 -l:libcurand.so.10 -Wl,-rpath,'$ORIGIN/lib'
printf 'Metadata-Version: 2.1\nName: bigpkg\nVersion: 1.0\n' >"$T/bigpkg-1.0.dist-info/METADATA"
printf 'Wheel-Version: 1.0\nGenerator: bench\nRoot-Is-Purelib: false\nTag: py3-none-linux_x86_64\n\n' \
  >"$T/bigpkg-1.0.dist-info/WHEEL"
mkdir "$WORK/in"
"$NEW" wheel pack "$T" -d "$WORK/in" --no-cache >/dev/null || exit 2
W=$(ls "$WORK"/in/*.whl)
echo "input: $(basename "$W") ($(stat -c %s "$W") bytes); members unpacked by --strip: $(du -cb "$T"/bigpkg/lib/* "$T"/bigpkg/_probe.so | tail -1 | cut -f1) bytes" >&2
for i in 1 2 3; do
  order=(old new)
  ((i % 2 == 0)) && order=(new old)
  for side in "${order[@]}"; do
    P=$OLD
    [[ $side == new ]] && P=$NEW
    rm -rf "$WORK/out-$side" && mkdir "$WORK/out-$side"
    l=$(cut -d' ' -f1 /proc/loadavg)
    /usr/bin/time -f "$side run $i: %e s wall, %U+%S s CPU, %M KB, load $l" \
      taskset -c "$CPUS" "$P" repair "$W" -w "$WORK/out-$side" --strip-level debug \
      --plat auto --no-cache -j "$J" >/dev/null || exit 2
  done
  if cmp "$WORK"/out-old/*.whl "$WORK"/out-new/*.whl; then
    echo "run $i: identical" >&2
  else
    echo "run $i: OUTPUTS DIFFER" >&2
    exit 1
  fi
done
