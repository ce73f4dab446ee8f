#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# macOS `pkgtool repair` splices the wheel's edited members (docs/archives.md,
# "Splice"): the torch-like wheel (macos_fixtures.sh) with a 24 MiB __DATA
# blob in libtorchlike.dylib, whose edit changes its load commands in the
# first page and the page hashes of its signature, nothing else.
#
# Inputs: as `pkgtool wheel pack` writes it (restart points), re-zipped by
# Python's zipfile at level 6 (one stream per member), and stored (the
# reference: never spliced). Checked for each: libtorchlike was spliced
# (most of its deflate data re-used), zlib inflates every member from its
# local header to the central CRC-32 and size, `unzip -t` accepts it, its
# members are byte for byte those of the reference output, -j1 writes the
# same bytes as -j2, and with the chunk cache (cold, warm) the same bytes
# as without; every Mach-O member's signature verifies
# (tests/tools/macho_cs_verify.py, every page hash) and its install names
# and rpaths are the reference's (llvm-objdump-14, through macos_oracles.py).
source "$(dirname "$0")/macos_fixtures.sh"
need_tools clang-14 ld64.lld-14 llvm-objdump-14 unzip
make_scratch
cd "$SCRATCH"
SC=("$LIBPKG_PYTHON" "$LIBPKG_SOURCE_DIR/tests/bundle/lib/splicecheck.py")
ORACLE=("$LIBPKG_PYTHON" "$LIBPKG_SOURCE_DIR/tests/bundle/macos_oracles.py")
CSVERIFY=("$LIBPKG_PYTHON" "$LIBPKG_SOURCE_DIR/tests/tools/macho_cs_verify.py")
LIB=torch/lib/libtorchlike.dylib

case_begin "fixture"
build_torchlike "$SCRATCH/t" arm64-apple-macos11 arm64-apple-macos12 $((24 << 20))
mkdir -p in/pack
cp "$WHEEL" in/pack/
for how in stored 6; do
  mkdir -p "in/z$how"
  check "re-zip ($how)" "${SC[@]}" rezip "$WHEEL" "in/z$how/${WHEEL##*/}" "$how"
done

# repair_to NAME INPUT ARGS...: repairs the wheel in in/INPUT/ into out-NAME/, keeps
# the JSON as NAME.json and sets R to the output wheel.
repair_to() {
  local name=$1 input=$2
  shift 2
  expect_status 0 "repair $name" "$PKGTOOL" repair "in/$input"/*.whl -w "out-$name" \
    --dyld-library-path t/brew --json "$@"
  cp "$SCRATCH/last.out" "$name.json"
  R=$(ls "out-$name"/*.whl 2>/dev/null)
}

# machos DIR WHEEL: unpacks WHEEL into DIR, prints its Mach-O members.
machos() {
  rm -rf "$1" && mkdir -p "$1" && (cd "$1" && unzip -q "$2")
  (cd "$1" && find . -name '*.dylib' -o -name '*.so' | sort)
}

case_begin "reference: stored input, nothing spliced"
repair_to ref zstored --no-cache
REF=$R
check "the reference was not spliced" "$LIBPKG_PYTHON" -c '
import json, sys
r = json.load(open(sys.argv[1]))["result"]
assert r["spliced"] == 0, r' ref.json
check "libtorchlike edited in a few bytes" "${SC[@]}" unchanged-outside in/pack/*.whl "$REF" "$LIB" 65536
for f in $(machos ref "$SCRATCH/$REF"); do
  "${ORACLE[@]}" objdump "ref/$f" >"ref.${f//\//_}.json" || fail "objdump view of $f"
done

for input in pack z6; do
  case_begin "$input: spliced, same content as the reference"
  repair_to "$input" "$input" -j 2 --no-cache
  out=$R
  check "libtorchlike spliced" "${SC[@]}" spliced "$input.json" $((2 << 20))
  check "zlib inflates every member to its CRC" "${SC[@]}" inflate "$out"
  check "unzip -t" unzip -tqq "$out"
  check "same members and bytes as the reference" "${SC[@]}" same-content "$REF" "$out"
  for f in $(machos "x$input" "$SCRATCH/$out"); do
    check "signature valid: $f" "${CSVERIFY[@]}" "x$input/$f"
    "${ORACLE[@]}" objdump "x$input/$f" >"x$input.json" || fail "objdump view of $f"
    check "install names and rpaths as the reference: $f" cmp "x$input.json" "ref.${f//\//_}.json"
  done
  repair_to "$input-j1" "$input" -j 1 --no-cache
  check "-j1 writes the same bytes as -j2" cmp "$out" "$R"
  repair_to "$input-cold" "$input" -j 2 --cache-dir "$SCRATCH/cache-$input"
  check "cold cache = no cache" cmp "$out" "$R"
  repair_to "$input-warm" "$input" -j 2 --cache-dir "$SCRATCH/cache-$input"
  check "warm cache = no cache" cmp "$out" "$R"
done
finish
