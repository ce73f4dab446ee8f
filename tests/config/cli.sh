#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# `pkgtool matrix` and `pkgtool config`: the matrix is valid JSON of the
# GitHub Actions shape, filters narrow it, every entry's build_environment
# round-trips through `pkgtool config`, and bad values exit 2 naming them.
source "$(dirname "$0")/../lib/harness.sh"
PY=/usr/bin/python3
[[ -x $PY ]] || missing "/usr/bin/python3 not installed"
make_scratch
cd "$SCRATCH"

case_begin "matrix JSON"
expect_ok "matrix" "$PKGTOOL" matrix
"$PKGTOOL" matrix >all.json
"$PY" - all.json <<'PY' >summary.txt
import json, sys
doc = json.load(open(sys.argv[1]))
assert list(doc) == ["include"], list(doc)
fields = {"package_type", "desired_python", "desired_cuda", "gpu_arch_type",
          "gpu_arch_version", "desired_devtoolset", "cxx_abi",
          "libtorch_variant", "os", "arch", "build_name", "build_environment"}
for e in doc["include"]:
    assert set(e) == fields, sorted(set(e) ^ fields)
    assert all(isinstance(v, str) for v in e.values()), e
names = [e["build_name"] for e in doc["include"]]
assert len(names) == len(set(names)), "duplicate build_name"
by = {}
for e in doc["include"]:
    by[e["package_type"]] = by.get(e["package_type"], 0) + 1
print(len(names), " ".join(f"{k}={by[k]}" for k in sorted(by)))
PY
# data/matrix.json: manywheel x86_64 6 pythons x 9 accelerators - 2
# excluded, aarch64 (sbsa) 6 x 4 CUDA versions; conda 4 x 4; libtorch linux
# 8 x 2 ABIs x 4 variants - 4 (ROCm pre-cxx11) + 1 macOS; wheel 5.
expect_eq "matrix counts" "158 conda=16 libtorch=61 manywheel=76 wheel=5" "$(cat summary.txt)"
expect_eq "--count" "158" "$("$PKGTOOL" matrix --count)"
expect_eq "--compact is one line" "1" "$("$PKGTOOL" matrix --compact | wc -l)"

case_begin "matrix filters"
expect_eq "manywheel" "76" "$("$PKGTOOL" matrix --count --package-type manywheel)"
expect_eq "manywheel cu130 (x86_64 + aarch64)" "12" "$("$PKGTOOL" matrix --count --package-type manywheel --cuda cu130)"
expect_eq "manywheel cu124" "6" "$("$PKGTOOL" matrix --count --package-type manywheel --cuda cu124)"
expect_eq "12.4 = cu124" "6" "$("$PKGTOOL" matrix --count --package-type manywheel --cuda 12.4)"
expect_eq "commas (x86_64 + aarch64 cu126)" "18" "$("$PKGTOOL" matrix --count --package-type manywheel --cuda cu124,cu126)"
expect_eq "python 3.11" "18" "$("$PKGTOOL" matrix --count --python 3.11)"
expect_eq "rocm kind" "9" "$("$PKGTOOL" matrix --count --cuda rocm)"
expect_eq "nothing" "0" "$("$PKGTOOL" matrix --count --package-type conda --cuda rocm6.1)"
"$PKGTOOL" matrix --package-type libtorch --cuda cpu >lt.json
expect_ok "libtorch entries" "$PY" -c '
import json, sys
inc = json.load(open("lt.json"))["include"]
assert len(inc) == 9, len(inc)
assert all(e["desired_python"] == "" for e in inc)
assert {e["libtorch_variant"] for e in inc if e["os"] == "linux"} == {
    "shared-with-deps", "shared-without-deps", "static-with-deps", "static-without-deps"}
'
expect_exit "bad --cuda" 2 "'cu12x'.*accepted" "$PKGTOOL" matrix --cuda cu12x
expect_exit "bad --python" 2 "'3.1x'" "$PKGTOOL" matrix --python 3.1x
expect_exit "bad --package-type" 2 "'pip'" "$PKGTOOL" matrix --package-type pip
expect_exit "missing file" 2 "nope.json" "$PKGTOOL" matrix --file nope.json
echo '{"groups": [{"package_type": "conda", "pythons": ["3.11"], "accelerators": ["rocm6.1"]}]}' >bad.json
expect_exit "bad matrix file" 2 "bad.json: group 0 \(conda\).*rocm6.1" "$PKGTOOL" matrix --file bad.json
echo '{"groups": [{"package_type": "manywheel", "pythons": ["3.12"], "accelerators": ["cpu", "cu126"]}]}' >mine.json
expect_eq "user file" "2" "$("$PKGTOOL" matrix --count --file mine.json)"
# the same option names as `nightly run` and `workflow` (one MatrixInput)
expect_eq "--matrix-file" "2" "$("$PKGTOOL" matrix --count --matrix-file mine.json)"
mkfifo fifo.json
expect_exit "a FIFO is not a matrix file" 2 "fifo.json" timeout 10 "$PKGTOOL" matrix --file fifo.json
expect_exit "nor for workflow" 2 "fifo.json" timeout 10 "$PKGTOOL" workflow --matrix-file fifo.json

case_begin "every matrix entry round-trips through pkgtool config"
"$PY" -c '
import json
for e in json.load(open("all.json"))["include"]:
    print(e["build_name"] + "\t" + e["build_environment"])
' >entries.tsv
bad=0
while IFS=$'\t' read -r name env; do
  got=$("$PKGTOOL" config "$env" --json | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["build_name"])') || got=ERROR
  [[ $got == "$name" ]] || { bad=$((bad + 1)); log "  $env: $got != $name"; }
done <entries.tsv
expect_eq "round trips" 0 "$bad"

case_begin "config from a string"
expect_ok "config" "$PKGTOOL" config "manywheel 3.7m cu100 devtoolset7"
"$PKGTOOL" config "manywheel 3.7m cu100 devtoolset7" --build-version 1.3.0.dev20190912+cu100 >text.out
check "text wheel name" grep -q "^wheel: *torch-1.3.0.dev20190912+cu100-cp37-cp37m-linux_x86_64.whl$" text.out
"$PKGTOOL" config "conda 3.11 cu124" --cudnn 9.1 --version 2.5.0 --json >conda.json
expect_eq "conda build string" "pytorch-2.5.0-py3.11_cuda12.4_cudnn9.1_0.tar.bz2" \
  "$("$PY" -c 'import json; print(json.load(open("conda.json"))["artifacts"]["conda"][0])')"
expect_eq "cuda table in config" "14" \
  "$("$PY" -c 'import json; t=json.load(open("conda.json"))["cuda_table"]; print(len(t["libraries"]) - 1)')"
"$PKGTOOL" config "libtorch cpu" --version 2.5.0+cpu --debug-crc 1a2b3c4d --json >lt.out
expect_eq "libtorch names" "libtorch-shared-with-deps-2.5.0+cpu.zip debug-libtorch-shared-with-deps-2.5.0+cpu-1a2b3c4d.zip" \
  "$("$PY" -c 'import json; a=json.load(open("lt.out"))["artifacts"]; print(a["libtorch"][0], a["debug-libtorch"][0])')"
"$PKGTOOL" config "conda 3.11 cu124" >nocudnn.out
check "conda without cuDNN says why" grep -q "CUDNN_VERSION" nocudnn.out

case_begin "config from the environment"
out=$(env -i PATH="$PATH" PACKAGE_TYPE=manywheel DESIRED_PYTHON=3.13t DESIRED_CUDA=12.6 \
  PYTORCH_BUILD_VERSION=2.6.0+cu126 PYTORCH_BUILD_NUMBER=2 "$PKGTOOL" config --json)
expect_eq "env wheel" "torch-2.6.0.post2+cu126-cp313-cp313t-linux_x86_64.whl" \
  "$("$PY" -c 'import json,sys; print(json.loads(sys.argv[1])["artifacts"]["wheel"][0])' "$out")"
out=$(env -i PATH="$PATH" MATRIX_PACKAGE_TYPE=libtorch MATRIX_DESIRED_CUDA=cpu \
  LIBTORCH_VARIANT=static-with-deps DESIRED_DEVTOOLSET=cxx11-abi "$PKGTOOL" config --json)
expect_eq "env libtorch" "libtorch-cpu-static-with-deps-cxx11" \
  "$("$PY" -c 'import json,sys; print(json.loads(sys.argv[1])["build_name"])' "$out")"

case_begin "config errors exit 2 naming the value"
expect_exit "bad python" 2 "'3.14x'.*accepted" "$PKGTOOL" config "manywheel 3.14x cpu"
expect_exit "bad cuda" 2 "'cu12x'.*accepted" "$PKGTOOL" config "manywheel 3.11 cu12x"
expect_exit "variant on wheel" 2 "shared-with-deps.*Linux libtorch only" \
  "$PKGTOOL" config "manywheel 3.11 cpu" --variant shared-with-deps
expect_exit "python on libtorch" 2 "pythonless.*3.11" "$PKGTOOL" config "libtorch cpu" --python 3.11
expect_exit "rocm on conda" 2 "rocm6.1.*conda" "$PKGTOOL" config "conda 3.11 rocm6.1"
expect_exit "env DESIRED_CUDA" 2 "DESIRED_CUDA.*'cu1'" \
  env -i PATH="$PATH" PACKAGE_TYPE=manywheel DESIRED_PYTHON=3.11 DESIRED_CUDA=cu1 "$PKGTOOL" config
expect_exit "env empty" 2 "PACKAGE_TYPE is not set" env -i PATH="$PATH" "$PKGTOOL" config
expect_exit "bad crc" 2 "'xyz'" "$PKGTOOL" config "libtorch cpu" --debug-crc xyz
expect_exit "unknown flag" 2 "pkgtool config" "$PKGTOOL" config --frobnicate
# One line: the message, nothing else.
"$PKGTOOL" config "manywheel 3.14x cpu" 2>err.txt >/dev/null || true
expect_eq "one-line error" 1 "$(wc -l <err.txt)"

case_begin "config --explain: what a CUDA configuration bundles and why"
# A stand-in CUDA root with part of the 13.0 table: CUPTI in lib64 (not
# the table's extras/CUPTI/lib64, like this machine's toolkit), nvrtc's
# builtins under their versioned SONAME, no cuFile.
root=$SCRATCH/cuda-root
mkdir -p "$root/lib64"
echo 'int stand_in;' >stub.c
for so in libcudart.so.13 libcupti.so.13 libcudnn.so.9 libnvrtc-builtins.so.13.0; do
  gcc -shared -fPIC -Wl,-soname,$so -o "$root/lib64/$so" stub.c || fail "gcc $so"
done
ln -s libnvrtc-builtins.so.13.0 "$root/lib64/libnvrtc-builtins.so"
"$PKGTOOL" config "manywheel 3.12 cu130" --explain --cuda-root "$root" >explain.txt
expect_eq "explain exit" 0 $?
check "arch list" grep -qx "TORCH_CUDA_ARCH_LIST=7.5;8.0;8.6;9.0;10.0;12.0+PTX  \[.*\]" explain.txt
check "nvcc flags" grep -q "^TORCH_NVCC_FLAGS=-Xfatbin -compress-all --threads 2 -compress-mode=size" explain.txt
check "13.x build settings" grep -q "^USE_CUPTI_SO=1" explain.txt
check "cupti fallback, said so" grep -qF "libcupti.so.13: renamed (sha256 prefix inserted); from $root/lib64/libcupti.so.13 (fallback: the table says extras/CUPTI/lib64)" explain.txt
check "builtins: link name, SONAME, kept" grep -qF "libnvrtc-builtins.so: keeps its name (rule libnvrtc-builtins*: " explain.txt
check "builtins SONAME" grep -qF "SONAME libnvrtc-builtins.so.13.0" explain.txt
check "cudnn kept" grep -q "libcudnn.so.9: keeps its name (rule libcudnn\*" explain.txt
check "cudart renamed" grep -qF "libcudart.so.13: renamed (sha256 prefix inserted); from $root/lib64/libcudart.so.13  [cuda-current.md" explain.txt
check "missing: where looked" grep -qF "libcufile.so.0: renamed (sha256 prefix inserted); NOT ON DISK (looked for $root/lib64/libcufile.so.0)" explain.txt
check "RDMA stack in 13.x" grep -q "^  libmlx5.so.1:.*RDMA" explain.txt
check "pypi cu13" grep -q "DT_RPATH .*\$ORIGIN/../../nvidia/cu13/lib" explain.txt
check "no aarch64 additions on x86_64" bash -c "! grep -q libgfortran explain.txt"
expect_eq "12.9 has no libnvToolsExt" 0 "$("$PKGTOOL" config "manywheel 3.12 cu129" --explain | grep -c "^  libnvToolsExt")"
expect_eq "12.8 has libnvToolsExt" 1 "$("$PKGTOOL" config "manywheel 3.12 cu128" --explain | grep -c "^  libnvToolsExt.so.1:")"
expect_eq "12.6 arch list" "TORCH_CUDA_ARCH_LIST=5.0;6.0;7.0;7.5;8.0;8.6;9.0" \
  "$("$PKGTOOL" config "manywheel 3.12 cu126" --explain | grep -o '^TORCH_CUDA_ARCH_LIST=[^ ]*')"
expect_eq "12.x pypi list" 1 "$("$PKGTOOL" config "manywheel 3.12 cu126" --explain | grep -c 'nvidia/cufile/lib:\$ORIGIN/../../cusparselt/lib ')"
"$PKGTOOL" config "manywheel 3.12 cu130 aarch64" --explain >arm.txt
check "aarch64 arch list" grep -q "^TORCH_CUDA_ARCH_LIST=8.0;9.0;10.0;11.0;12.0+PTX " arm.txt
check "aarch64 libgfortran" grep -q "^  libgfortran.so.5: renamed.*NOT ON DISK (looked for /usr/lib64/libgfortran.so.5)" arm.txt
check "ACL when present" grep -q "^  libarm_compute.so: when present;" arm.txt
check "NVPL when present" grep -q "^  libnvpl_blas_core.so.0: when present;" arm.txt
expect_eq "libtorch 12.9 drops 7.0 and 8.6" "TORCH_CUDA_ARCH_LIST=7.5;8.0;9.0;10.0;12.0+PTX" \
  "$("$PKGTOOL" config "libtorch cu129 shared-with-deps" --explain | grep -o '^TORCH_CUDA_ARCH_LIST=[^ ]*')"
"$PKGTOOL" config "manywheel 3.12 cu130" --explain --json >explain.json
expect_ok "explain --json is a list of lines" "$PY" -c 'import json; l = json.load(open("explain.json")); assert isinstance(l, list) and len(l) > 20, l'
expect_exit "unknown version" 2 "unknown CUDA version 13.1" "$PKGTOOL" config "manywheel 3.12 cu131" --explain
expect_exit "cpu has no table" 2 "not a CUDA configuration" "$PKGTOOL" config "manywheel 3.12 cpu" --explain

finish
