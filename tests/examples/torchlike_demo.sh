#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Integration test of scripts/demo.sh and examples/torchlike.
#
# Runs the demo twice into a temporary directory, once per C++ ABI
# (_GLIBCXX_USE_CXX11_ABI=1 with CUDA if nvcc exists, =0 without CUDA), and
# checks on each install tree what the packaging drivers will rely on:
#   - the drivers' JSON summaries: their packages, and check_binary passed them,
#     with the import check passing for the wheel and both conda packages
#     (lib/pythonX.Y/site-packages of the conda-prefix/ the demo stages);
#   - torchlike._C imports with $LIBPKG_PYTHON from install/python and calls
#     into libtorchlike (ops, OpenMP loop), loading the libraries from the
#     package's own lib/ and libgomp from the system;
#   - `pkgtool inspect --json`: SONAME, NEEDED and RUNPATH of every file, and
#     libgomp in the extension's dependency closure (closure.py);
#   - TorchLikeConfig.cmake records the ABI, read back with check_binary's sed;
#   - the ABI census (nm -D --demangle, namespaces c10:: at:: caffe2:: torch::):
#     more than 100 symbols of the chosen ABI and none of the other;
#   - a client compiles with the declared ABI (check_binary step C) and runs,
#     and fails to link with the opposite ABI; a find_package(TorchLike)
#     consumer builds without being told the ABI;
#   - with CUDA: libtorchlike_cuda carries a fatbin and NEEDs libcudart.
#
# Environment (from ctest): PKGTOOL, MANYWHEEL, LIBTORCH_DRIVER,
# CONDA_DRIVER, LIBPKG_SOURCE_DIR, LIBPKG_PYTHON. TEST_KEEP=1 keeps the
# scratch directory. A missing tool, driver or Python.h is a failure.
source "$(dirname "${BASH_SOURCE[0]}")/../lib/harness.sh"

src=${LIBPKG_SOURCE_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
python=$LIBPKG_PYTHON
here=$src/tests/examples

for tool in PKGTOOL MANYWHEEL LIBTORCH_DRIVER CONDA_DRIVER; do
  [[ -n ${!tool:-} && -x ${!tool} ]] || missing "$tool not set or not executable"
done
require_tools cmake g++ nm readelf "$python"
"$python" -c 'import os, sys, sysconfig; sys.exit(not os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h")))' ||
  missing "no Python.h for $python"
if command -v nvcc >/dev/null || [[ -x /usr/local/cuda/bin/nvcc ]]; then have_nvcc=1; else have_nvcc=0; fi
py_version=$("$python" -c 'import sys; print("%d.%d" % sys.version_info[:2])')

make_scratch
tmp=$SCRATCH

# json FILE PYTHON-EXPR: evaluate EXPR with `d` bound to the JSON in FILE; the
# check passes when it is true (an assertion message is printed otherwise).
json() {
  "$python" - "$1" "$2" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
ok = eval(sys.argv[2])
if not ok:
    print("false: " + sys.argv[2])
    print(json.dumps(d, indent=1)[:3000])
sys.exit(0 if ok else 1)
EOF
}

# census LIB PATTERN: symbols whose demangled name starts in one of
# check_binary's namespaces and mentions PATTERN (an ERE).
census() {
  nm -D --demangle "$1" | grep -cE "^[[:xdigit:] ]+ [[:alpha:]] (c10|at|caffe2|torch)::.*($2)" || true
}
CXX11_RE='std::__cxx11::basic_string|std::__cxx11::list'
PRE_RE='std::basic_string<|std::list'

# check_demo_nightly DIR: what scripts/demo_nightly.sh left in DIR.
check_demo_nightly() {
  local nightly=$1 date
  date=$(cd "$nightly/root" && echo 2*)
  "$PKGTOOL" nightly status --root "$nightly/root" --date "$date" --json >"$nightly/status.json" ||
    fail "pkgtool nightly status --root $nightly/root"
  expect_ok "demo nightly: own Python and smoke succeeded, the other Python failed" \
    json "$nightly/status.json" \
    'sorted((j["job"].split("-")[0], j["state"]) for j in d["jobs"]) == [("manywheel", "FAILED"), ("manywheel", "SUCCEEDED"), ("smoke", "SUCCEEDED")]'
  local good="manywheel-py${py_version/./_}-"
  expect_ok "demo nightly: the job for $py_version succeeded" json "$nightly/status.json" \
    '[j["state"] for j in d["jobs"] if j["job"].startswith("'"$good"'")] == ["SUCCEEDED"]'
  expect_ok "demo nightly: the failed job's log is under logs/failed" \
    compgen -G "$nightly/root/$date/logs/failed/manywheel-py*.log"
  expect_ok "demo nightly: the passing wheel is published, and only it" \
    "$python" -c 'import os, sys; d = sys.argv[1]; f = [n for n in os.listdir(d) if n.endswith(".whl")]; sys.exit(not (len(f) == 1 and "-cp'"${py_version/./}"'-" in f[0]))' \
    "$nightly/channel/files"
  expect_ok "demo nightly: three job documents in the stats store" \
    bash -c '[[ $("$0" stats query --json --db "$1" "SELECT count(*) AS n FROM documents") == *'"'"'"n": 3'"'"'* ]]' \
    "$PKGTOOL" "$nightly/root/stats.db"
  expect_ok "demo nightly: the report names every job" \
    bash -c 'for j in "$@"; do grep -q -- "$j" "$0" || exit 1; done' "$nightly/report.html" \
    smoke "$good"
}

run_abi() {
  local abi=$1 cuda=$2 out=$tmp/abi$1
  local inst=$out/install pkg=$out/install/python/torchlike other=$((1 - $1))
  echo "# ABI=$abi CUDA=$cuda"

  local start=$SECONDS
  if ! LIBPKG_DEMO_OUT=$out LIBPKG_DEMO_CXX11_ABI=$abi LIBPKG_DEMO_CUDA=$cuda \
    bash "$src/scripts/demo.sh" >"$tmp/demo$abi.log" 2>&1; then
    fail "demo.sh ABI=$abi CUDA=$cuda"
    sed 's/^/       /' "$tmp/demo$abi.log" >&2
    return
  fi
  pass
  log "demo.sh ABI=$abi CUDA=$cuda ($((SECONDS - start))s)"
  expect_ok "demo wrote inspect.json" json "$out/inspect.json" \
    'any(s["file"].startswith("python/torchlike/_C.") for s in d)'
  # The packages the demo made (each already passed its own verify there).
  local abi_prefix=cxx11-abi-
  [[ $abi == 0 ]] && abi_prefix=
  expect_ok "demo packed the built wheel" compgen -G "$out/dist/built/torchlike-1.0.0-cp*-linux_*.whl"
  expect_ok "demo wrote the tag explanation" json "$out/show.json" \
    'd["schema"] == "libpkg-show/1" and any(e["soname"] == "libgomp.so.1" and e["graft"] for e in d["external_libraries"])'
  # The short nightly the demo ends with (scripts/demo_nightly.sh): its own
  # Python's job and the smoke job succeed, the planted other-Python job fails
  # with its log under logs/failed/, only the passing wheel is published, the
  # three job documents are in the stats store and the report names them.
  check_demo_nightly "$out/nightly"
  # Each driver's JSON summary: its artifacts, and check_binary passed them.
  expect_ok "manywheel wrote a manylinux wheel" json "$out/manywheel.json" \
    'd["schema"] == "libpkg-driver/1" and d["passed"] and [a for a in d["artifacts"] if a["role"] == "wheel" and "-manylinux_2_" in a["path"] and __import__("os").path.isfile(a["path"])]'
  expect_ok "the manylinux wheel needs nothing from outside" \
    sh -c '"$0" show --json "$1"/dist/torchlike-*-manylinux_*.whl | "$2" -c "import json,sys; d=json.load(sys.stdin); assert not [e for e in d[\"external_libraries\"] if e[\"graft\"]], d[\"external_libraries\"]"' \
    "$PKGTOOL" "$out" "$python"
  expect_ok "check_binary passed the wheel, import included" json "$out/manywheel.json" \
    'len(d["checks"]) == 1 and {c["id"]: c["status"] for c in d["checks"][0]["checks"]}["import"] == "pass"'
  expect_ok "libtorch wrote the zip, its -latest copy and the debug zip" json "$out/libtorch.json" \
    'd["passed"] and sorted(a["role"] for a in d["artifacts"]) == ["debug-libtorch", "libtorch", "libtorch-latest"] and any(a["path"].endswith("/libtorch-'"$abi_prefix"'shared-with-deps-1.0.0.zip") for a in d["artifacts"])'
  expect_ok "check_binary passed the libtorch zip, both link checks included" json "$out/libtorch.json" \
    '{c["id"]: c["status"] for c in d["checks"][0]["checks"]}["link"] == "pass" and {c["id"]: c["status"] for c in d["checks"][0]["checks"]}["link-wrong-abi"] == "pass"'
  expect_ok "conda wrote the .conda and the .tar.bz2, both checked" json "$out/conda.json" \
    'd["passed"] and sorted(a["path"][-6:] for a in d["artifacts"]) == [".conda", "ar.bz2"] and len(d["checks"]) == 2'
  # The conda prefix holds the package in lib/pythonX.Y/site-packages, so
  # check_binary imports it there (a prefix without it makes the check skip).
  expect_ok "check_binary imported torchlike from lib/python$py_version/site-packages in both conda packages" \
    json "$out/conda.json" \
    'sorted((r["artifact"][-6:], {c["id"]: c["status"] for c in r["checks"]}["import"]) for r in d["checks"]) == [(".conda", "pass"), ("ar.bz2", "pass")] and all("/lib/python'"$py_version"'/site-packages" in {c["id"]: c["summary"] for c in r["checks"]}["import"] for r in d["checks"])'
  expect_ok "the conda packages verify" sh -c '"$0" conda verify "$1"/dist/torchlike-1.0.0-*.conda "$1"/dist/torchlike-1.0.0-*.tar.bz2' \
    "$PKGTOOL" "$out"

  local with_cuda
  with_cuda=$(sed -ne 's/^#define TORCHLIKE_WITH_CUDA \(.\)$/\1/p' "$inst/include/torchlike/config.h" || true)
  if [[ $cuda == AUTO ]]; then
    expect_ok "CUDA part built iff nvcc exists (nvcc=$have_nvcc, built=$with_cuda)" test "$with_cuda" = "$have_nvcc"
  else
    expect_ok "CUDA part not built with CUDA=OFF" test "$with_cuda" = 0
  fi

  # -- import and call with Debian's interpreter
  expect_ok "import torchlike and call into libtorchlike" \
    env PYTHONPATH="$inst/python" OMP_NUM_THREADS=2 "$python" - "$abi" "$pkg" "$with_cuda" <<'EOF'
import os, sys
abi, pkg, with_cuda = int(sys.argv[1]), os.path.realpath(sys.argv[2]), sys.argv[3] == "1"
import torchlike
assert torchlike.__file__.startswith(pkg), torchlike.__file__
assert torchlike.__version__ == "1.0.0" and torchlike._C.version() == "1.0.0"
assert torchlike.compiled_with_cxx11_abi() == bool(abi), torchlike._C._GLIBCXX_USE_CXX11_ABI
ops = torchlike.ops()
assert len(ops) == 3 * 128 and "c10::ops::op_000" in ops and "torch::ops::op_127" in ops, len(ops)
r = torchlike.call_op("at::ops::op_007", "self", "a", "b")
assert r == "at::ops::op_007#7(self; a, b)", r
try:
    torchlike.call_op("at::ops::nope", "x")
    raise AssertionError("unknown op did not raise")
except KeyError:
    pass
total, threads = torchlike.parallel_sum(100000)
assert total == sum(range(100000)), total
assert threads == 2, threads
assert torchlike.describe(4).startswith("Tensor(arange, numel=4, device=cpu) sum=6"), torchlike.describe(4)
assert torchlike.cuda.is_compiled() == with_cuda
if with_cuda:
    assert torchlike.cuda.arch_list() == ["sm_75"], torchlike.cuda.arch_list()
    assert torchlike.cuda.device_count() >= 0  # no kernel is launched
# What ld.so actually loaded, and from where.
maps = {}
for line in open("/proc/self/maps"):
    parts = line.split()
    if len(parts) >= 6:
        maps[os.path.basename(parts[5])] = os.path.realpath(parts[5])
for lib in ["libtorchlike.so.1", "libc10like.so.1"] + (["libtorchlike_cuda.so.1"] if with_cuda else []):
    assert maps.get(lib) == os.path.join(pkg, "lib", lib), (lib, maps.get(lib))
# The system's libgomp.so.1 is a symlink; maps shows the file it points to.
gomp = [path for name, path in maps.items() if name.startswith("libgomp.so.1")]
assert len(gomp) == 1 and not gomp[0].startswith(pkg), gomp
EOF

  # -- pkgtool inspect --json: SONAME / NEEDED / RUNPATH
  local ext exts=("$pkg"/_C.*.so)
  ext=$(basename "${exts[0]:-_C.missing.so}")
  if [[ ! -f $pkg/$ext ]]; then
    fail "extension module installed under $pkg"
    return
  fi
  "$PKGTOOL" inspect --json "$pkg/$ext" >"$out/ext.json" 2>&1 || fail "pkgtool inspect $ext"
  expect_ok "_C: NEEDED libtorchlike.so.1 and libgomp.so.1, RUNPATH \$ORIGIN/lib, no SONAME" \
    json "$out/ext.json" \
    '{"libtorchlike.so.1", "libgomp.so.1"} <= set(d[0]["needed"]) and d[0]["runpath"] == "$ORIGIN/lib" and d[0]["soname"] is None and d[0]["rpath"] is None'

  local name f
  for name in c10like torchlike; do
    for f in "$inst/lib/lib$name.so.1.0.0" "$pkg/lib/lib$name.so.1"; do
      "$PKGTOOL" inspect --json "$f" >"$out/$name.json" 2>&1 || fail "pkgtool inspect $f"
      expect_ok "${f#"$inst"/}: SONAME lib$name.so.1, RUNPATH \$ORIGIN" json "$out/$name.json" \
        "d[0]['soname'] == 'lib$name.so.1' and d[0]['runpath'] == '\$ORIGIN' and d[0]['rpath'] is None"
    done
  done
  "$PKGTOOL" inspect --json "$inst/lib/libtorchlike.so.1.0.0" >"$out/torchlike.json" 2>&1 ||
    fail "pkgtool inspect libtorchlike.so.1.0.0"
  expect_ok "libtorchlike NEEDs libc10like.so.1 (the dependency chain)" json "$out/torchlike.json" \
    '"libc10like.so.1" in d[0]["needed"]'
  expect_ok "lib/libtorchlike.so.1 -> libtorchlike.so.1.0.0 symlinks" \
    test "$(readlink "$inst/lib/libtorchlike.so.1")" = libtorchlike.so.1.0.0 -a \
    "$(readlink "$inst/lib/libtorchlike.so")" = libtorchlike.so.1
  expect_ok "python/torchlike/lib holds real files, not symlinks" \
    bash -c "! find '$pkg/lib' -type l | grep -q ."
  "$PKGTOOL" inspect --json "$inst/bin/torchlike_client" >"$out/client.json" 2>&1 ||
    fail "pkgtool inspect bin/torchlike_client"
  expect_ok "bin/torchlike_client: RUNPATH \$ORIGIN/../lib" json "$out/client.json" \
    'd[0]["runpath"] == "$ORIGIN/../lib" and "libtorchlike.so.1" in d[0]["needed"]'

  # -- closure of the extension, resolved from the inspect facts
  if "$python" "$here/closure.py" "$PKGTOOL" "$pkg/$ext" >"$out/closure.json" 2>"$out/closure.err"; then
    expect_ok "closure of _C: libgomp from the system, libtorchlike/libc10like from the package, nothing unresolved" \
      json "$out/closure.json" \
      "(lambda c: c.get('libgomp.so.1') is not None and not c['libgomp.so.1'].startswith('$pkg') and c.get('libtorchlike.so.1') == '$pkg/lib/libtorchlike.so.1' and c.get('libc10like.so.1') == '$pkg/lib/libc10like.so.1' and None not in c.values())(d['closure'])"
    if [[ $with_cuda == 1 ]]; then
      expect_ok "closure of _C: libtorchlike_cuda from the package, libcudart resolved" json "$out/closure.json" \
        "d['closure'].get('libtorchlike_cuda.so.1') == '$pkg/lib/libtorchlike_cuda.so.1' and any(k.startswith('libcudart.so.') and v for k, v in d['closure'].items())"
    fi
  else
    fail "closure.py"
    sed 's/^/       /' "$out/closure.err" >&2
  fi

  # -- TorchLikeConfig.cmake, read as check_binary reads TorchConfig.cmake
  local config=$inst/share/cmake/TorchLike/TorchLikeConfig.cmake recorded
  recorded=$(sed -ne 's/.*D_GLIBCXX_USE_CXX11_ABI=\(.\)".*/\1/p' "$config" 2>/dev/null || true)
  expect_ok "TorchLikeConfig.cmake records ABI $abi (got '$recorded')" test "$recorded" = "$abi"

  # -- ABI census
  local lib cxx11 pre
  for lib in "$inst/lib/libtorchlike.so" "$inst/lib/libc10like.so"; do
    cxx11=$(census "$lib" "$CXX11_RE")
    pre=$(census "$lib" "$PRE_RE")
    if [[ $abi == 1 ]]; then
      expect_ok "census $(basename "$lib"): cxx11=$cxx11 > 100, pre-cxx11=$pre == 0" \
        test "$cxx11" -gt 100 -a "$pre" -eq 0
    else
      expect_ok "census $(basename "$lib"): pre-cxx11=$pre > 100, cxx11=$cxx11 == 0" \
        test "$pre" -gt 100 -a "$cxx11" -eq 0
    fi
  done

  # -- compile a client against the install (check_binary step C)
  local libs=(-ltorchlike -lc10like)
  [[ -e $inst/lib/libtorchlike_cuda.so ]] && libs+=(-ltorchlike_cuda)
  local client=$src/examples/torchlike/client/main.cpp
  if succeeds "client compiles with -D_GLIBCXX_USE_CXX11_ABI=$abi" \
    g++ "$client" -I"$inst/include" -D_GLIBCXX_USE_CXX11_ABI="$abi" -std=gnu++17 \
    -L"$inst/lib" -Wl,-R"$inst/lib" -Wl,--no-as-needed "${libs[@]}" -o "$out/client"; then
    expect_ok "client runs and reports cxx11_abi=$abi" \
      bash -c "'$out/client' | grep -q 'cxx11_abi=$abi ops=384'"
  fi
  expect_ok "client with the opposite ABI ($other) fails to link" \
    bash -c "! g++ '$client' -I'$inst/include' -D_GLIBCXX_USE_CXX11_ABI=$other -std=gnu++17 \
      -L'$inst/lib' -Wl,-R'$inst/lib' -Wl,--no-as-needed ${libs[*]} -o '$out/client-wrong-abi'"
  expect_ok "installed bin/torchlike_client runs" \
    bash -c "'$inst/bin/torchlike_client' | grep -q 'torchlike 1.0.0 cxx11_abi=$abi'"

  # -- find_package(TorchLike) consumer: the ABI comes from the imported targets
  if succeeds "find_package(TorchLike) consumer configures and builds" \
    bash -c "cmake -S '$src/examples/torchlike/client' -B '$out/consumer' -DCMAKE_PREFIX_PATH='$inst' && cmake --build '$out/consumer'"; then
    expect_ok "find_package(TorchLike) consumer runs" \
      bash -c "'$out/consumer/torchlike_client' | grep -q 'cxx11_abi=$abi'"
  fi

  # -- wheel metadata for the later manywheel driver
  local tag
  tag=$("$python" -c 'import sys; print("cp%d%d" % sys.version_info[:2])')
  expect_ok "dist-info WHEEL tagged $tag-$tag-linux_*" \
    grep -q "^Tag: $tag-$tag-linux_" "$inst/python/torchlike-1.0.0.dist-info/WHEEL"

  # -- CUDA library (compiled only; nothing runs on a GPU)
  if [[ $with_cuda == 1 ]]; then
    local culib=$inst/lib/libtorchlike_cuda.so.1.0.0
    expect_ok "libtorchlike_cuda has a .nv_fatbin section" bash -c "readelf -SW '$culib' | grep -q '\.nv_fatbin'"
    "$PKGTOOL" inspect --json "$culib" >"$out/cuda.json" 2>&1 || fail "pkgtool inspect $culib"
    expect_ok "libtorchlike_cuda: SONAME libtorchlike_cuda.so.1, NEEDED libcudart.so.N and libtorchlike.so.1" \
      json "$out/cuda.json" \
      'd[0]["soname"] == "libtorchlike_cuda.so.1" and any(n.startswith("libcudart.so.") for n in d[0]["needed"]) and "libtorchlike.so.1" in d[0]["needed"]'
  fi
}

start=$SECONDS
run_abi 1 AUTO
run_abi 0 OFF
log "# $((SECONDS - start))s"
finish
