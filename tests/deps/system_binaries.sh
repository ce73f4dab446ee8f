#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# `pkgtool ldd --json` on installed binaries and libraries, compared with
# `ldd` (the real loader in trace mode) by realpath: merged-/usr Debian
# reaches the same file as /lib/... and /usr/lib/.... Covers
# /usr/bin/python3, a few other executables, system libraries with deeper
# closures and, when present, CUDA libraries under /usr/local/cuda/lib64
# (RUNPATH $ORIGIN, large files: also timed).
source "$LIBPKG_SOURCE_DIR/tests/lib/harness.sh"
require_tools ldd
make_scratch
COMPARE="$LIBPKG_SOURCE_DIR/tests/deps/compare_ldd.py"

files=()
for f in /usr/bin/python3 /bin/ls /usr/bin/gcc /usr/bin/readelf /usr/bin/bsdtar \
  /usr/bin/cmake /usr/bin/git; do
  [[ -e $f ]] && files+=("$f")
done
for pattern in '/usr/lib/x86_64-linux-gnu/libarchive.so.*' \
  '/usr/lib/x86_64-linux-gnu/libcurl*.so.4' '/usr/lib/x86_64-linux-gnu/libicuuc.so.*' \
  '/usr/lib/x86_64-linux-gnu/libssl.so.*' '/usr/lib/x86_64-linux-gnu/libstdc++.so.6'; do
  for f in $pattern; do
    [[ -f $f && ! -L $f ]] && files+=("$f")
  done
done
cuda=0
for f in /usr/local/cuda/lib64/lib*.so.[0-9]*; do
  [[ -f $f ]] || continue
  # One file per library (skip versioned duplicates of the same realpath).
  files+=("$f")
  cuda=$((cuda + 1))
  ((cuda < 8)) || break
done
((${#files[@]} > 0)) || missing "no system binaries to compare (libc6, libstdc++6)"
log "comparing ${#files[@]} files (${cuda} from CUDA)"

i=0
for f in "${files[@]}"; do
  i=$((i + 1))
  case_begin "$f"
  ldd "$f" >"$SCRATCH/$i.trace" 2>&1 || true
  if grep -q 'not a dynamic executable' "$SCRATCH/$i.trace"; then
    log "  (static; skipped)"
    continue
  fi
  rc=0
  "$PKGTOOL" ldd --json "$f" >"$SCRATCH/$i.json" 2>"$SCRATCH/$i.err" || rc=$?
  if grep -q 'not found' "$SCRATCH/$i.trace"; then
    expect_eq "exit status with missing libraries" 1 "$rc"
  else
    expect_eq "exit status" 0 "$rc"
  fi
  if "$LIBPKG_PYTHON" "$COMPARE" "$SCRATCH/$i.json" "$SCRATCH/$i.trace" >"$SCRATCH/$i.cmp"; then
    pass
    log "  $(tail -1 "$SCRATCH/$i.cmp")"
  else
    fail "pkgtool ldd differs from ldd"
    sed 's/^/  | /' "$SCRATCH/$i.cmp" "$SCRATCH/$i.trace" >&2
  fi
done

case_begin "timing"
start=$(date +%s%N)
"$PKGTOOL" ldd --json "${files[@]}" >/dev/null 2>&1 || true
end=$(date +%s%N)
log "  pkgtool ldd on ${#files[@]} files: $(((end - start) / 1000000)) ms"
pass

finish
