#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# `pkgtool macho lipo` against llvm-lipo-14 on dylibs and executables linked
# at test time: -create output byte-identical (slice order, per-CPU
# alignment, offsets; inputs in either order, one slice),
# -thin byte-identical, -info text identical; bad input (one arch twice, not
# Mach-O, -thin of a thin file, an arch the file lacks) exits 2 naming the
# file and writes nothing.
source "$(dirname "$0")/fixtures.sh"
need_tools clang-14 ld64.lld-14 llvm-lipo-14
make_scratch
D=$SCRATCH
cat >"$D/a.c" <<'C'
int lib_fn(void) { return 7; }
C
cat >"$D/main.c" <<'C'
int main(void) { return 0; }
C
for t in x86_64-apple-macos10.15:x86_64 arm64-apple-macos11:arm64; do
  a=${t##*:}
  mcc "${t%%:*}" -dynamiclib -o "$D/lib.$a.dylib" "$D/a.c" -install_name @rpath/lib.dylib
  mcc "${t%%:*}" -o "$D/exe.$a" "$D/main.c" -Wl,-e,_main
done

case_begin "-create: byte-identical to llvm-lipo-14"
for kind in lib.%s.dylib exe.%s; do
  x=$D/$(printf "$kind" x86_64) arm=$D/$(printf "$kind" arm64)
  for order in "$x $arm" "$arm $x" "$arm"; do
    name=$(for f in $order; do basename "$f"; done | tr '\n' +)
    # shellcheck disable=SC2086
    expect_status 0 "$name: pkgtool" "$PKGTOOL" macho lipo -create $order -output "$D/$name.ours"
    # shellcheck disable=SC2086
    llvm-lipo-14 -create $order -output "$D/$name.llvm"
    check "$name: identical" cmp "$D/$name.ours" "$D/$name.llvm"
  done
done

case_begin "-thin: byte-identical to llvm-lipo-14"
llvm-lipo-14 -create "$D/lib.x86_64.dylib" "$D/lib.arm64.dylib" -output "$D/fat3"
for a in x86_64 arm64; do
  expect_status 0 "-thin $a" "$PKGTOOL" macho lipo -thin $a "$D/fat3" -output "$D/thin.$a"
  llvm-lipo-14 -thin $a "$D/fat3" -output "$D/thin.$a.llvm"
  check "-thin $a identical" cmp "$D/thin.$a" "$D/thin.$a.llvm"
  check "-thin $a is the input" cmp "$D/thin.$a" "$D/lib.$a.dylib"
done

case_begin "-info: llvm-lipo-14's text"
files=("$D/lib.arm64.dylib" "$D/fat3" "$D/exe.x86_64")
check "-info" diff <("$PKGTOOL" macho lipo -info "${files[@]}") <(llvm-lipo-14 -info "${files[@]}")

case_begin "bad input: exit 2, error names the file, nothing written"
printf 'not a mach-o file at all' >"$D/text"
bad() {
  local what=$1 pattern=$2
  shift 2
  local rc=0
  "$PKGTOOL" macho lipo "$@" 2>"$D/err" || rc=$?
  check "$what: exit 2" test "$rc" = 2
  check "$what: message" grep -q "^error: .*$pattern" "$D/err"
  check "$what: no output" test ! -e "$D/out"
}
bad "same arch twice" "lib.arm64.dylib.*same architecture arm64" -create "$D/lib.arm64.dylib" "$D/exe.arm64" -output "$D/out"
bad "not Mach-O" "text: not a Mach-O file" -create "$D/lib.arm64.dylib" "$D/text" -output "$D/out"
bad "-thin of a thin file" "lib.arm64.dylib: a thin file" -thin arm64 "$D/lib.arm64.dylib" -output "$D/out"
bad "-thin of a missing arch" "fat3: no i386 slice" -thin i386 "$D/fat3" -output "$D/out"
bad "-info of a non-Mach-O" "text: not a Mach-O file" -info "$D/text"
bad "no mode" "one of -create" "$D/fat3"

finish
