#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The wheel_macos driver on wheels linked at test time
# (tests/bundle/macos_fixtures.sh): the torch-like arm64 wheel whose
# libtorchlike and libgraft load libomp by its Homebrew install name, found
# through --lib-path, while the wheel ships torch/lib/libomp.dylib; and a
# wheel that loads OpenBLAS. Oracles: Python zipfile (members, WHEEL, RECORD),
# llvm-objdump-14 (install names), tests/tools/macho_cs_verify.py (every
# page hash of every Mach-O member) and the JSON summary.
source "$LIBPKG_SOURCE_DIR/tests/bundle/macos_fixtures.sh"
need_tools clang-14 ld64.lld-14 llvm-objdump-14
[[ -x $WHEEL_MACOS ]] || { echo "FAIL: WHEEL_MACOS not set" >&2; exit 1; }
make_scratch
cd "$SCRATCH"
CSVERIFY=("$LIBPKG_PYTHON" "$LIBPKG_SOURCE_DIR/tests/tools/macho_cs_verify.py")
# The configuration: PyTorch's arm64 macOS wheel for Python 3.11; the
# environment of the test runner must not change it.
unset MACOSX_DEPLOYMENT_TARGET DYLD_LIBRARY_PATH BUILD_ENVIRONMENT PACKAGE_TYPE DESIRED_PYTHON \
  PYTORCH_BUILD_VERSION PYTORCH_BUILD_NUMBER OVERRIDE_PACKAGE_VERSION
BASE=("$WHEEL_MACOS" --arch arm64 --build-version 2.5.0 --build-number 1)
DRV=("${BASE[@]}" --python 3.11)
OUT_NAME=torch-2.5.0-cp311-none-macosx_11_0_arm64.whl

build_torchlike "$SCRATCH/t" arm64-apple-macos11 arm64-apple-macos11
W=$WHEEL
IN_SUM=$(sha256sum "$W")

case_begin "--dry-run --json writes nothing"
expect_status 0 "dry run" "${DRV[@]}" --wheel "$W" --lib-path t/brew -o dry --dry-run --json
check "nothing written" test ! -e dry
check "dry-run summary" "$LIBPKG_PYTHON" -c '
import json, sys
s = json.load(open(sys.argv[1]))
assert s["schema"] == "libpkg-driver/1" and s["driver"] == "wheel_macos", s
assert s["dry_run"] is True and s["artifacts"] == [] and s["checks"] == [], s
assert s["splice"] is None, s["splice"]
assert "output: torch-2.5.0-cp311-none-macosx_11_0_arm64.whl" in s["plan"], s["plan"]
' "$SCRATCH/last.out"

case_begin "torch-like wheel: name, one libomp in torch/lib, tags, check passes"
expect_status 0 "driver" "${DRV[@]}" --wheel "$W" --lib-path t/brew -o out --json
cp "$SCRATCH/last.out" summary.json
check "input untouched" test "$(sha256sum "$W")" = "$IN_SUM"
check "output name" test -f "out/$OUT_NAME"
check "only the output in out/" test "$(ls out)" = "$OUT_NAME"
check "summary" "$LIBPKG_PYTHON" -c '
import json, sys
s = json.load(open(sys.argv[1])); out = sys.argv[2]
assert s["schema"] == "libpkg-driver/1" and s["driver"] == "wheel_macos", s
assert s["dry_run"] is False and s["passed"] is True, s
c = s["config"]
assert c["os"] == "macos" and c["arch"] == "arm64" and c["python"] == "3.11", c
[a] = s["artifacts"]
assert a["role"] == "wheel" and a["path"].endswith(out) and a["size"] > 0, a
# Members smaller than one chunk: none spliced (libpkg-driver/1 "splice").
assert s["splice"] == {"members": 0, "reused_bytes": 0}, s["splice"]
[r] = s["checks"]
assert r["passed"] is True, r
ids = {c["id"]: c["status"] for c in r["checks"]}
assert ids["runtimes"] == "pass" and ids["code-signature"] == "pass" and ids["dependencies"] == "pass", ids
p = s["plan_detail"]
assert p["schema"] == "libpkg-macos-repair-plan/1" and p["tags"] == ["macosx_11_0_arm64"], p
assert [g["member"] for g in p["grafts"]] == ["torch/.dylibs/libgraft.dylib"], p["grafts"]
assert [x["member"] for x in p["redirects"]] == ["torch/lib/libomp.dylib"], p["redirects"]
' summary.json "$OUT_NAME"
check "members, WHEEL and RECORD" "$LIBPKG_PYTHON" -c '
import base64, hashlib, sys, zipfile
z = zipfile.ZipFile(sys.argv[1]); names = z.namelist()
omp = [n for n in names if n.endswith("libomp.dylib")]
assert omp == ["torch/lib/libomp.dylib"], omp
assert not any(n.startswith("torch/.dylibs/") and "omp" in n for n in names), names
assert "torch/.dylibs/libgraft.dylib" in names, names
tags = [l.split(": ", 1)[1] for l in z.read("torch-2.5.0.dist-info/WHEEL").decode().splitlines() if l.startswith("Tag: ")]
assert tags == ["cp311-none-macosx_11_0_arm64"], tags
for line in z.read("torch-2.5.0.dist-info/RECORD").decode().splitlines():
    name, digest, size = line.rsplit(",", 2)
    if not digest: continue
    data = z.read(name)
    want = "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    assert digest == want and int(size) == len(data), name
' "out/$OUT_NAME"
rm -rf x && mkdir x && (cd x && unzip -q "../out/$OUT_NAME")
check "libomp referenced in the wheel" grep -q "@loader_path/libomp.dylib\|@rpath/libomp.dylib" \
  <(llvm-objdump-14 --macho --dylibs-used x/torch/lib/libtorchlike.dylib)
check "no Homebrew install name left" bash -c '! llvm-objdump-14 --macho --dylibs-used x/torch/lib/*.dylib x/torch/.dylibs/*.dylib x/torch/*.so | grep -q /opt/homebrew'
for f in x/torch/lib/libtorchlike.dylib x/torch/.dylibs/libgraft.dylib x/torch/_C.cpython-311-darwin.so; do
  expect_status 0 "$f signature verifies" "${CSVERIFY[@]}" "$f"
done

case_begin "MACOSX_DEPLOYMENT_TARGET is a ceiling"
expect_status 2 "file above 11.0" env MACOSX_DEPLOYMENT_TARGET=11.0 "${DRV[@]}" \
  --wheel "$(build_torchlike "$SCRATCH/t12" arm64-apple-macos11 arm64-apple-macos12 >/dev/null; echo "$SCRATCH/t12/dist/torch-2.5.0-cp311-cp311-macosx_11_0_arm64.whl")" \
  --lib-path t12/brew -o out12
check "names the deployment target" grep -q "deployment target 11.0" "$SCRATCH/last.err"
check "nothing written" test ! -e out12

case_begin "an OpenMP runtime the wheel does not ship is refused, not put in .dylibs"
cp -r t/tree noomp-tree && rm noomp-tree/torch/lib/libomp.dylib && mkdir noomp
make_wheel noomp-tree noomp
expect_status 2 "refused" "${DRV[@]}" --wheel noomp/torch-2.5.0-cp311-cp311-macosx_11_0_arm64.whl --lib-path t/brew -o outn
check "names libomp and torch/lib" grep -q "^error: .*libomp.dylib would be bundled as torch/.dylibs/libomp.dylib.*torch/lib/libomp.dylib" "$SCRATCH/last.err"
check "nothing written" test ! -e outn

case_begin "two OpenMP runtimes in the wheel are refused"
cp -r t/tree two-tree && cp two-tree/torch/lib/libomp.dylib two-tree/torch/lib/libiomp5.dylib && mkdir two
make_wheel two-tree two
expect_status 2 "refused" "${DRV[@]}" --wheel two/torch-2.5.0-cp311-cp311-macosx_11_0_arm64.whl --lib-path t/brew -o outt
check "names both" grep -q "^error: .*2 OpenMP runtimes (torch/lib/libiomp5.dylib, torch/lib/libomp.dylib)" "$SCRATCH/last.err"
check "nothing written" test ! -e outt

case_begin "OpenBLAS: check fails, exit 1"
mkdir -p b/lib b/tree/torch b/dist
echo 'int cblas_sgemm(void) { return 0; }' >b/blas.c
echo 'extern int cblas_sgemm(void); int PyInit__C(void) { return cblas_sgemm(); }' >b/ext.c
mcc arm64-apple-macos11 -dynamiclib -o b/lib/libopenblas.0.dylib b/blas.c \
  -install_name /opt/homebrew/opt/openblas/lib/libopenblas.0.dylib -Wl,-headerpad_max_install_names
mcc arm64-apple-macos11 -bundle -o b/tree/torch/_C.cpython-311-darwin.so b/ext.c \
  -Wl,-headerpad_max_install_names b/lib/libopenblas.0.dylib
echo '# torch-like' >b/tree/torch/__init__.py
dist_info b/tree torch 2.5.0 cp311-cp311-macosx_11_0_arm64
make_wheel b/tree b/dist
expect_status 1 "check fails" "${DRV[@]}" --wheel b/dist/torch-2.5.0-cp311-cp311-macosx_11_0_arm64.whl \
  --lib-path b/lib -o outb
check "OpenBLAS named" grep -qi "openblas" "$SCRATCH/last.out"
expect_status 0 "--no-check writes it" "${DRV[@]}" --wheel b/dist/torch-2.5.0-cp311-cp311-macosx_11_0_arm64.whl \
  --lib-path b/lib -o outc --no-check
check "written with --no-check" test -f "outc/$OUT_NAME"

case_begin "bad input"
expect_status 2 "missing wheel" "${DRV[@]}" --wheel nope.whl -o outd
check "names the file" grep -q "^error: nope.whl: wheel not found" "$SCRATCH/last.err"
expect_status 2 "other python" "${BASE[@]}" --python 3.12 --wheel "$W" --lib-path t/brew -o oute
check "names both pythons" grep -q "cp311.*3.12" "$SCRATCH/last.err"
finish
