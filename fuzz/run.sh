#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# fuzz/run.sh SECONDS [TARGET...]: builds the libFuzzer binaries with clang
# (instrumented libpkg, ASan + UBSan) in build-fuzz/ and fuzzes every target
# (or the ones named) for SECONDS each, starting from its seed corpus
# (seeds.sh) copied to a scratch directory: the committed seeds never grow.
# A crash does not end a target's time: libFuzzer is restarted on the grown
# corpus until SECONDS are used up. Crashers (and leaks, timeouts, OOMs) are
# written to fuzz/crashers/TARGET/; once fixed, commit them there and the
# seed-replay tests replay them. Prints target / execs / exec/s / corpus
# size / crashes, and exits 1 when anything crashed.
#
# Environment: LIBPKG_FUZZ_BUILD (build dir, default build-fuzz),
# LIBPKG_FUZZ_JOBS (build parallelism, default 2), LIBPKG_FUZZ_MAX_LEN
# (libFuzzer -max_len, default 65536).
set -euo pipefail

if [[ $# -lt 1 || ! $1 =~ ^[0-9]+$ ]]; then
  echo "usage: $0 SECONDS [TARGET...]" >&2
  exit 2
fi
seconds=$1
shift
root=$(cd "$(dirname "$0")/.." && pwd)
build=${LIBPKG_FUZZ_BUILD:-$root/build-fuzz}
jobs=${LIBPKG_FUZZ_JOBS:-2}
max_len=${LIBPKG_FUZZ_MAX_LEN:-65536}

all_targets=$(sed -n '/^set(LIBPKG_FUZZ_TARGETS/,/)/p' "$root/fuzz/CMakeLists.txt" |
  tr -d '()' | sed 's/set//; s/LIBPKG_FUZZ_TARGETS//' | xargs)
targets=("$@")
((${#targets[@]})) || read -r -a targets <<<"$all_targets"

launcher=()
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
fi
if [[ ! -f "$build/CMakeCache.txt" ]]; then
  CC=clang CXX=clang++ cmake -S "$root" -B "$build" -G Ninja \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DLIBPKG_FUZZ=ON -DLIBPKG_TEST=OFF \
    -DLIBPKG_BENCH=OFF -DLIBPKG_PYTHON_BINDINGS=OFF -DLIBPKG_INSTALL=OFF \
    -DLIBPKG_PYTHON=/usr/bin/python3 "${launcher[@]}" >/dev/null
fi
build_targets=(elf_view_seeds zip_read_seeds)
for t in "${targets[@]}"; do build_targets+=("${t}_fuzzer"); done
cmake --build "$build" -j "$jobs" --target "${build_targets[@]}"

logs=$build/fuzz-logs
mkdir -p "$logs"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
# Leaks and undefined behaviour are findings too.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

rows=()
failed=0
for t in "${targets[@]}"; do
  corpus=$scratch/$t/corpus
  artifacts=$root/fuzz/crashers/$t
  mkdir -p "$corpus" "$artifacts"
  LIBPKG_PYTHON=/usr/bin/python3 "$root/fuzz/seeds.sh" "$t" "$corpus" "$build/fuzz"
  execs=0 spent=0 run=0
  start=$(date +%s)
  while ((spent < seconds)); do
    log=$scratch/$t/log
    # The corpus directory grows (new units are written to it); crashers go
    # to the artifact prefix.
    "$build/fuzz/${t}_fuzzer" "$corpus" -max_total_time=$((seconds - spent)) \
      -max_len="$max_len" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
      -artifact_prefix="$artifacts/" >"$log" 2>&1 || true
    n=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    execs=$((execs + ${n:-0}))
    spent=$(($(date +%s) - start))
    run=$((run + 1))
    if grep -q "^artifact_prefix=.*Test unit written to" "$log"; then
      cp "$log" "$logs/$t.$run.log"
      echo "== $t: finding, log in $logs/$t.$run.log" >&2
    fi
    # libFuzzer exits at the first crash; anything else means time is up.
    grep -q '^Done [0-9]* runs in\|^INFO: fuzzing finished' "$log" && break
    ((run < 100)) || break
  done
  crashes=$(find "$artifacts" -type f -newermt "@$start" | wc -l)
  ((crashes == 0)) || failed=1
  rate=$((spent > 0 ? execs / spent : execs))
  size=$(find "$corpus" -type f | wc -l)
  rows+=("$(printf '%-16s %12s %10s %12s %8s' "$t" "$execs" "$rate" "$size" "$crashes")")
  rmdir "$artifacts" 2>/dev/null || true  # no empty directories in the tree
done

printf '%-16s %12s %10s %12s %8s\n' target execs exec/s corpus crashes
printf '%s\n' "${rows[@]}"
exit "$failed"
