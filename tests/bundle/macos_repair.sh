#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# `pkgtool repair` on macOS wheels linked at test time (macos_fixtures.sh):
# the torch-like wheel (extension -> @rpath/libtorchlike.dylib -> Homebrew
# libomp by absolute install name, found through --dyld-library-path, while
# the wheel has torch/lib/libomp.dylib; -> @rpath/libgraft.dylib through a
# build rpath), a duplicate and a build rpath; a universal2 wheel; bad input.
#
# Oracles: llvm-objdump-14 (--dylibs-used --dylib-id --rpaths, per arch),
# llvm-otool-14 -l, macholib (minos, as delocate reads it),
# tests/tools/macho_cs_verify.py (every page hash), Python zipfile (RECORD,
# raw copies), `pkgtool ldd` (everything resolves inside the wheel).
source "$(dirname "$0")/macos_fixtures.sh"
need_tools clang-14 ld64.lld-14 llvm-objdump-14 llvm-otool-14 llvm-lipo-14
make_scratch
cd "$SCRATCH"
ORACLE=("$LIBPKG_PYTHON" "$LIBPKG_SOURCE_DIR/tests/bundle/macos_oracles.py")
CSVERIFY=("$LIBPKG_PYTHON" "$LIBPKG_SOURCE_DIR/tests/tools/macho_cs_verify.py")

build_torchlike "$SCRATCH/t"
W=$WHEEL
IN_SUM=$(sha256sum "$W")
OUT_NAME=torch-2.5.0-cp311-cp311-macosx_12_0_arm64.whl

# py_assert DESCRIPTION PYTHON_CODE ARGS...: runs the code with sys.argv.
py_assert() {
  local what=$1 code=$2
  shift 2
  check "$what" "$LIBPKG_PYTHON" -c "$code" "$@"
}

# unpack_to DIR WHEEL
unpack_to() {
  rm -rf "$1" && mkdir -p "$1" && (cd "$1" && unzip -q "$2")
}

# view NAME FILE: the objdump and otool views of FILE, saved as NAME.*.json
view() {
  "${ORACLE[@]}" objdump "$2" >"$1.objdump.json"
  "${ORACLE[@]}" otool "$2" >"$1.otool.json"
}

case_begin "plan: --dry-run --json"
expect_status 0 "dry run" "$PKGTOOL" repair "$W" -w out --dyld-library-path t/brew --dry-run --json
cp "$SCRATCH/last.out" plan.json
check "dry run writes nothing" test ! -e out
py_assert "plan" '
import json, sys
p = json.load(open(sys.argv[1])); d = sys.argv[2]
assert p["schema"] == "libpkg-macos-repair-plan/1", p["schema"]
assert p["output"] == "torch-2.5.0-cp311-cp311-macosx_12_0_arm64.whl", p["output"]
assert p["tags"] == ["macosx_12_0_arm64"] and p["arch_versions"] == {"arm64": "12.0"}, p
assert p["lib_dir"] == "torch/.dylibs" and p["refs"] == "loader-path" and p["archs"] == ["arm64"]
[g] = p["grafts"]
assert g["member"] == "torch/.dylibs/libgraft.dylib" and g["id"] == "/DLC/torch/.dylibs/libgraft.dylib", g
assert g["source"] == d + "/t/build/lib/libgraft.dylib" and g["install_names"] == ["@rpath/libgraft.dylib"], g
assert g["needed_by"] == ["torch/lib/libtorchlike.dylib"], g
[r] = p["redirects"]  # libomp: the wheel has one, never a second copy
assert r["member"] == "torch/lib/libomp.dylib" and r["source"] == d + "/t/brew/libomp.dylib", r
assert sorted(r["needed_by"]) == ["torch/.dylibs/libgraft.dylib", "torch/lib/libtorchlike.dylib"], r
e = {x["member"]: x for x in p["edits"]}
assert sorted(e) == ["torch/.dylibs/libgraft.dylib", "torch/_C.cpython-311-darwin.so",
                     "torch/lib/libtorchlike.dylib"], sorted(e)
ext = e["torch/_C.cpython-311-darwin.so"]
assert ext["changes"] == [] and ext["rpaths_after"] == ["@loader_path/lib"], ext
assert ext["rpaths_before"] == ["@loader_path/lib", d + "/t/build/lib"], ext
lib = e["torch/lib/libtorchlike.dylib"]
assert lib["changes"] == [["/opt/homebrew/opt/libomp/lib/libomp.dylib", "@loader_path/libomp.dylib"],
                          ["@rpath/libgraft.dylib", "@loader_path/../.dylibs/libgraft.dylib"]], lib
assert lib["rpaths_after"] == [] and lib["id"] is None, lib
gr = e["torch/.dylibs/libgraft.dylib"]
assert gr["graft"] and gr["id"] == "/DLC/torch/.dylibs/libgraft.dylib", gr
assert gr["changes"] == [["/opt/homebrew/opt/libomp/lib/libomp.dylib", "@loader_path/../lib/libomp.dylib"]], gr
' plan.json "$SCRATCH"
expect_status 0 "text plan" "$PKGTOOL" repair "$W" --dyld-library-path t/brew --dry-run
check "text plan names the redirect" grep -q "already in the wheel: .*libomp.dylib → torch/lib/libomp.dylib" "$SCRATCH/last.out"

case_begin "repair --refs loader-path (delocate's)"
expect_status 0 "repair" "$PKGTOOL" repair "$W" -w out --dyld-library-path t/brew --json
cp "$SCRATCH/last.out" result.json
check "input untouched" test "$(sha256sum "$W")" = "$IN_SUM"
check "output named from minos" test -f "out/$OUT_NAME"
"${ORACLE[@]}" record "out/$OUT_NAME" >rec.json || fail "RECORD/zipfile check"
"${ORACLE[@]}" record "$W" >rec_in.json || fail "input RECORD"
py_assert "members, WHEEL tags, raw copies" '
import json, sys
out, inp, res = (json.load(open(a)) for a in sys.argv[1:4])
assert sorted(out["members"]) == sorted(inp["members"] + ["torch/.dylibs/libgraft.dylib",
                                                           "torch-2.5.0.dist-info/sboms/pkgtool.cdx.json"]), out["members"]
assert out["tags"] == ["cp311-cp311-macosx_12_0_arm64"], out["tags"]
for m in ("torch/__init__.py", "torch/lib/libomp.dylib", "torch-2.5.0.dist-info/METADATA"):
    assert out["compress"][m] == inp["compress"][m], m   # same compressed bytes
assert res["result"]["raw_copies"] == 3, res["result"]
' rec.json rec_in.json result.json
expect_status 0 "pkgtool wheel verify" "$PKGTOOL" wheel verify "out/$OUT_NAME"
unpack_to lp "$SCRATCH/out/$OUT_NAME"
for f in torch/_C.cpython-311-darwin.so torch/lib/libtorchlike.dylib torch/.dylibs/libgraft.dylib \
  torch/lib/libomp.dylib; do
  view "lp.$(basename "$f")" "lp/$f"
done
py_assert "objdump and otool agree on names and rpaths" '
import json, sys
expect = {
  "_C.cpython-311-darwin.so": (None, ["@rpath/libtorchlike.dylib"], ["@loader_path/lib"]),
  "libtorchlike.dylib": ("@rpath/libtorchlike.dylib",
      ["@loader_path/libomp.dylib", "@loader_path/../.dylibs/libgraft.dylib"], []),
  "libgraft.dylib": ("/DLC/torch/.dylibs/libgraft.dylib", ["@loader_path/../lib/libomp.dylib"], []),
  "libomp.dylib": ("@rpath/libomp.dylib", [], []),
}
for name, (ident, dylibs, rpaths) in expect.items():
    o = json.load(open(f"lp.{name}.objdump.json"))["thin"]
    t = json.load(open(f"lp.{name}.otool.json"))
    assert o == {"id": ident, "dylibs": dylibs, "rpaths": rpaths}, (name, o)
    assert t == {"id": [ident] if ident else [], "dylibs": dylibs, "rpaths": rpaths}, (name, t)
'
for f in torch/_C.cpython-311-darwin.so torch/lib/libtorchlike.dylib torch/.dylibs/libgraft.dylib; do
  check "signature valid: $f" "${CSVERIFY[@]}" "lp/$f"
  check "macholib minos: $f" test "$("${ORACLE[@]}" minos "lp/$f" | tr -d ' \n')" = \
    "$([[ $f == *_C.* ]] && echo '{"arm64":"11.0"}' || echo '{"arm64":"12.0"}')"
done
expect_status 0 "ldd: everything resolves inside the wheel" "$PKGTOOL" ldd --json lp/torch/_C.cpython-311-darwin.so
py_assert "ldd paths" '
import json, sys
[s] = json.load(open(sys.argv[1]))["slices"]
assert s["errors"] == [], s["errors"]
d = sys.argv[2]
for l in s["libs"]:
    assert l["status"] in ("found", "already_loaded"), l
    assert l["path"].startswith(d + "/lp/torch/"), l
assert len(s["libs"]) == 4, s["libs"]
' "$SCRATCH/last.out" "$SCRATCH"

case_begin "repair --refs rpath: @rpath names, one @loader_path rpath each"
expect_status 0 "repair" "$PKGTOOL" repair "$W" -w out-rp --dyld-library-path t/brew --refs rpath
unpack_to rp "$SCRATCH/out-rp/$OUT_NAME"
for f in torch/_C.cpython-311-darwin.so torch/lib/libtorchlike.dylib torch/.dylibs/libgraft.dylib; do
  view "rp.$(basename "$f")" "rp/$f"
  check "signature valid: $f" "${CSVERIFY[@]}" "rp/$f"
done
py_assert "names and rpaths" '
import json
expect = {
  "_C.cpython-311-darwin.so": (None, ["@rpath/libtorchlike.dylib"], ["@loader_path/lib"]),
  "libtorchlike.dylib": ("@rpath/libtorchlike.dylib",
      ["@rpath/libomp.dylib", "@rpath/libgraft.dylib"], ["@loader_path", "@loader_path/../.dylibs"]),
  "libgraft.dylib": ("@rpath/libgraft.dylib", ["@rpath/libomp.dylib"], ["@loader_path/../lib"]),
}
for name, (ident, dylibs, rpaths) in expect.items():
    o = json.load(open(f"rp.{name}.objdump.json"))["thin"]
    t = json.load(open(f"rp.{name}.otool.json"))
    assert o == {"id": ident, "dylibs": dylibs, "rpaths": rpaths}, (name, o)
    assert t["rpaths"] == rpaths and len(set(t["rpaths"])) == len(t["rpaths"]), (name, t)
'
expect_status 0 "ldd resolves" "$PKGTOOL" ldd rp/torch/_C.cpython-311-darwin.so
check "ldd: no path outside the wheel" test "$(awk -v ok="=> $SCRATCH/rp/torch/" \
  '/=>/ && index($0, ok) == 0' "$SCRATCH/last.out")" = ""
# A second repair of the repaired wheel has nothing left to bundle and
# adds no rpath twice.
expect_status 0 "repair again" "$PKGTOOL" repair "out-rp/$OUT_NAME" -w out-rp2 --refs rpath --dry-run --json
py_assert "idempotent" '
import json, sys
p = json.load(open(sys.argv[1]))
assert p["grafts"] == [] and p["redirects"] == [] and p["edits"] == [], p
' "$SCRATCH/last.out"

case_begin "deployment target: floor and ceiling"
expect_status 0 "--target 13.0" "$PKGTOOL" repair "$W" -w out-13 --dyld-library-path t/brew --target 13.0
check "tag raised to 13.0" test -f out-13/torch-2.5.0-cp311-cp311-macosx_13_0_arm64.whl
MACOSX_DEPLOYMENT_TARGET=13.0 expect_status 0 "MACOSX_DEPLOYMENT_TARGET=13.0" \
  "$PKGTOOL" repair "$W" -w out-13env --dyld-library-path t/brew
check "env is the default target" test -f out-13env/torch-2.5.0-cp311-cp311-macosx_13_0_arm64.whl
expect_status 2 "--target 11.0: files above it" "$PKGTOOL" repair "$W" -w out-11 --dyld-library-path t/brew --target 11.0
check "error lists the files" grep -q "error: $W: 3 files need a newer macOS than the deployment target 11.0: .*torch/lib/libtorchlike.dylib (arm64 12.0)" "$SCRATCH/last.err"
check "nothing written" test ! -e out-11

case_begin "--exclude: provided by another wheel"
expect_status 0 "repair" "$PKGTOOL" repair "$W" -w out-ex --dyld-library-path t/brew --exclude 'libgraft*' --dry-run --json
py_assert "not bundled, reference kept" '
import json, sys
p = json.load(open(sys.argv[1]))
assert p["grafts"] == [] and p["excluded"] == ["@rpath/libgraft.dylib"], p
lib = [e for e in p["edits"] if e["member"] == "torch/lib/libtorchlike.dylib"][0]
assert lib["changes"] == [["/opt/homebrew/opt/libomp/lib/libomp.dylib", "@loader_path/libomp.dylib"]], lib
' "$SCRATCH/last.out"

case_begin "--keep-rpaths: build rpaths kept, duplicates still dropped"
expect_status 0 "dry run" "$PKGTOOL" repair "$W" --dyld-library-path t/brew --keep-rpaths --dry-run --json
py_assert "rpaths" '
import json, sys
p = json.load(open(sys.argv[1])); d = sys.argv[2]
e = {x["member"]: x for x in p["edits"]}
ext = e["torch/_C.cpython-311-darwin.so"]
assert ext["rpaths_after"] == ["@loader_path/lib", d + "/t/build/lib"], ext
assert "drop duplicate rpath @loader_path/lib" in ext["why"], ext
assert e["torch/lib/libtorchlike.dylib"]["rpaths_after"] is None, e["torch/lib/libtorchlike.dylib"]
' "$SCRATCH/last.out" "$SCRATCH"

case_begin "bad input"
expect_status 2 "missing library" "$PKGTOOL" repair "$W" -w out-miss
check "names the file and the install name" grep -q \
  "error: $W: torch/lib/libtorchlike.dylib (arm64) needs /opt/homebrew/opt/libomp/lib/libomp.dylib: not found" \
  "$SCRATCH/last.err"
check "nothing written" test ! -e out-miss
expect_status 2 "--require-archs x86_64 on an arm64 wheel" "$PKGTOOL" repair "$W" -w out-arch \
  --dyld-library-path t/brew --require-archs x86_64
check "lists the files" grep -q "\-\-require-archs x86_64: .*torch/lib/libtorchlike.dylib (arm64 only; needs x86_64)" "$SCRATCH/last.err"
# Two different libraries with one leaf name.
mkdir -p dup/a dup/b dup/tree/dup dup/dist
echo 'int one(void) { return 1; }' >dup/one.c
mcc arm64-apple-macos11 -dynamiclib -o dup/a/libsame.dylib dup/one.c -install_name "$SCRATCH/dup/a/libsame.dylib"
echo 'int two(void) { return 2; }' >dup/two.c
mcc arm64-apple-macos11 -dynamiclib -o dup/b/libsame.dylib dup/two.c -install_name "$SCRATCH/dup/b/libsame.dylib"
mcc arm64-apple-macos11 -bundle -o dup/tree/dup/x.so dup/one.c dup/a/libsame.dylib
mcc arm64-apple-macos11 -bundle -o dup/tree/dup/y.so dup/two.c dup/b/libsame.dylib
dist_info dup/tree dup 1.0 cp311-cp311-macosx_11_0_arm64
make_wheel dup/tree dup/dist
expect_status 2 "two libraries named libsame.dylib" "$PKGTOOL" repair dup/dist/dup-1.0-cp311-cp311-macosx_11_0_arm64.whl -w out-dup
check "names both" grep -q "two different libraries named libsame.dylib: $SCRATCH/dup/[ab]/libsame.dylib and $SCRATCH/dup/[ab]/libsame.dylib" "$SCRATCH/last.err"
check "nothing written" test ! -e out-dup
# Header padding too small for the edit (lld's default 32 bytes, two
# rpaths to add): the editor's preflight fails the repair before writing.
cp -r t/tree t/tree-small
mcc arm64-apple-macos12 -dynamiclib -o t/tree-small/torch/lib/libtorchlike.dylib t/src/torchlike.c \
  -install_name @rpath/libtorchlike.dylib t/brew/libomp.dylib t/build/lib/libgraft.dylib \
  -Wl,-rpath,"$SCRATCH/t/build/lib"
mkdir -p t/dist-small
make_wheel t/tree-small t/dist-small
SW=t/dist-small/torch-2.5.0-cp311-cp311-macosx_11_0_arm64.whl
expect_status 2 "padding too small" "$PKGTOOL" repair "$SW" -w out-small --dyld-library-path t/brew \
  --refs rpath --keep-rpaths
check "names file, slice and padding" grep -q "libtorchlike.dylib (arm64): the edited load commands need .* header padding" \
  "$SCRATCH/last.err"
check "nothing written" test ! -e out-small

case_begin "universal2: per-slice edits, tag, --require-archs universal2"
mkdir -p u/ext u/tree/uni u/dist
echo 'int u(void) { return 1; }' >u/u.c
echo 'extern int u(void); int PyInit_m(void) { return u(); }' >u/m.c
for t in arm64-apple-macos11 x86_64-apple-macos10.15; do
  a=${t%%-*}
  mcc "$t" -dynamiclib -o "u/libu.$a.dylib" u/u.c -install_name @rpath/libu.dylib -Wl,-headerpad_max_install_names
  cp "u/libu.$a.dylib" u/ext/libu.dylib
  mcc "$t" -bundle -o "u/m.$a.so" u/m.c u/ext/libu.dylib -Wl,-headerpad_max_install_names \
    -Wl,-rpath,"$SCRATCH/u/ext"
done
llvm-lipo-14 -create u/libu.x86_64.dylib u/libu.arm64.dylib -output u/ext/libu.dylib
llvm-lipo-14 -create u/m.x86_64.so u/m.arm64.so -output u/tree/uni/m.cpython-311-darwin.so
# A Java class file starts with the fat magic: not Mach-O, copied as is.
printf '\xca\xfe\xba\xbe\x00\x00\x00\x34\x00\x10rest of a class file' >u/tree/uni/A.class
dist_info u/tree uni 1.0 cp311-cp311-macosx_10_9_universal2
make_wheel u/tree u/dist
UW=u/dist/uni-1.0-cp311-cp311-macosx_10_9_universal2.whl
expect_status 0 "repair" "$PKGTOOL" repair "$UW" -w out-u --require-archs universal2
check "tag universal2 at x86_64's 10.15" test -f out-u/uni-1.0-cp311-cp311-macosx_10_15_universal2.whl
unpack_to uu "$SCRATCH/out-u/uni-1.0-cp311-cp311-macosx_10_15_universal2.whl"
check "class file copied as is" cmp u/tree/uni/A.class uu/uni/A.class
view uu.m uu/uni/m.cpython-311-darwin.so
view uu.libu uu/uni/.dylibs/libu.dylib
py_assert "both slices edited alike" '
import json
m = json.load(open("uu.m.objdump.json")); l = json.load(open("uu.libu.objdump.json"))
assert sorted(m) == ["arm64", "x86_64"], m
for a in ("arm64", "x86_64"):
    assert m[a] == {"id": None, "dylibs": ["@loader_path/.dylibs/libu.dylib"], "rpaths": []}, m[a]
    assert l[a]["id"] == "/DLC/uni/.dylibs/libu.dylib", l[a]
'
"${CSVERIFY[@]}" uu/uni/m.cpython-311-darwin.so uu/uni/.dylibs/libu.dylib >cs.txt || true
check "arm64 slices re-signed and valid" test "$(grep -c '(arm64): valid' cs.txt)" = 2
check "macholib: x86_64 10.15, arm64 11.0" test \
  "$("${ORACLE[@]}" minos uu/uni/m.cpython-311-darwin.so | tr -d ' \n')" = '{"arm64":"11.0","x86_64":"10.15"}'
expect_status 0 "ldd per slice" "$PKGTOOL" ldd uu/uni/m.cpython-311-darwin.so
check "both slices resolve in the wheel" test "$(grep -c "=> $SCRATCH/uu/uni/.dylibs/libu.dylib" "$SCRATCH/last.out")" = 2
# An arm64-only external library for a universal2 extension: the x86_64
# slice cannot load it.
cp u/libu.arm64.dylib u/ext/libu.dylib
expect_status 2 "wrong-arch dependency" "$PKGTOOL" repair "$UW" -w out-u2
check "names slice and library" grep -q "uni/m.cpython-311-darwin.so (x86_64) needs @rpath/libu.dylib: found only for other architectures" "$SCRATCH/last.err"

finish
