#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Runs the whole test suite through ctest (gtest, integration scripts and
# Python cross-checks are all registered there), then the unit and
# integration tests again in an AddressSanitizer/UndefinedBehaviorSanitizer
# build. Expects scripts/setup.sh to have run.
#
#   LIBPKG_TEST_LABELS=...   ctest -L regex (default: everything but `long`)
#   LIBPKG_NO_SANITIZE=1     skip the sanitizer pass
#
# A skipped test (exit 77) is not a pass: every skip is listed, and the run
# fails on any skip that tests/skip-allowlist.txt does not name with its
# reason (a missing cross compiler or qemu would otherwise silently drop
# whole targets).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build_dir="${BUILD_DIR:-$root/build}"
jobs="${CTEST_JOBS:-2}"

label_args=(-LE long)
[[ -n "${LIBPKG_TEST_LABELS:-}" ]] && label_args=(-L "$LIBPKG_TEST_LABELS")
allowlist="$root/tests/skip-allowlist.txt"

# check_skips LOG ALLOWLIST (scripts/check_skips.sh)
source "$root/scripts/check_skips.sh"

# run_ctest LOG ARGS...: ctest, its output kept in LOG, then the skip check.
run_ctest() {
  local log=$1 rc=0
  shift
  ctest "$@" 2>&1 | tee "$log" || rc=$?
  check_skips "$log" "$allowlist" || rc=1
  return "$rc"
}

cmake --build "$build_dir"
run_ctest "$build_dir/ctest.log" --test-dir "$build_dir" --output-on-failure -j "$jobs" "${label_args[@]}"

if [[ "${LIBPKG_NO_SANITIZE:-0}" != 1 ]]; then
  asan_dir="$root/build-asan"
  cmake -S "$root" -B "$asan_dir" -G Ninja -DCMAKE_BUILD_TYPE=Debug \
    -DLIBPKG_SANITIZE=ON -DLIBPKG_PYTHON=/usr/bin/python3 \
    -DLIBPKG_PYTHON_BINDINGS=OFF -DLIBPKG_FUZZ=ON >/dev/null
  cmake --build "$asan_dir"
  # The sanitizer pass covers our own code paths (not the Python module: an
  # instrumented extension can't load into an uninstrumented interpreter);
  # the long and cross-arch groups add only emulator time here. The fuzz
  # targets (replay mode with gcc) run their seed corpora under the
  # sanitizers (label fuzz).
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
    run_ctest "$asan_dir/ctest.log" --test-dir "$asan_dir" --output-on-failure -j "$jobs" -L "unit|integration|sanitize|fuzz" -LE "long|cross|slow"
fi
