#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Runs the whole test suite through ctest (gtest, integration scripts and
# Python cross-checks are all registered there), then the unit and
# integration tests again in an AddressSanitizer/UndefinedBehaviorSanitizer
# build. Expects scripts/setup.sh to have run.
#
#   LIBPKG_TEST_LABELS=...   ctest -L regex (default: everything but `long`)
#   LIBPKG_NO_SANITIZE=1     skip the sanitizer pass
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build_dir="${BUILD_DIR:-$root/build}"
jobs="${CTEST_JOBS:-2}"

label_args=(-LE long)
[[ -n "${LIBPKG_TEST_LABELS:-}" ]] && label_args=(-L "$LIBPKG_TEST_LABELS")

cmake --build "$build_dir"
ctest --test-dir "$build_dir" --output-on-failure -j "$jobs" "${label_args[@]}"

if [[ "${LIBPKG_NO_SANITIZE:-0}" != 1 ]]; then
  asan_dir="$root/build-asan"
  cmake -S "$root" -B "$asan_dir" -G Ninja -DCMAKE_BUILD_TYPE=Debug \
    -DLIBPKG_SANITIZE=ON -DLIBPKG_PYTHON=/usr/bin/python3 \
    -DLIBPKG_PYTHON_BINDINGS=OFF >/dev/null
  cmake --build "$asan_dir"
  # The sanitizer pass covers our own code paths (not the Python module: an
  # instrumented extension can't load into an uninstrumented interpreter);
  # the long and cross-arch groups add only emulator time here.
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
    ctest --test-dir "$asan_dir" --output-on-failure -j "$jobs" -L "unit|integration|sanitize" -LE "long|cross|slow"
fi
