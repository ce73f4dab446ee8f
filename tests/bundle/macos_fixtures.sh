# SPDX-License-Identifier: BSD-3-Clause
# macOS wheels linked at test time (sourced by the macOS repair tests and
# the benchmark's test): a torch-like wheel whose extension needs
# @rpath/libtorchlike.dylib (in torch/lib), which needs libomp by its
# Homebrew install name /opt/homebrew/opt/libomp/lib/libomp.dylib (found
# through --dyld-library-path; the wheel has its own torch/lib/libomp.dylib)
# and @rpath/libgraft.dylib through an absolute build rpath; libgraft needs
# the Homebrew libomp too. The extension has a duplicate rpath and a build
# rpath.
source "$LIBPKG_SOURCE_DIR/tests/macho/fixtures.sh"

# make_wheel TREE OUTDIR: packs TREE (with its dist-info) into OUTDIR.
make_wheel() {
  "$PKGTOOL" wheel pack "$1" -d "$2" >/dev/null
}

# dist_info TREE NAME VERSION TAG...: METADATA and WHEEL.
dist_info() {
  local tree=$1 name=$2 version=$3
  shift 3
  local di="$tree/$name-$version.dist-info"
  mkdir -p "$di"
  printf 'Metadata-Version: 2.1\nName: %s\nVersion: %s\n' "$name" "$version" >"$di/METADATA"
  {
    printf 'Wheel-Version: 1.0\nGenerator: bdist_wheel (0.43.0)\nRoot-Is-Purelib: false\n'
    local t
    for t in "$@"; do printf 'Tag: %s\n' "$t"; done
  } >"$di/WHEEL"
}

# build_torchlike DIR [TARGET_EXT TARGET_LIB] [EXTRA_DATA_BYTES]: the
# torch-like fixture in DIR: DIR/brew (the Homebrew libomp), DIR/build/lib
# (libgraft), DIR/tree (the wheel tree) and DIR/dist/<wheel>. Sets WHEEL.
# EXTRA_DATA_BYTES adds a __DATA blob of that many random bytes to
# libtorchlike (the benchmark's ~400 MB of Mach-O).
build_torchlike() {
  local d=$1 text=${2:-arm64-apple-macos11} tlib=${3:-arm64-apple-macos12} extra=${4:-0}
  mkdir -p "$d/brew" "$d/build/lib" "$d/tree/torch/lib" "$d/dist" "$d/src"
  echo 'int omp_get_max_threads(void) { return 4; }' >"$d/src/omp.c"
  echo 'extern int omp_get_max_threads(void); int graft(void) { return omp_get_max_threads(); }' \
    >"$d/src/graft.c"
  cat >"$d/src/torchlike.c" <<'C'
extern int omp_get_max_threads(void);
extern int graft(void);
int torchlike(void) { return omp_get_max_threads() + graft(); }
C
  if ((extra > 0)); then
    "$LIBPKG_PYTHON" - "$d/src/blob.c" "$extra" <<'PY'
import sys
# A large __DATA section without a large source file: an incbin of random
# bytes written next to it.
path, n = sys.argv[1], int(sys.argv[2])
import os
with open(path + ".bin", "wb") as f:
    left = n
    while left:
        k = min(left, 1 << 24)
        f.write(os.urandom(k))
        left -= k
with open(path, "w") as f:
    f.write('__asm__(".section __DATA,__blob\\n.globl _blob\\n_blob:\\n.incbin \\"%s\\"\\n");\n'
            % (path + ".bin"))
PY
  fi
  echo 'extern int torchlike(void); int PyInit__C(void) { return torchlike(); }' >"$d/src/ext.c"
  local pad=-Wl,-headerpad_max_install_names
  mcc "$tlib" -dynamiclib -o "$d/brew/libomp.dylib" "$d/src/omp.c" \
    -install_name /opt/homebrew/opt/libomp/lib/libomp.dylib $pad
  mcc "$tlib" -dynamiclib -o "$d/tree/torch/lib/libomp.dylib" "$d/src/omp.c" \
    -install_name @rpath/libomp.dylib $pad
  mcc "$tlib" -dynamiclib -o "$d/build/lib/libgraft.dylib" "$d/src/graft.c" \
    -install_name @rpath/libgraft.dylib $pad "$d/brew/libomp.dylib" -Wl,-rpath,"$d/build/lib"
  local blob=()
  ((extra > 0)) && blob=("$d/src/blob.c")
  mcc "$tlib" -dynamiclib -o "$d/tree/torch/lib/libtorchlike.dylib" "$d/src/torchlike.c" "${blob[@]}" \
    -install_name @rpath/libtorchlike.dylib $pad "$d/brew/libomp.dylib" \
    "$d/build/lib/libgraft.dylib" -Wl,-rpath,"$d/build/lib"
  mcc "$text" -bundle -o "$d/tree/torch/_C.cpython-311-darwin.so" "$d/src/ext.c" $pad \
    "$d/tree/torch/lib/libtorchlike.dylib" -Wl,-rpath,@loader_path/lib \
    -Wl,-rpath,@loader_path/lib -Wl,-rpath,"$d/build/lib" 2>/dev/null
  echo '# torch-like' >"$d/tree/torch/__init__.py"
  dist_info "$d/tree" torch 2.5.0 cp311-cp311-macosx_11_0_arm64
  make_wheel "$d/tree" "$d/dist"
  WHEEL=$d/dist/torch-2.5.0-cp311-cp311-macosx_11_0_arm64.whl
  [[ -f $WHEEL ]] || { echo "FAIL: fixture wheel not built" >&2; exit 1; }
}
