#!/usr/bin/env bash
# scripts/demo.sh: build the torch-shaped example (examples/torchlike), install
# it, and run the packaging job on what it installed.
#
# The job: `pkgtool inspect` over the installed libraries, the test client and
# the Python extension; then the install tree is packaged three ways and each
# package verified: a wheel of python/ (`pkgtool wheel pack` + `verify`), a
# libtorch-style zip of lib/ include/ share/ bin/ (`pkgtool libtorch pack` +
# `verify`) and conda packages of the whole prefix (`pkgtool conda pack` +
# `verify`); the wheel is repaired (`pkgtool repair`) and each shipped package
# goes through check_binary (`pkgtool check`).
#
# Environment (all optional):
#   LIBPKG_DEMO_OUT        output root (default: <repo>/out/example). It gets
#                          build/ (CMake build of the example), install/ (the
#                          prefix: lib/ include/ share/ bin/ python/), logs/,
#                          inspect.json, inspect.txt and dist/ (the packages).
#   LIBPKG_DEMO_CXX11_ABI  1 (default) or 0: _GLIBCXX_USE_CXX11_ABI of the example
#   LIBPKG_DEMO_CUDA       AUTO (default: only if nvcc is found), ON or OFF
#   LIBPKG_DEMO_JOBS       parallel build jobs (default: nproc)
#   PKGTOOL                pkgtool binary. Without it the script builds the
#                          `pkgtool` target in LIBPKG_BUILD_DIR (default
#                          <repo>/build, configured first if needed) and uses that.
#   LIBPKG_PYTHON          interpreter the extension is built for (default /usr/bin/python3)
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

# -- pkgtool
if [[ -z ${PKGTOOL:-} ]]; then
  libpkg_build=${LIBPKG_BUILD_DIR:-$repo/build}
  if [[ ! -f $libpkg_build/CMakeCache.txt ]]; then
    step configure-libpkg cmake -S "$repo" -B "$libpkg_build" "${generator[@]}"
  fi
  step build-pkgtool cmake --build "$libpkg_build" --target pkgtool -j "$jobs"
  PKGTOOL=$libpkg_build/tools/pkgtool/pkgtool
fi
if [[ $PKGTOOL != */* ]]; then PKGTOOL=$(command -v "$PKGTOOL" || echo "$PKGTOOL"); fi
[[ -x $PKGTOOL ]] || { echo "demo: pkgtool '$PKGTOOL' is not executable" >&2; exit 1; }
PKGTOOL=$(cd "$(dirname "$PKGTOOL")" && pwd)/$(basename "$PKGTOOL")  # we cd before running it

# -- the example
step configure cmake -S "$repo/examples/torchlike" -B "$build" "${generator[@]}" \
  -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_INSTALL_PREFIX="$install" \
  -DTORCHLIKE_CXX11_ABI="$abi" \
  -DTORCHLIKE_CUDA="$cuda" \
  -DPython3_EXECUTABLE="$python"
step build cmake --build "$build" -j "$jobs"

# A fresh prefix, so files of an earlier configuration (say, with CUDA) do not
# linger. Only a directory that looks like our own install is removed.
if [[ -e $install ]]; then
  if [[ -d $install/share/cmake/TorchLike || -z $(ls -A "$install") ]]; then
    rm -rf "$install"
  else
    echo "demo: $install exists and is not a torchlike install; not touching it" >&2
    exit 1
  fi
fi
step install cmake --install "$build"

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

# -- packages (deterministic: fixed timestamps)
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-1700000000}
dist=$out/dist
rm -rf "$dist"
mkdir -p "$dist"
distinfo=$(cd "$install/python" && echo torchlike-*.dist-info)
version=${distinfo#torchlike-}
version=${version%.dist-info}
build_hash=$(git -C "$repo" rev-parse HEAD 2>/dev/null || echo unknown)
abi_flag=()
[[ $abi == 0 ]] && abi_flag=(--pre-cxx11-abi)
step wheel-pack "$PKGTOOL" wheel pack "$install/python" -d "$dist"
step wheel-verify "$PKGTOOL" wheel verify "$dist"/torchlike-*.whl
# The manywheel job: which tag the wheel can have and why, then bundle what
# it links from outside (libgomp, and libcudart in a CUDA build) into
# torchlike/lib, retagged to the manylinux tag it actually satisfies.
run_show() {
  "$PKGTOOL" show "$dist"/torchlike-*-linux_*.whl >"$out/show.txt" &&
    "$PKGTOOL" show --json "$dist"/torchlike-*-linux_*.whl >"$out/show.json"
}
step wheel-show run_show
step wheel-repair "$PKGTOOL" repair "$dist"/torchlike-*-linux_*.whl --lib-dir torchlike/lib -w "$dist/repaired"
step repaired-verify "$PKGTOOL" wheel verify "$dist"/repaired/torchlike-*.whl
step libtorch-pack "$PKGTOOL" libtorch pack "$install" --skip-other --version "$version" \
  --build-hash "$build_hash" "${abi_flag[@]}" -o "$dist"
step libtorch-verify "$PKGTOOL" libtorch verify "$dist/$("$PKGTOOL" libtorch name --version "$version" "${abi_flag[@]}" | head -n 1)"
step conda-pack "$PKGTOOL" conda pack "$install" --name torchlike --version "$version" \
  --format both -o "$dist"
step conda-verify "$PKGTOOL" conda verify "$dist"/torchlike-*.conda "$dist"/torchlike-*.tar.bz2

# -- check_binary on what ships (reports in check-*.txt). The census library
# and config file are torchlike's; the expected accelerator is what was built.
# The conda package gets libgomp and libcudart from its dependencies, and this
# libtorch zip is packed from the install tree without bundling, so those two
# are accepted from the system there.
cuda_version=$(sed -n 's/^#define TORCHLIKE_CUDA_VERSION "\(.*\)"/\1/p' "$install/include/torchlike/config.h")
grep -q '^#define TORCHLIKE_WITH_CUDA 1' "$install/include/torchlike/config.h" || cuda_version=cpu
check_args=(--no-env --python "$python" --cuda "$cuda_version" --abi-library 'libtorchlike.so*'
  --abi-config TorchLikeConfig.cmake --min-symbols 100)
run_check() { # run_check NAME ARTIFACT ARGS...: report in check-NAME.txt
  local name=$1
  shift
  "$PKGTOOL" check "$@" "${check_args[@]}" >"$out/check-$name.txt"
}
step check-wheel run_check wheel "$dist"/repaired/torchlike-*.whl
step check-libtorch run_check libtorch \
  "$dist/$("$PKGTOOL" libtorch name --version "$version" "${abi_flag[@]}" | head -n 1)" \
  --client "$repo/examples/torchlike/client/main.cpp" --link-lib torchlike --link-lib c10like \
  --allow-external 'libcudart.so.*'
step check-conda run_check conda "$dist"/torchlike-*.conda \
  --allow-external 'libcudart.so.*' --allow-external 'libgomp.so.*'

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
print("  inspect  %s/inspect.json, inspect.txt" % out)
for f in sorted(os.listdir(os.path.join(out, "dist"))):
    print("  package  %s/dist/%s (%d bytes)" % (out, f, os.path.getsize(os.path.join(out, "dist", f))))
print("  build    %s/build, logs in %s/logs" % (out, out))
for name in ("wheel", "libtorch", "conda"):
    print()
    print("check_binary (%s/check-%s.txt):" % (out, name))
    for line in open(os.path.join(out, "check-%s.txt" % name)):
        print("  " + line.rstrip())
print()
print("dynamic linking (pkgtool inspect):")
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
