#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The libtorch driver's macOS zip (--macos) from the torch-like macOS wheel
# (tests/bundle/macos_fixtures.sh, linked at test time): its OpenMP runtime
# comes from where the wheel_macos driver takes it, the wheel's
# torch/lib/libomp.dylib, and nothing second is in the zip: not Homebrew's
# libomp the libraries were linked against, not a delocated .dylibs copy.
# Oracles: Python zipfile and hashlib (members, the one libomp's bytes
# against the wheel_macos output's), llvm-objdump-14 (install names, run
# paths), tests/tools/macho_cs_verify.py (every page hash), `pkgtool ldd`
# (everything resolves inside the zip) and the driver's check_binary run.
source "$LIBPKG_SOURCE_DIR/tests/bundle/macos_fixtures.sh"
need_tools clang-14 ld64.lld-14 llvm-objdump-14
for v in LIBTORCH_DRIVER WHEEL_MACOS; do
  [[ -x ${!v} ]] || { echo "FAIL: $v not set" >&2; exit 1; }
done
make_scratch
cd "$SCRATCH"
CSVERIFY=("$LIBPKG_PYTHON" "$LIBPKG_SOURCE_DIR/tests/tools/macho_cs_verify.py")
unset MACOSX_DEPLOYMENT_TARGET DYLD_LIBRARY_PATH BUILD_ENVIRONMENT PACKAGE_TYPE DESIRED_PYTHON \
  PYTORCH_BUILD_VERSION PYTORCH_BUILD_NUMBER OVERRIDE_PACKAGE_VERSION
LT=("$LIBTORCH_DRIVER" --no-env --macos --arch arm64 --build-version 2.5.0 --build-hash 0123abc)
ZIP=libtorch-macos-arm64-2.5.0.zip

# The torch-like wheel with the headers and CMake files a libtorch zip
# takes from it.
build_torchlike "$SCRATCH/t" arm64-apple-macos11 arm64-apple-macos11
mkdir -p t/tree/torch/include/torch t/tree/torch/share/cmake/Torch lt/dist
echo '#pragma once' >t/tree/torch/include/torch/torch.h
echo '# Torch' >t/tree/torch/share/cmake/Torch/TorchConfig.cmake
make_wheel t/tree lt/dist
W=lt/dist/torch-2.5.0-cp311-cp311-macosx_11_0_arm64.whl

# unzip_to DIR ZIP
unzip_to() { rm -rf "$1" && mkdir -p "$1" && (cd "$1" && unzip -q "$2"); }

case_begin "the wheel_macos driver's wheel: torch/lib/libomp.dylib"
expect_status 0 "wheel_macos" "$WHEEL_MACOS" --no-env --arch arm64 --build-version 2.5.0 \
  --build-number 1 --python 3.11 --wheel "$W" --lib-path t/brew -o wm --no-check
WM=wm/torch-2.5.0-cp311-none-macosx_11_0_arm64.whl
check "written" test -f "$WM"

case_begin "libtorch --macos from the built wheel: dry run"
expect_status 0 "dry run" "${LT[@]}" --wheel "$W" --lib-path t/brew -o dry --dry-run --json
check "nothing written" test ! -e dry
check "plan" "$LIBPKG_PYTHON" -c '
import json, sys
s = json.load(open(sys.argv[1]))
assert s["driver"] == "libtorch" and s["config"]["os"] == "macos", s["config"]
p = s["plan_detail"]
assert p["schema"] == "libpkg-macos-tree-bundle/1" and p["lib_dir"] == "lib", p
assert [r["member"] for r in p["redirects"]] == ["lib/libomp.dylib"], p["redirects"]
assert [g["member"] for g in p["grafts"]] == ["lib/libgraft.dylib"], p["grafts"]
assert p["grafts"][0]["id"] == "@rpath/libgraft.dylib", p["grafts"]
assert any("already in the tree" in l and "lib/libomp.dylib" in l for l in s["plan"]), s["plan"]
' "$SCRATCH/last.out"

case_begin "libtorch --macos from the built wheel"
expect_status 0 "driver" "${LT[@]}" --wheel "$W" --lib-path t/brew -o z1 --json
cp "$SCRATCH/last.out" z1.json
check "zip written" test -f "z1/$ZIP"
check "summary: checks passed against macosx_11_0_arm64" "$LIBPKG_PYTHON" -c '
import json, sys
s = json.load(open(sys.argv[1]))
assert s["passed"] is True, s
r = [c for c in s["checks"]][0]
ids = {c["id"]: c["status"] for c in r["checks"]}
for cid in ("dependencies", "runtimes", "rpath", "code-signature", "deployment-target"):
    assert ids[cid] == "pass", (cid, ids)
' z1.json
# zip_check ZIP WHEEL_WITH_THE_RUNTIME: one OpenMP runtime, the wheel's.
zip_check() {
  check "$1: one OpenMP runtime, the wheel_macos wheel's torch/lib/libomp.dylib" "$LIBPKG_PYTHON" -c '
import hashlib, re, sys, zipfile
z, w = zipfile.ZipFile(sys.argv[1]), zipfile.ZipFile(sys.argv[2])
names = z.namelist()
omp = [n for n in names if re.search(r"lib(i?omp5?|gomp)[.0-9]*\.dylib$", n)]
assert omp == ["libtorch/lib/libomp.dylib"], omp
assert z.read(omp[0]) == w.read("torch/lib/libomp.dylib"), "not the wheel_macos wheel libomp"
assert not any(".dylibs" in n or n.endswith(".so") or n.endswith(".py") for n in names), names
for want in ("libtorch/lib/libtorchlike.dylib", "libtorch/lib/libgraft.dylib",
             "libtorch/include/torch/torch.h", "libtorch/share/cmake/Torch/TorchConfig.cmake",
             "libtorch/build-version", "libtorch/build-hash"):
    assert want in names, (want, names)
assert z.read("libtorch/build-hash").decode().strip() == "0123abc"
' "$1" "$WM"
}
zip_check "z1/$ZIP"
unzip_to x1 "$SCRATCH/z1/$ZIP"
L=x1/libtorch/lib
check "libtorchlike: libomp and libgraft by @rpath, one @loader_path run path" "$LIBPKG_PYTHON" -c '
import subprocess, sys
out = subprocess.run(["llvm-objdump-14", "--macho", "--dylibs-used", "--dylib-id", "--rpaths", sys.argv[1]],
                     capture_output=True, text=True, check=True).stdout
assert "@rpath/libomp.dylib" in out and "@rpath/libgraft.dylib" in out, out
assert "/opt/homebrew" not in out and "/build/lib" not in out, out
assert out.splitlines().count("@loader_path") == 1, out
' "$L/libtorchlike.dylib"
check "libgraft: id @rpath, libomp by @rpath" "$LIBPKG_PYTHON" -c '
import subprocess, sys
out = subprocess.run(["llvm-objdump-14", "--macho", "--dylibs-used", "--dylib-id", sys.argv[1]],
                     capture_output=True, text=True, check=True).stdout
assert "@rpath/libgraft.dylib" in out and "@rpath/libomp.dylib" in out and "/opt/homebrew" not in out, out
' "$L/libgraft.dylib"
for f in libtorchlike.dylib libgraft.dylib libomp.dylib; do
  check "signature valid: $f" "${CSVERIFY[@]}" "$L/$f"
done
expect_status 0 "ldd: everything resolves inside the zip" "$PKGTOOL" ldd --json "$L/libtorchlike.dylib"
check "ldd paths" "$LIBPKG_PYTHON" -c '
import json, sys
[s] = json.load(open(sys.argv[1]))["slices"]
assert s["errors"] == [], s["errors"]
for l in s["libs"]:
    assert l["status"] in ("found", "already_loaded") and l["path"].startswith(sys.argv[2]), l
' "$SCRATCH/last.out" "$SCRATCH/$L/"

case_begin "libtorch --macos from the wheel_macos driver's (delocated) wheel"
# Its libgraft is in torch/.dylibs, outside the zip's layout: grafted into
# lib/ like any outside library; libomp stays the one in lib/.
expect_status 0 "driver" "${LT[@]}" --wheel "$WM" -o z2
zip_check "z2/$ZIP"

case_begin "the OpenMP rule: a runtime the wheel lacks, or a second one"
cp -r t/tree noomp && rm noomp/torch/lib/libomp.dylib && mkdir -p noomp-dist
make_wheel noomp noomp-dist
expect_status 2 "no libomp in torch/lib" "${LT[@]}" --wheel noomp-dist/torch-2.5.0-cp311-cp311-macosx_11_0_arm64.whl \
  --lib-path t/brew -o z3
check "names libomp and lib/" grep -q \
  "^error: noomp-dist/torch-2.5.0-cp311-cp311-macosx_11_0_arm64.whl: libomp.dylib would be bundled as lib/libomp.dylib.*one OpenMP runtime in lib/ (the wheel's torch/lib/libomp.dylib)" \
  "$SCRATCH/last.err"
check "nothing written" test ! -e z3
cp -r t/tree two && cp two/torch/lib/libomp.dylib two/torch/lib/libiomp5.dylib && mkdir -p two-dist
make_wheel two two-dist
expect_status 2 "libomp and libiomp5" "${LT[@]}" --wheel two-dist/torch-2.5.0-cp311-cp311-macosx_11_0_arm64.whl \
  --lib-path t/brew -o z4
check "names both" grep -q "2 OpenMP runtimes (lib/libiomp5.dylib, lib/libomp.dylib)" "$SCRATCH/last.err"
check "nothing written" test ! -e z4

case_begin "a missing library: the error names the wheel, not its scratch copy"
expect_status 2 "no --lib-path" "${LT[@]}" --wheel "$W" -o z7
check "names the wheel and the install name" grep -q \
  "^error: $W: lib/libtorchlike.dylib (arm64) needs /opt/homebrew/opt/libomp/lib/libomp.dylib: not found" \
  "$SCRATCH/last.err"
check "nothing written" test ! -e z7

case_begin "bad input"
expect_status 2 "--lib-path without --macos" "$LIBTORCH_DRIVER" --no-env --build-hash x --wheel "$W" \
  --lib-path t/brew -o z5
check "says so" grep -q "apply to the macOS zip (--macos)" "$SCRATCH/last.err"
expect_status 2 "--debug-split on macOS" "${LT[@]}" --wheel "$W" --lib-path t/brew -o z6 --debug-split
check "says why" grep -q "a macOS zip has none" "$SCRATCH/last.err"
finish
