#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# scripts/demo.sh: build the torch-shaped example (examples/torchlike), install
# it, and run the packaging job on what it installed.
#
# The job: `pkgtool inspect` over the installed libraries, the test client and
# the Python extension; the install tree's python/ packed as the "built" wheel
# (`pkgtool wheel pack`, what setup.py bdist_wheel leaves) and its tag
# explained (`pkgtool show`); then the three drivers, each a library call that
# ends with check_binary on its output:
#   manywheel  the built wheel → manylinux wheel with libgomp (and libcudart)
#              bundled into torchlike/lib, installed and imported in a venv
#   libtorch   lib/ include/ share/ bin/ → shared-with-deps zip, -latest copy
#              and debug zip; the example's C++ client links and runs
#   conda      the conda prefix (the example's cpp + conda install components:
#              lib/ include/ share/ bin/ and lib/pythonX.Y/site-packages/torchlike),
#              relocated → .conda and .tar.bz2; the check imports torchlike
#
# Environment (all optional):
#   LIBPKG_DEMO_OUT        output root (default: <repo>/out/example). It gets
#                          build/ (CMake build of the example), install/ (the
#                          prefix: lib/ include/ share/ bin/ python/),
#                          conda-prefix/ (what the conda driver packs), logs/,
#                          inspect.json/.txt, show.json/.txt, dist/ (the
#                          packages; dist/built/ the built wheel) and the
#                          drivers' summaries manywheel.json, libtorch.json,
#                          conda.json (schema libpkg-driver/1).
#   LIBPKG_DEMO_CXX11_ABI  1 (default) or 0: _GLIBCXX_USE_CXX11_ABI of the example
#   LIBPKG_DEMO_CUDA       AUTO (default: only if nvcc is found), ON or OFF
#   LIBPKG_DEMO_CUDNN      cuDNN version for the CUDA conda build string
#                          (default: the current toolkit's, `pkgtool cuda list`)
#   LIBPKG_DEMO_JOBS       parallel build jobs (default: nproc)
#   PKGTOOL, MANYWHEEL, LIBTORCH_DRIVER, CONDA_DRIVER
#                          the tools. Without them the script builds the
#                          missing ones in LIBPKG_BUILD_DIR (default
#                          <repo>/build, configured first if needed).
#   LIBPKG_PYTHON          interpreter the extension is built for (default /usr/bin/python3)
#
# Then a short nightly over the example (scripts/demo_nightly.sh): the built
# wheel through manywheel as a nightly job, one configuration failing on
# purpose, the published channel, the stats store and the report, whose path
# is the last line printed.
#
# Exit status: 0 on success, non-zero when any step fails (the step's log tail
# is printed).
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=${LIBPKG_DEMO_OUT:-$repo/out/example}
abi=${LIBPKG_DEMO_CXX11_ABI:-1}
cuda=${LIBPKG_DEMO_CUDA:-AUTO}
jobs=${LIBPKG_DEMO_JOBS:-$(nproc 2>/dev/null || echo 2)}
python=${LIBPKG_PYTHON:-/usr/bin/python3}

case $abi in 0 | 1) ;; *) echo "demo: LIBPKG_DEMO_CXX11_ABI must be 0 or 1, not '$abi'" >&2; exit 2 ;; esac
case $cuda in AUTO | ON | OFF) ;; *) echo "demo: LIBPKG_DEMO_CUDA must be AUTO, ON or OFF, not '$cuda'" >&2; exit 2 ;; esac
[[ -x $python ]] || { echo "demo: Python interpreter '$python' not found" >&2; exit 2; }

mkdir -p "$out/logs"
out=$(cd "$out" && pwd)
build=$out/build
install=$out/install
logs=$out/logs

if command -v ninja >/dev/null 2>&1; then generator=(-G Ninja); else generator=(); fi

# step NAME CMD...: run CMD with its output in logs/NAME.log, report the time,
# and on failure show the end of the log and stop.
step() {
  local name=$1 start end
  shift
  start=$(date +%s.%N)
  if ! "$@" >"$logs/$name.log" 2>&1; then
    echo "demo: step '$name' failed; last lines of $logs/$name.log:" >&2
    tail -n 30 "$logs/$name.log" >&2
    exit 1
  fi
  end=$(date +%s.%N)
  awk -v n="$name" -v s="$start" -v e="$end" 'BEGIN { printf "  %-18s %5.1fs\n", n, e - s }'
}

echo "torchlike demo: building examples/torchlike (ABI=$abi, CUDA=$cuda, $jobs jobs)"

# -- pkgtool and the drivers
tools=(PKGTOOL MANYWHEEL LIBTORCH_DRIVER CONDA_DRIVER)
if [[ -z ${PKGTOOL:-} || -z ${MANYWHEEL:-} || -z ${LIBTORCH_DRIVER:-} || -z ${CONDA_DRIVER:-} ]]; then
  libpkg_build=${LIBPKG_BUILD_DIR:-$repo/build}
  if [[ ! -f $libpkg_build/CMakeCache.txt ]]; then
    step configure-libpkg cmake -S "$repo" -B "$libpkg_build" "${generator[@]}"
  fi
  step build-tools cmake --build "$libpkg_build" -j "$jobs" \
    --target pkgtool manywheel libtorch_driver conda_driver
  PKGTOOL=${PKGTOOL:-$libpkg_build/tools/pkgtool/pkgtool}
  MANYWHEEL=${MANYWHEEL:-$libpkg_build/drivers/manywheel/manywheel}
  LIBTORCH_DRIVER=${LIBTORCH_DRIVER:-$libpkg_build/drivers/libtorch/libtorch}
  CONDA_DRIVER=${CONDA_DRIVER:-$libpkg_build/drivers/conda/conda}
fi
for tool in "${tools[@]}"; do
  path=${!tool}
  if [[ $path != */* ]]; then path=$(command -v "$path" || echo "$path"); fi
  [[ -x $path ]] || { echo "demo: $tool '$path' is not executable" >&2; exit 1; }
  # absolute: we cd before running them
  printf -v "$tool" '%s' "$(cd "$(dirname "$path")" && pwd)/$(basename "$path")"
done

# -- the example
step configure cmake -S "$repo/examples/torchlike" -B "$build" "${generator[@]}" \
  -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_INSTALL_PREFIX="$install" \
  -DTORCHLIKE_CXX11_ABI="$abi" \
  -DTORCHLIKE_CUDA="$cuda" \
  -DPython3_EXECUTABLE="$python"
step build cmake --build "$build" -j "$jobs"

# Fresh prefixes, so files of an earlier configuration (say, with CUDA) do not
# linger. Only a directory that looks like our own install is removed.
fresh_prefix() {
  [[ -e $1 ]] || return 0
  if [[ -d $1/share/cmake/TorchLike || -z $(ls -A "$1") ]]; then
    rm -rf "$1"
  else
    echo "demo: $1 exists and is not a torchlike install; not touching it" >&2
    exit 1
  fi
}
fresh_prefix "$install"
step install cmake --install "$build"
# The conda prefix: the example's own `cpp` and `conda` install components,
# i.e. lib/ include/ share/ bin/ and the Python package in
# lib/pythonX.Y/site-packages (what conda's python imports), no python/.
conda_prefix=$out/conda-prefix
fresh_prefix "$conda_prefix"
install_conda() {
  cmake --install "$build" --prefix "$conda_prefix" --component cpp &&
    cmake --install "$build" --prefix "$conda_prefix" --component conda
}
step install-conda install_conda

# -- the packaging job: inspect every ELF file that was installed (real files,
# not the libfoo.so -> libfoo.so.1 -> libfoo.so.1.0.0 symlinks).
# Paths are given relative to the prefix, so the reports read lib/..., python/...
mapfile -t files < <(cd "$install" && { find lib python -type f -name '*.so*'; find bin -type f; } | sort)
if [[ ${#files[@]} -eq 0 ]]; then
  echo "demo: nothing to inspect under $install" >&2
  exit 1
fi
run_inspect() {
  (cd "$install" && "$PKGTOOL" inspect --json "${files[@]}" >"$out/inspect.json" &&
    "$PKGTOOL" inspect "${files[@]}" >"$out/inspect.txt")
}
step inspect run_inspect

# -- packages (deterministic: fixed timestamps). The install tree's python/
# packed as a plain wheel stands in for `setup.py bdist_wheel`; the three
# drivers then do what the old build scripts did, each ending with
# check_binary on what it wrote (summaries in <driver>.json).
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-1700000000}
dist=$out/dist
rm -rf "$dist"
mkdir -p "$dist/built"
distinfo=$(cd "$install/python" && echo torchlike-*.dist-info)
version=${distinfo#torchlike-}
version=${version%.dist-info}
build_hash=$(git -C "$repo" rev-parse HEAD 2>/dev/null || echo unknown)
py_version=$("$python" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
step wheel-pack "$PKGTOOL" wheel pack "$install/python" -d "$dist/built"
built_wheel=$(echo "$dist"/built/torchlike-*-linux_*.whl)
# Which tag the built wheel can have and why (what manywheel will retag to).
run_show() {
  "$PKGTOOL" show "$built_wheel" >"$out/show.txt" &&
    "$PKGTOOL" show --json "$built_wheel" >"$out/show.json"
}
step wheel-show run_show

# The configuration the example was built for: its ABI and accelerator.
cuda_version=$(sed -n 's/^#define TORCHLIKE_CUDA_VERSION "\(.*\)"/\1/p' "$install/include/torchlike/config.h")
grep -q '^#define TORCHLIKE_WITH_CUDA 1' "$install/include/torchlike/config.h" || cuda_version=cpu
abi_name=cxx11
[[ $abi == 0 ]] && abi_name=pre-cxx11
common=(--no-env --cuda "$cuda_version" --abi "$abi_name" --version "$version"
  --check-python "$python" --abi-library 'libtorchlike.so*'
  --abi-config TorchLikeConfig.cmake --min-symbols 100 -o "$dist" --json)
conda_cuda=()
if [[ $cuda_version != cpu ]]; then
  # The built-in table for this version lists everything PyTorch bundles
  # (about 1 GB for 13.0: cuDNN, cuBLAS, NCCL, cuSPARSELt...), and some of
  # it (cuSPARSELt, NVSHMEM) is not part of the toolkit installed here. The
  # example links only the runtime, so the demo brings a table of just
  # that: the same driver path (table lookup, keep-name rules,
  # --expect-table), in seconds. The full tables are exercised by the tests
  # (driver_manywheel_table_versions; driver_manywheel_real_cuda13_full on
  # the real toolkit).
  printf '{"schema": 1, "note": "torchlike needs only the CUDA runtime", "versions": [{"cuda": "%s", "libraries": ["%s"]}]}\n' \
    "$cuda_version" "$(readlink -f /usr/local/cuda)/lib64/libcudart.so.${cuda_version%%.*}" >"$out/cuda-table.json"
  common+=(--cuda-table "$out/cuda-table.json")
  # conda's build string names the cuDNN version (py3.11_cuda13.0_cudnn9.1_0).
  cudnn=${LIBPKG_DEMO_CUDNN:-$("$PKGTOOL" cuda list --json | "$python" -c '
import json, sys
for t in json.load(sys.stdin)["toolkits"]:
    if t.get("current") and t.get("cudnn"):
        print(".".join(t["cudnn"].split(".")[:2]))')}
  if [[ -z $cudnn ]]; then
    echo "demo: CUDA $cuda_version build but no cuDNN found for its conda build string; set LIBPKG_DEMO_CUDNN" >&2
    exit 1
  fi
  conda_cuda=(--cudnn "$cudnn")
fi

# run_driver NAME CMD...: the driver's JSON summary in NAME.json; when a
# check fails, its problems go to the step's log.
run_driver() {
  local name=$1 rc=0
  shift
  "$@" >"$out/$name.json" || rc=$?
  if [[ $rc == 1 ]]; then
    "$python" -c '
import json, sys
for r in json.load(open(sys.argv[1]))["checks"]:
    for c in r["checks"]:
        if c["status"] == "fail":
            print("%s: %s: %s" % (r["artifact"], c["id"], c["summary"]))
            for p in c.get("problems", []):
                print("  %s: %s" % (p.get("file", ""), p["message"]))' "$out/$name.json"
  fi
  return $rc
}
# manywheel: bundle libgomp (and libcudart) into torchlike/lib, rewrite
# NEEDED/RPATH, retag to the manylinux tag the binaries satisfy; the check
# installs the wheel into a venv and imports it.
step manywheel run_driver manywheel "$MANYWHEEL" --wheel "$built_wheel" \
  --python "$py_version" "${common[@]}"
# libtorch: the install tree (python/ left out) as a shared-with-deps zip with
# libgomp (and libcudart) bundled and the debug info split into the debug
# zip; the check compiles and runs the example's C++ client against it.
step libtorch run_driver libtorch "$LIBTORCH_DRIVER" --tree "$install" --skip-other \
  --build-hash "$build_hash" --variant shared-with-deps \
  --debug-split --debug-library 'libtorchlike.so*' \
  --client "$repo/examples/torchlike/client/main.cpp" --link-lib torchlike --link-lib c10like \
  "${common[@]}"
# conda: the conda prefix, RPATHs made $ORIGIN-relative (_C gets $PREFIX/lib),
# as .conda and .tar.bz2; there libgomp and libcudart come from conda
# dependencies. The check imports torchlike from lib/pythonX.Y/site-packages.
step conda run_driver conda "$CONDA_DRIVER" --prefix "$conda_prefix" --python "$py_version" \
  --package-name torchlike --format both "${conda_cuda[@]}" \
  --allow-external 'libcudart.so.*' --allow-external 'libgomp.so.*' "${common[@]}"

# -- summary
"$python" - "$out" "$install" <<'EOF'
import json, os, re, sys

out, install = sys.argv[1], sys.argv[2]
config = open(os.path.join(install, "include/torchlike/config.h")).read()
define = lambda name: re.search(r"#define %s (\S+)" % name, config).group(1).strip('"')
cuda = define("TORCHLIKE_CUDA_VERSION") if define("TORCHLIKE_WITH_CUDA") == "1" else "off"

print()
print("outputs (ABI=%s, CUDA %s)" % (define("TORCHLIKE_CXX11_ABI"), cuda))
print("  install  %s   (lib/ include/ share/cmake/TorchLike/ bin/ python/)" % install)
print("  python   PYTHONPATH=%s/python %s -c 'import torchlike'" % (install, sys.executable))
print("  conda    %s/conda-prefix   (lib/ include/ share/ bin/ lib/python%d.%d/site-packages/)"
      % (out, sys.version_info[0], sys.version_info[1]))
print("  inspect  %s/inspect.json, inspect.txt; tag explanation show.txt" % out)
print("  build    %s/build, logs in %s/logs" % (out, out))
for driver in ("manywheel", "libtorch", "conda"):
    summary = json.load(open(os.path.join(out, driver + ".json")))
    print()
    print("%s (%s, %.1f s; summary %s/%s.json):" % (driver, summary["config"]["build_environment"],
                                                     summary["seconds"], out, driver))
    for a in summary["artifacts"]:
        print("  %-16s %s (%d bytes)" % (a["role"], a["path"], a["size"]))
    for report in summary["checks"]:
        counts = {s: sum(c["status"] == s for c in report["checks"]) for s in ("pass", "fail", "skip")}
        print("  check_binary %s: %s (%d passed, %d failed, %d skipped)" % (
            os.path.basename(report["artifact"]), "PASS" if not counts["fail"] else "FAIL",
            counts["pass"], counts["fail"], counts["skip"]))
        for c in report["checks"]:
            print("    %-5s %-15s %s" % (c["status"].upper(), c["id"], c["summary"]))
print()
print("dynamic linking of the install tree (pkgtool inspect):")
for s in json.load(open(os.path.join(out, "inspect.json"))):
    print("  " + s["file"])
    if s.get("soname"):
        print("    soname   " + s["soname"])
    print("    needed   " + (" ".join(s["needed"]) or "-"))
    if s.get("runpath"):
        print("    runpath  " + s["runpath"])
    if s.get("rpath"):
        print("    rpath    " + s["rpath"])
    mv = s.get("max_versions", {})
    req = [mv[k]["tag"] for k in ("GLIBC", "GLIBCXX") if k in mv]
    other = [v["tag"] for k, v in sorted(mv.items()) if k not in ("GLIBC", "GLIBCXX")]
    print("    requires " + (" ".join(req) or "-") + ("   (also %s)" % " ".join(other) if other else ""))
EOF

# -- a short nightly over the example: jobs, logs, channel, stats, report
echo
echo "nightly over the example (scripts/demo_nightly.sh):"
LIBPKG_DEMO_OUT=$out PKGTOOL=$PKGTOOL MANYWHEEL=$MANYWHEEL "$repo/scripts/demo_nightly.sh"
