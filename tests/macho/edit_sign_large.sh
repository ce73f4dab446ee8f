#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Signing on edit reads only the pages it rehashes: `pkgtool macho edit` of
# a signed arm64 dylib with 200 MiB of __DATA (thin, and the arm64 slice of
# a universal2 file) re-signs it with a peak RSS far below the file size
# (bound 64 MiB; the file is 210 MB). Before, the editor copied the whole
# slice into memory to re-sign it (peak RSS above the file size). The
# result passes `pkgtool macho verify` and the independent
# tests/tools/macho_cs_verify.py, which recomputes every page hash, and the
# default in-place edit equals the --in-place-atomic one byte for byte.
source "$(dirname "$0")/fixtures.sh"
need_tools clang-14 ld64.lld-14 llvm-lipo-14 llvm-objdump-14
TIME=/usr/bin/time # Debian package `time` (scripts/setup.sh)
[[ -x $TIME ]] || { echo "FAIL: $TIME missing (scripts/setup.sh installs 'time')" >&2; exit 1; }
make_scratch
VERIFY=("$LIBPKG_PYTHON" "$LIBPKG_SOURCE_DIR/tests/tools/macho_cs_verify.py")
cd "$SCRATCH"
cat >big.c <<'C'
char big_data[200 * 1024 * 1024] = {1};
int big_fn(void) { return big_data[0]; }
C
cat >small.c <<'C'
int small_fn(void) { return 1; }
C
mcc arm64-apple-macos11 -dynamiclib -o big.dylib big.c -install_name /opt/big/libbig.dylib \
  -Wl,-headerpad_max_install_names
mcc x86_64-apple-macos10.15 -dynamiclib -o small.x86.dylib small.c -install_name /opt/big/libbig.dylib \
  -Wl,-headerpad_max_install_names -Wl,-adhoc_codesign
llvm-lipo-14 -create small.x86.dylib big.dylib -output fat.dylib
LIMIT_KIB=$((64 * 1024))

# edit_peak FILE ARGS...: edits FILE (-id plus an rpath), checks the peak RSS
# against LIMIT_KIB and that every signature still verifies.
edit_peak() {
  local f=$1
  shift
  "$TIME" -v -o rss.txt "$PKGTOOL" macho edit "$@" -id @rpath/libbig.dylib -add_rpath @loader_path "$f" \
    >last.out 2>last.err || { fail "edit $f $*: exit $?"; cat last.err >&2; return; }
  local kib
  kib=$(sed -n 's/.*Maximum resident set size (kbytes): //p' rss.txt)
  log "  $f $*: peak RSS $kib KiB for $(stat -c %s "$f") bytes"
  check "$f $*: peak RSS $kib KiB < $LIMIT_KIB KiB" test "$kib" -lt "$LIMIT_KIB"
  check "$f $*: id set" grep -q "@rpath/libbig.dylib" <(llvm-objdump-14 --macho --arch=all --dylib-id "$f")
  expect_status 0 "$f $*: pkgtool macho verify" "$PKGTOOL" macho verify "$f"
  expect_status 0 "$f $*: macho_cs_verify.py (every page)" "${VERIFY[@]}" "$f"
}

case_begin "thin signed 210 MB dylib, in place"
cp big.dylib thin.dylib
edit_peak thin.dylib
case_begin "thin signed 210 MB dylib, --in-place-atomic"
cp big.dylib thin-atomic.dylib
edit_peak thin-atomic.dylib --in-place-atomic
check "in place = atomic" cmp -s thin.dylib thin-atomic.dylib

case_begin "universal2 with the 210 MB arm64 slice, in place"
size=$(stat -c %s fat.dylib)
edit_peak fat.dylib
check "signatures kept their size (same file size)" test "$(stat -c %s fat.dylib)" = "$size"
finish
