#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# `pkgtool wheel fuse` (delocate-merge): two single-arch wheels built at test
# time (arm64 macOS 11 and x86_64 macOS 10.15, clang-14 + ld64.lld) become
# one universal2 wheel, refused (exit 2, naming the file and the arch it
# lacks, nothing written) when a loadable Mach-O file lacks an arch of the
# tag. Every fused member is byte-identical to
# `llvm-lipo-14 -create A B` of the two members (in argument order, both
# orders), llvm-objdump-14 reads its fat header, equal members are copied
# raw, one-sided members are kept, WHEEL and the name carry the universal2
# tag, RECORD matches every member (Python zipfile, `wheel verify`).
# Differing non-Mach-O files are refused (exit 2, naming them, nothing
# written) unless --prefer a|b; not a wheel, mismatching names and a
# common arch exit 2 naming the file.
source "$LIBPKG_SOURCE_DIR/tests/macho/fixtures.sh"
need_tools clang-14 ld64.lld-14 llvm-lipo-14 llvm-objdump-14
make_scratch
D=$SCRATCH
export SOURCE_DATE_EPOCH=1600000000
PY=$LIBPKG_PYTHON

cat >"$D/ext.c" <<'C'
int ext_fn(void) { return 7; }
C
cat >"$D/lib.c" <<'C'
int lib_fn(void) { return 9; }
C

# tree DIR TARGET ARCH TAG: an unpacked wheel of demo 1.0.
tree() {
  local t=$1 target=$2 arch=$3 tag=$4
  mkdir -p "$t/demo/.dylibs" "$t/demo-1.0.dist-info"
  printf 'Metadata-Version: 2.1\nName: demo\nVersion: 1.0\n' >"$t/demo-1.0.dist-info/METADATA"
  printf 'Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: false\nTag: cp311-cp311-%s\n' \
    "$tag" >"$t/demo-1.0.dist-info/WHEEL"
  printf 'from ._ext import *\n' >"$t/demo/__init__.py"
  printf 'shared data\n' >"$t/demo/data.txt"
  mcc "$target" -bundle -o "$t/demo/_ext.cpython-311-darwin.so" "$D/ext.c"
  mcc "$target" -dynamiclib -o "$t/demo/.dylibs/libfoo.dylib" "$D/lib.c" \
    -install_name @rpath/libfoo.dylib
  printf 'only %s\n' "$arch" >"$t/demo/only_$arch.txt"
}
tree "$D/ta" arm64-apple-macos11 arm64 macosx_11_0_arm64
tree "$D/tb" x86_64-apple-macos10.15 x86_64 macosx_10_15_x86_64
# A Mach-O file only one wheel has: already universal (both archs), so the
# fused wheel may still be universal2.
mcc arm64-apple-macos11 -dynamiclib -o "$D/libarm.arm64" "$D/lib.c" \
  -install_name @rpath/libarm.dylib
mcc x86_64-apple-macos10.15 -dynamiclib -o "$D/libarm.x86_64" "$D/lib.c" \
  -install_name @rpath/libarm.dylib
llvm-lipo-14 -create "$D/libarm.arm64" "$D/libarm.x86_64" \
  -output "$D/ta/demo/.dylibs/libarm.dylib"
mkdir -p "$D/in"
"$PKGTOOL" wheel pack "$D/ta" -d "$D/in" >/dev/null
"$PKGTOOL" wheel pack "$D/tb" -d "$D/in" >/dev/null
A=$D/in/demo-1.0-cp311-cp311-macosx_11_0_arm64.whl
B=$D/in/demo-1.0-cp311-cp311-macosx_10_15_x86_64.whl
U=demo-1.0-cp311-cp311-macosx_10_15_universal2.whl
FUSED=("demo/_ext.cpython-311-darwin.so" "demo/.dylibs/libfoo.dylib")

# member WHEEL NAME OUT: extract one member.
member() {
  "$PY" -c 'import sys, zipfile; open(sys.argv[3], "wb").write(zipfile.ZipFile(sys.argv[1]).read(sys.argv[2]))' "$@"
}

case_begin "fuse arm64 + x86_64: universal2, members as llvm-lipo-14 -create"
for order in ab ba; do
  if [[ $order == ab ]]; then first=$A second=$B; else first=$B second=$A; fi
  out=$D/out.$order
  expect_status 0 "$order: fuse" "$PKGTOOL" wheel fuse "$first" "$second" -w "$out"
  check "$order: universal2 name" test -f "$out/$U"
  check "$order: nothing else written" test "$(ls -A "$out")" = "$U"
  for m in "${FUSED[@]}"; do
    member "$first" "$m" "$D/m1"
    member "$second" "$m" "$D/m2"
    member "$out/$U" "$m" "$D/fused"
    llvm-lipo-14 -create "$D/m1" "$D/m2" -output "$D/lipo"
    expect_same_file "$order: $m = llvm-lipo-14 -create" "$D/lipo" "$D/fused"
  done
done
O=$D/out.ab/$U
member "$O" demo/.dylibs/libfoo.dylib "$D/foo"
llvm-objdump-14 --macho --universal-headers "$D/foo" >"$D/uh.txt"
check "objdump: two fat archs" grep -q '^nfat_arch 2$' "$D/uh.txt"
check "objdump: x86_64 slice" grep -q 'cputype CPU_TYPE_X86_64' "$D/uh.txt"
check "objdump: arm64 slice" grep -q 'cputype CPU_TYPE_ARM64' "$D/uh.txt"
expect_status 0 "wheel verify" "$PKGTOOL" wheel verify "$O"
expect_status 0 "zipfile + wheel's WheelFile read every member against RECORD" \
  "$PY" "$LIBPKG_SOURCE_DIR/tests/wheel/lib/wheelcheck.py" read "$O"

"$PY" - "$A" "$B" "$O" >"$D/facts.txt" <<'PY'
import base64, csv, hashlib, io, os, sys, zipfile
sys.path.insert(0, os.path.join(os.environ["LIBPKG_SOURCE_DIR"], "tests/wheel/lib"))
from wheelcheck import raw_bytes
a, b, o = (zipfile.ZipFile(p) for p in sys.argv[1:])
def raw(z, info):
    return raw_bytes(z.filename, info)
rows = list(csv.reader(io.StringIO(o.read("demo-1.0.dist-info/RECORD").decode())))
listed = {r[0]: r for r in rows}
for info in o.infolist():
    name = info.filename
    data = o.read(name)
    row = listed.get(name)
    if name.endswith("RECORD"):
        print("record-row", name, row is not None and row[1] == "")
        continue
    digest = "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    ok = row is not None and row[1] == digest and row[2] == str(len(data))
    print("hash", "ok" if ok else "BAD", name)
    for side, z in (("a", a), ("b", b)):
        try:
            i = z.getinfo(name)
        except KeyError:
            continue
        if raw(z, i) == raw(o, info):
            print("raw", side, name)
print("rows", len(rows), "members", len(o.infolist()))
print("tag", [l for l in o.read("demo-1.0.dist-info/WHEEL").decode().splitlines() if l.startswith("Tag:")])
PY
check "RECORD: every member hashed right" test "$(grep -c '^hash BAD' "$D/facts.txt")" = 0
check "RECORD: a row per member" grep -q '^rows 10 members 10$' "$D/facts.txt"
expect_eq "WHEEL tag" "tag ['Tag: cp311-cp311-macosx_10_15_universal2']" "$(grep '^tag' "$D/facts.txt")"
for m in demo/__init__.py demo/data.txt demo/only_arm64.txt demo/.dylibs/libarm.dylib \
  demo-1.0.dist-info/METADATA; do
  check "$m copied raw from a" grep -qx "raw a $m" "$D/facts.txt"
done
check "demo/only_x86_64.txt copied raw from b" grep -qx "raw b demo/only_x86_64.txt" "$D/facts.txt"
check "inputs untouched" "$PKGTOOL" wheel verify "$A" "$B"

case_begin "a thin Mach-O file only one wheel has: not universal2, exit 2"
# delocate-merge would tag this universal2; the extension cannot load on arm64.
rm -rf "$D/te" && cp -r "$D/tb" "$D/te"
mcc x86_64-apple-macos10.15 -bundle -o "$D/te/demo/_x86only.cpython-311-darwin.so" "$D/ext.c"
mkdir -p "$D/in4"
"$PKGTOOL" wheel pack "$D/te" -d "$D/in4" >/dev/null
E=$D/in4/demo-1.0-cp311-cp311-macosx_10_15_x86_64.whl
for order in ab ba; do
  if [[ $order == ab ]]; then first=$A second=$E; else first=$E second=$A; fi
  expect_exit "$order: x86_64-only extension refused" 2 \
    "^error: $U: would be tagged macosx_10_15_universal2 but 1 loadable Mach-O file\(s\) lack an architecture of that tag: demo/_x86only.cpython-311-darwin.so lacks arm64$" \
    "$PKGTOOL" wheel fuse "$first" "$second" -w "$D/out.thin"
done
check "nothing written" test ! -e "$D/out.thin"

case_begin "differing non-Mach-O file: error unless --prefer"
rm -rf "$D/tc" && cp -r "$D/tb" "$D/tc"
printf 'different\n' >"$D/tc/demo/data.txt"
mkdir -p "$D/in2"
"$PKGTOOL" wheel pack "$D/tc" -d "$D/in2" >/dev/null
C=$D/in2/demo-1.0-cp311-cp311-macosx_10_15_x86_64.whl
expect_exit "differing file refused" 2 "^error: .*macosx_10_15_x86_64.whl: 1 file\(s\) differ .*: demo/data.txt \(pass --prefer" \
  "$PKGTOOL" wheel fuse "$A" "$C" -w "$D/out.diff"
check "nothing written" test ! -e "$D/out.diff/$U"
for side in a b; do
  expect_status 0 "--prefer $side" "$PKGTOOL" wheel fuse "$A" "$C" -w "$D/out.$side" --prefer $side
  member "$D/out.$side/$U" demo/data.txt "$D/data.$side"
  expect_status 0 "--prefer $side verifies" "$PKGTOOL" wheel verify "$D/out.$side/$U"
done
expect_eq "--prefer a takes a's copy" "shared data" "$(cat "$D/data.a")"
expect_eq "--prefer b takes b's copy" "different" "$(cat "$D/data.b")"
member "$D/out.b/$U" demo/.dylibs/libfoo.dylib "$D/foo.b"
expect_same_file "--prefer b: Mach-O still fused" "$D/foo" "$D/foo.b"

case_begin "bad input: exit 2 naming the file, nothing written"
printf 'not a zip\n' >"$D/in/demo-1.0-cp311-cp311-macosx_11_0_x86_64.whl"
expect_exit "not a wheel" 2 "^error: .*demo-1.0-cp311-cp311-macosx_11_0_x86_64.whl" \
  "$PKGTOOL" wheel fuse "$A" "$D/in/demo-1.0-cp311-cp311-macosx_11_0_x86_64.whl" -w "$D/bad"
cp "$B" "$D/in/notawheel.zip"
expect_exit "not a wheel name" 2 "^error: .*notawheel.zip" \
  "$PKGTOOL" wheel fuse "$A" "$D/in/notawheel.zip" -w "$D/bad"
sed -i 's/Version: 1.0/Version: 2.0/' "$D/tc/demo-1.0.dist-info/METADATA"
mv "$D/tc/demo-1.0.dist-info" "$D/tc/demo-2.0.dist-info"
"$PKGTOOL" wheel pack "$D/tc" -d "$D/in2" >/dev/null
expect_exit "version mismatch" 2 "^error: .*demo-2.0-cp311-cp311-macosx_10_15_x86_64.whl: version 2.0 differs from .*macosx_11_0_arm64.whl's 1.0" \
  "$PKGTOOL" wheel fuse "$A" "$D/in2/demo-2.0-cp311-cp311-macosx_10_15_x86_64.whl" -w "$D/bad"
# Two arm64 wheels whose dylibs differ: lipo refuses one arch twice.
rm -rf "$D/td" && cp -r "$D/ta" "$D/td"
printf 'int lib_fn(void) { return 10; }\n' >"$D/lib2.c"
mcc arm64-apple-macos11 -dynamiclib -o "$D/td/demo/.dylibs/libfoo.dylib" "$D/lib2.c" \
  -install_name @rpath/libfoo.dylib
sed -i 's/macosx_11_0_arm64/macosx_12_0_arm64/' "$D/td/demo-1.0.dist-info/WHEEL"
mkdir -p "$D/in3"
"$PKGTOOL" wheel pack "$D/td" -d "$D/in3" >/dev/null
expect_exit "same arch twice" 2 "^error: .*libfoo.dylib.*same architecture arm64" \
  "$PKGTOOL" wheel fuse "$A" "$D/in3/demo-1.0-cp311-cp311-macosx_12_0_arm64.whl" -w "$D/bad"
expect_exit "fuse needs -w" 2 "needs -w DIR" "$PKGTOOL" wheel fuse "$A" "$B"
check "nothing written for bad input" test ! -e "$D/bad"

finish
