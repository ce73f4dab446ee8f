#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# What `pkgtool repair` promises about a macOS wheel beyond bundling
# (macos_fixtures.sh; wheels linked at test time):
#   - the tag takes only the archs every loadable Mach-O file has: a
#     universal2 wheel with a thin extension is refused (exit 2, naming the
#     file and the arch), an arm64 wheel that grafts a universal2 library
#     stays arm64 (delocate tags both universal2);
#   - an extension linking the Python interpreter (Python.framework or
#     libpython*.dylib) is refused, never bundled (delocate#142), unless
#     --exclude'd;
#   - the SBOM of the grafts (<dist-info>/sboms/pkgtool.cdx.json, as the
#     ELF repair writes it): every graft with the SHA-256 of the file found
#     and where it was found; RECORD lists it; the same bytes twice;
#   - a member whose signature is already stale is refused, naming it;
#   - -L is --lib-sdir (delocate); a directory there is refused.
# Oracles: Python zipfile/hashlib (RECORD, SBOM hashes), llvm-objdump-14,
# macholib (tags from minos), `pkgtool check` (check_binary).
source "$(dirname "$0")/macos_fixtures.sh"
need_tools clang-14 ld64.lld-14 llvm-objdump-14 llvm-lipo-14
make_scratch
cd "$SCRATCH"
ORACLE=("$LIBPKG_PYTHON" "$LIBPKG_SOURCE_DIR/tests/bundle/macos_oracles.py")

# py_assert DESCRIPTION PYTHON_CODE ARGS...: runs the code with sys.argv.
py_assert() {
  local what=$1 code=$2
  shift 2
  check "$what" "$LIBPKG_PYTHON" -c "$code" "$@"
}

# A library and an extension for ARCHS (universal2 when both), packed as a
# wheel tagged TAG. uni/thin.so is x86_64 only when THIN is set.
echo 'int u(void) { return 1; }' >u.c
echo 'extern int u(void); int PyInit_m(void) { return u(); }' >m.c
for t in arm64-apple-macos11 x86_64-apple-macos10.15; do
  a=${t%%-*}
  mcc "$t" -dynamiclib -o "libu.$a.dylib" u.c -install_name @rpath/libu.dylib \
    -Wl,-headerpad_max_install_names
  mcc "$t" -bundle -o "m.$a.so" m.c "libu.$a.dylib" -Wl,-headerpad_max_install_names \
    -Wl,-rpath,"$SCRATCH/ext"
done
mkdir -p ext
llvm-lipo-14 -create libu.x86_64.dylib libu.arm64.dylib -output ext/libu.dylib

case_begin "a universal2 wheel with a thin extension is refused"
mkdir -p thin/tree/uni thin/dist
llvm-lipo-14 -create m.x86_64.so m.arm64.so -output thin/tree/uni/m.cpython-311-darwin.so
cp m.x86_64.so thin/tree/uni/thin.cpython-311-darwin.so
dist_info thin/tree uni 1.0 cp311-cp311-macosx_10_9_universal2
make_wheel thin/tree thin/dist
TW=thin/dist/uni-1.0-cp311-cp311-macosx_10_9_universal2.whl
expect_status 2 "repair" "$PKGTOOL" repair "$TW" -w out-thin
check "names the tag, the arch and the file" grep -q \
  "^error: $TW: the tag macosx_10_9_universal2 claims arm64+x86_64, but loadable Mach-O files lack an arch of it: arm64 lacked by uni/thin.cpython-311-darwin.so" \
  "$SCRATCH/last.err"
check "nothing written" test ! -e out-thin
# check_binary catches a wheel tagged so (as the old repair tagged it).
expect_status 1 "check_binary on such a wheel" "$PKGTOOL" check "$TW" --no-runtime
check "deployment-target names file and arch" grep -q \
  "uni/thin.cpython-311-darwin.so: has x86_64, but macosx_10_9_universal2 claims arm64+x86_64: no arm64 slice" \
  "$SCRATCH/last.out"

case_begin "an arm64 wheel grafting a universal2 library stays arm64"
mkdir -p a64/tree/uni a64/dist
cp m.arm64.so a64/tree/uni/m.cpython-311-darwin.so
dist_info a64/tree uni 1.0 cp311-cp311-macosx_11_0_arm64
make_wheel a64/tree a64/dist
AW=a64/dist/uni-1.0-cp311-cp311-macosx_11_0_arm64.whl
check "the graft is universal2 (the case can fail)" grep -q "architecture arm64" \
  <(llvm-objdump-14 --macho --universal-headers ext/libu.dylib)
expect_status 0 "repair" "$PKGTOOL" repair "$AW" -w out-a64 --json
check "tagged arm64, not universal2" test -f out-a64/uni-1.0-cp311-cp311-macosx_11_0_arm64.whl
py_assert "plan: tag and note" '
import json, sys
p = json.load(open(sys.argv[1]))
assert p["tags"] == ["macosx_11_0_arm64"] and p["arch_versions"] == {"arm64": "11.0"}, p
assert any("left out of the tag" in n and "x86_64 lacked by uni/m.cpython-311-darwin.so" in n
           for n in p["notes"]), p["notes"]
' "$SCRATCH/last.out"
expect_status 0 "check_binary passes it" "$PKGTOOL" check out-a64/uni-1.0-cp311-cp311-macosx_11_0_arm64.whl --no-runtime
check "the extra slice is a note" grep -q "uni/.dylibs/libu.dylib: also has x86_64, which macosx_11_0_arm64 does not claim" \
  <("$PKGTOOL" check out-a64/uni-1.0-cp311-cp311-macosx_11_0_arm64.whl --no-runtime -v)

case_begin "an extension linking the Python interpreter is refused, never bundled"
mkdir -p py/fw/Python.framework/Versions/3.11 py/lib py/tree/pyx py/dist
echo 'int Py_IsInitialized(void) { return 1; }' >py/py.c
echo 'extern int Py_IsInitialized(void); int PyInit_x(void) { return Py_IsInitialized(); }' >py/x.c
FW=/Library/Frameworks/Python.framework/Versions/3.11/Python
mcc arm64-apple-macos11 -dynamiclib -o py/fw/Python.framework/Versions/3.11/Python py/py.c -install_name "$FW"
mcc arm64-apple-macos11 -dynamiclib -o py/lib/libpython3.11.dylib py/py.c -install_name @rpath/libpython3.11.dylib
mcc arm64-apple-macos11 -bundle -o py/tree/pyx/fw.cpython-311-darwin.so py/x.c \
  py/fw/Python.framework/Versions/3.11/Python -Wl,-headerpad_max_install_names
mcc arm64-apple-macos11 -bundle -o py/tree/pyx/lib.cpython-311-darwin.so py/x.c \
  py/lib/libpython3.11.dylib -Wl,-rpath,"$SCRATCH/py/lib" -Wl,-headerpad_max_install_names
dist_info py/tree pyx 1.0 cp311-cp311-macosx_11_0_arm64
make_wheel py/tree py/dist
PW=py/dist/pyx-1.0-cp311-cp311-macosx_11_0_arm64.whl
check "the extensions link it (the case can fail)" grep -q "$FW" \
  <(llvm-objdump-14 --macho --dylibs-used py/tree/pyx/fw.cpython-311-darwin.so)
# Found (as delocate finds it on a Mac with that framework), still refused.
expect_status 2 "repair" "$PKGTOOL" repair "$PW" -w out-py --dyld-library-path py/fw/Python.framework/Versions/3.11
check "names both extensions and what they link" grep -q \
  "^error: $PW: pyx/fw.cpython-311-darwin.so (arm64) links $FW; pyx/lib.cpython-311-darwin.so (arm64) links @rpath/libpython3.11.dylib: an extension module must not link the Python interpreter's library.*-undefined dynamic_lookup" \
  "$SCRATCH/last.err"
check "nothing written" test ! -e out-py
expect_status 0 "--exclude leaves the references as they are" "$PKGTOOL" repair "$PW" -w out-pyx \
  --exclude '*Python.framework*' --exclude 'libpython*'
check "not bundled" bash -c "! unzip -l out-pyx/*.whl | grep -qi 'python.framework\|libpython'"

case_begin "SBOM of the grafts"
build_torchlike "$SCRATCH/t"
W=$WHEEL
expect_status 0 "repair" "$PKGTOOL" repair "$W" -w sb1 --dyld-library-path t/brew
expect_status 0 "repair again" "$PKGTOOL" repair "$W" -w sb2 --dyld-library-path t/brew
SB=torch-2.5.0-cp311-cp311-macosx_12_0_arm64.whl
check "the same bytes twice" cmp -s "sb1/$SB" "sb2/$SB"
# With a chunk cache the graft's hash is memoized under the file's identity
# (archive/file_digest.hpp), once the file is 2 s old: one 64-byte entry
# (header and digest; the wheel's members are too small for chunk entries).
sleep 2.1
expect_status 0 "repair with a cache" "$PKGTOOL" repair "$W" -w sb3 --dyld-library-path t/brew --cache-dir sbc
expect_status 0 "repair with the warm cache" "$PKGTOOL" repair "$W" -w sb4 --dyld-library-path t/brew --cache-dir sbc
check "the same bytes with a cold and a warm cache" bash -c "cmp -s sb1/$SB sb3/$SB && cmp -s sb1/$SB sb4/$SB"
check "the graft's digest memoized" test "$(find sbc -type f -size 64c -name '[0-9a-f]*' | wc -l)" -eq 1
"${ORACLE[@]}" record "sb1/$SB" >rec.json || fail "RECORD/zipfile check (the SBOM included)"
py_assert "SBOM: every graft, its hash and where it was found" '
import hashlib, json, sys, zipfile
z = zipfile.ZipFile(sys.argv[1]); d = sys.argv[2]
rec = json.load(open(sys.argv[3]))
member = "torch-2.5.0.dist-info/sboms/pkgtool.cdx.json"
assert member in rec["members"], rec["members"]
doc = json.loads(z.read(member))
assert doc["bomFormat"] == "CycloneDX" and doc["specVersion"] == "1.4", doc
meta = doc["metadata"]["component"]
assert meta["name"] == "torch" and meta["version"] == "2.5.0", meta
assert meta["purl"] == "pkg:pypi/torch@2.5.0?file_name=torch-2.5.0-cp311-cp311-macosx_12_0_arm64.whl", meta
[c] = doc["components"]
src = d + "/t/build/lib/libgraft.dylib"
assert c["bom-ref"] == "torch/.dylibs/libgraft.dylib" and c["name"] == "libgraft.dylib", c
assert c["hashes"] == [{"alg": "SHA-256", "content": hashlib.sha256(open(src, "rb").read()).hexdigest()}], c
props = {(p["name"], p["value"]) for p in c["properties"]}
assert ("libpkg:source_path", src) in props and ("libpkg:install_name", "@rpath/libgraft.dylib") in props, props
assert doc["dependencies"] == [{"ref": meta["bom-ref"], "dependsOn": ["torch/.dylibs/libgraft.dylib"]}], doc
' "sb1/$SB" "$SCRATCH" rec.json
expect_status 0 "pkgtool wheel verify" "$PKGTOOL" wheel verify "sb1/$SB"
expect_status 0 "check_binary passes" "$PKGTOOL" check "sb1/$SB" --no-runtime
mkdir -p nosb/tree/uni nosb/dist
cp m.arm64.so nosb/tree/uni/m.cpython-311-darwin.so
cp libu.arm64.dylib nosb/tree/uni/libu.dylib
mcc arm64-apple-macos11 -bundle -o nosb/tree/uni/m.cpython-311-darwin.so m.c nosb/tree/uni/libu.dylib \
  -Wl,-rpath,@loader_path -Wl,-headerpad_max_install_names
dist_info nosb/tree uni 1.0 cp311-cp311-macosx_11_0_arm64
make_wheel nosb/tree nosb/dist
expect_status 0 "a repair that grafts nothing" "$PKGTOOL" repair nosb/dist/uni-1.0-cp311-cp311-macosx_11_0_arm64.whl -w nosb-out
check "writes no SBOM" bash -c "! unzip -l nosb-out/*.whl | grep -q sboms/"

case_begin "a member whose signature is already stale is refused, naming it"
# libtorchlike's page 0 no longer matches its signature (an edit without
# re-signing): re-signing only the pages the repair edits would hide that.
cp -r t/tree stale-tree && mkdir -p stale-dist
"$PKGTOOL" macho edit --no-sign -add_rpath @loader_path/x stale-tree/torch/lib/libtorchlike.dylib 2>/dev/null
make_wheel stale-tree stale-dist
SW=stale-dist/torch-2.5.0-cp311-cp311-macosx_11_0_arm64.whl
expect_status 2 "repair" "$PKGTOOL" repair "$SW" -w out-stale --dyld-library-path t/brew
check "names the wheel, the member, the slice and the page" grep -q \
  "^error: $SW: torch/lib/libtorchlike.dylib (arm64): the code signature does not verify before the edit (CodeDirectory 0 (hash type 2): page 0 " \
  "$SCRATCH/last.err"
check "nothing written" test ! -e out-stale
expect_status 0 "--no-sign repairs it (signatures left stale)" "$PKGTOOL" repair "$SW" -w out-stale2 \
  --dyld-library-path t/brew --no-sign

case_begin "-L is --lib-sdir (delocate)"
expect_status 0 "-L .libsx" "$PKGTOOL" repair "$W" -w lsd --dyld-library-path t/brew -L .libsx --dry-run --json
py_assert "graft in torch/.libsx" '
import json, sys
p = json.load(open(sys.argv[1]))
assert p["lib_dir"] == "torch/.libsx" and [g["member"] for g in p["grafts"]] == ["torch/.libsx/libgraft.dylib"], p
' "$SCRATCH/last.out"
expect_status 2 "-L DIR" "$PKGTOOL" repair "$W" -w lsd2 -L t/brew
check "says -L is --lib-sdir" grep -q "^error: -L t/brew: -L is --lib-sdir.*--dyld-library-path DIR" "$SCRATCH/last.err"
check "nothing written" test ! -e lsd2

finish
