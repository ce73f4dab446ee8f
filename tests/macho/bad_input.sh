#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Malformed Mach-O files made at test time from real fixtures (truncated,
# not Mach-O, sizeofcmds/cmdsize/string offsets out of range, overlapping or
# truncated fat slices, fat align above 2^15): `pkgtool inspect` and `pkgtool macho edit` both
# exit 2 with `error: FILE (arch): ...` naming the structure and both
# values, and the input is never modified.
source "$(dirname "$0")/fixtures.sh"
need_tools clang-14 ld64.lld-14 llvm-lipo-14
make_scratch
D=$SCRATCH/fx
mkdir -p "$D"
echo 'int f(void) { return 1; }' >"$D/f.c"
mcc arm64-apple-macos11 -dynamiclib -o "$D/arm.dylib" "$D/f.c" -install_name @rpath/libf.dylib \
  -Wl,-rpath,/opt/x -Wl,-headerpad_max_install_names
mcc x86_64-apple-macos10.15 -dynamiclib -o "$D/x86.dylib" "$D/f.c" -install_name @rpath/libf.dylib \
  -Wl,-rpath,/opt/x -Wl,-headerpad_max_install_names
llvm-lipo-14 -create "$D/x86.dylib" "$D/arm.dylib" -output "$D/fat.dylib"

# corrupt NAME SOURCE HOW: a copy of SOURCE with one field patched.
corrupt() {
  "$LIBPKG_PYTHON" - "$2" "$SCRATCH/$1" "$3" <<'PY'
import struct, sys
src, dst, how = sys.argv[1:4]
b = bytearray(open(src, "rb").read())
def cmds():
    off, n = 32, struct.unpack_from("<I", b, 16)[0]
    for i in range(n):
        cmd, size = struct.unpack_from("<II", b, off)
        yield i, off, cmd, size
        off += size
if how == "sizeofcmds":
    struct.pack_into("<I", b, 20, 0xFFFFFF00)
elif how == "cmdsize":
    i, off, cmd, size = list(cmds())[-1]
    struct.pack_into("<I", b, off + 4, 0x10000)
elif how == "cmdsize0":
    struct.pack_into("<I", b, 32 + 4, 0)
elif how == "rpath-offset":
    i, off, cmd, size = next(c for c in cmds() if c[2] == 0x8000001C)
    struct.pack_into("<I", b, off + 8, 0x100)
elif how == "fat-overlap":
    # the second slice starts inside the first
    first_off = struct.unpack_from(">I", b, 8 + 8)[0]
    struct.pack_into(">I", b, 8 + 20 + 8, first_off + 0x100)
elif how.startswith("fat-align-"):
    # slice 0's align (log2): llvm-lipo refuses more than 15
    struct.pack_into(">I", b, 8 + 16, int(how[len("fat-align-"):]))
elif how == "fat-past-end":
    b = b[: len(b) - 0x1000]
open(dst, "wb").write(b)
PY
}

# bad NAME FILE PATTERN: both commands fail with exit 2 and PATTERN, and
# leave FILE as it was.
bad() {
  local name=$1 f=$2 pat=$3
  case_begin "$name"
  cp "$f" "$SCRATCH/before"
  expect_status 2 "$name: inspect" "$PKGTOOL" inspect "$f"
  check "$name: inspect message" grep -Eq "^error: $(printf '%s' "$f" | sed 's/[.[\*^$()+?{|]/\\&/g')$pat" "$SCRATCH/last.err"
  [[ $FAILS == 0 ]] || cat "$SCRATCH/last.err" >&2
  expect_status 2 "$name: macho edit" "$PKGTOOL" macho edit -add_rpath /new "$f"
  check "$name: edit message" grep -Eq "$pat" "$SCRATCH/last.err"
  check "$name: input untouched" cmp -s "$f" "$SCRATCH/before"
}

head -c 20 "$D/arm.dylib" >"$SCRATCH/trunc-header"
bad "truncated header" "$SCRATCH/trunc-header" " \(arm64\): truncated: mach header needs 0x20 bytes, slice has 0x14"
head -c 100 "$D/arm.dylib" >"$SCRATCH/trunc-cmds"
bad "truncated load commands" "$SCRATCH/trunc-cmds" " \(arm64\): sizeofcmds 0x[0-9a-f]+ past the end of the slice: header 0x20 \+ 0x[0-9a-f]+ > size 0x64"
printf 'just some text\n' >"$SCRATCH/text"
case_begin "not Mach-O"
expect_status 2 "edit of a text file" "$PKGTOOL" macho edit -id x "$SCRATCH/text"
check "message" grep -q "^error: $SCRATCH/text: not a Mach-O file (magic 0x7473756a)" "$SCRATCH/last.err"
corrupt sizeofcmds "$D/arm.dylib" sizeofcmds
bad "sizeofcmds out of range" "$SCRATCH/sizeofcmds" " \(arm64\): sizeofcmds 0xffffff00 past the end of the slice"
corrupt cmdsize "$D/x86.dylib" cmdsize
bad "cmdsize out of range" "$SCRATCH/cmdsize" " \(x86_64\): load command [0-9]+ \(LC_[A-Z_]+\): cmdsize 0x10000 extends past sizeofcmds 0x[0-9a-f]+"
corrupt cmdsize0 "$D/arm.dylib" cmdsize0
bad "cmdsize zero" "$SCRATCH/cmdsize0" " \(arm64\): load command 0 \(LC_SEGMENT_64\): cmdsize 0x0 is not a positive multiple of 8"
corrupt rpath-offset "$D/arm.dylib" rpath-offset
bad "rpath string offset" "$SCRATCH/rpath-offset" " \(arm64\): load command [0-9]+ \(LC_RPATH\): path offset 0x100 past cmdsize 0x18"
corrupt fat-overlap "$D/fat.dylib" fat-overlap
bad "overlapping fat slices" "$SCRATCH/fat-overlap" " \((arm64|x86_64)\): fat slice at 0x[0-9a-f]+ overlaps the (arm64|x86_64) slice 0x[0-9a-f]+\+0x[0-9a-f]+"
corrupt fat-past-end "$D/fat.dylib" fat-past-end
bad "fat slice past the end" "$SCRATCH/fat-past-end" " \(arm64\): fat_arch 1: slice 0x[0-9a-f]+\+0x[0-9a-f]+ past the end of the file"
for a in 64 70; do
  corrupt fat-align-$a "$D/fat.dylib" fat-align-$a
  pat=" \(x86_64\): fat_arch 0: align 2\^$a above the maximum 2\^15"
  bad "fat align 2^$a" "$SCRATCH/fat-align-$a" "$pat"
  # lipo used to shift 1 by the align (undefined behaviour from 64 on).
  expect_status 2 "fat align 2^$a: lipo -create" "$PKGTOOL" macho lipo -create "$SCRATCH/fat-align-$a" -output "$SCRATCH/lipo-out"
  check "fat align 2^$a: lipo message" grep -Eq "$pat" "$SCRATCH/last.err"
  check "fat align 2^$a: no lipo output" test ! -e "$SCRATCH/lipo-out"
done
corrupt fat-align-15 "$D/fat.dylib" fat-align-15
case_begin "fat align 2^15 (the maximum) is accepted"
expect_status 0 "inspect" "$PKGTOOL" inspect "$SCRATCH/fat-align-15"

finish
