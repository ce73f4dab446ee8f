#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# `pkgtool repair` splices edited members (docs/archives.md, "Splice"): an
# ELF wheel whose 24 MiB libbig.so (a blob of the system's shared
# libraries, so it compresses like code) needs libext.so from a build
# directory through a build-tree RUNPATH. Repair grafts libext and edits
# libbig.so's NEEDED entry and RUNPATH; the rest of its bytes are unchanged
# and its deflate data is re-used.
#
# Inputs: the wheel as `pkgtool wheel pack` writes it (restart points:
# spliced by chunks), re-zipped by Python's zipfile at levels 1, 6 and 9
# (one stream per member: spliced by blocks), and stored (the reference:
# a stored member is never spliced, the edited library is compressed from
# its bytes). Checked for every input: the result says the big member was
# spliced (and the small edited extension was not), zlib inflates every
# member from its local header to the central CRC-32 and size, `unzip -t`
# accepts the wheel, its members are byte for byte those of the reference
# output, -j1 writes the same bytes as -j2, and with the chunk cache (cold,
# then warm) the same bytes as with --no-cache. The repaired wheel imports
# with the build directory gone, and the library's own CRC-32 of its blob
# (computed in C) matches zlib's of the blob file.
source "$(dirname "$0")/lib/common.sh"
require_repair_tools zip
make_scratch
cd "$SCRATCH"
SC=("$LIBPKG_PYTHON" "$REPAIRTEST_DIR/lib/splicecheck.py")

case_begin "fixture"
mkdir -p src build tree/bigpkg/lib dist
"$LIBPKG_PYTHON" - src/blob.bin $((24 << 20)) <<'PY'
import glob, os, sys
path, n = sys.argv[1], int(sys.argv[2])
libs = sorted(p for p in glob.glob("/usr/lib/x86_64-linux-gnu/*.so*") if os.path.isfile(p) and not os.path.islink(p))
with open(path, "wb") as f:
    left = n
    for lib in libs:
        if not left:
            break
        data = open(lib, "rb").read(left)
        f.write(data)
        left -= len(data)
    f.write(os.urandom(left))
PY
echo 'int ext_value(void) { return 42; }' >src/ext.c
cat >src/big.c <<C
__asm__(".section .rodata.blob,\"a\"\n.globl big_blob\nbig_blob:\n.incbin \"$SCRATCH/src/blob.bin\"\n"
        ".globl big_blob_end\nbig_blob_end:\n.text\n");
extern const unsigned char big_blob[], big_blob_end[];
extern int ext_value(void);
int big_value(void) { return ext_value() + 1; }
unsigned blob_crc(void) {
  unsigned c = 0xFFFFFFFFu;
  for (const unsigned char* p = big_blob; p < big_blob_end; ++p) {
    c ^= *p;
    for (int k = 0; k < 8; ++k) c = (c >> 1) ^ (0xEDB88320u & -(c & 1u));
  }
  return c ^ 0xFFFFFFFFu;
}
C
cat >src/mod.c <<'C'
#include <Python.h>
extern int big_value(void);
extern unsigned blob_crc(void);
static PyObject* value(PyObject* s, PyObject* a) { return PyLong_FromLong(big_value()); }
static PyObject* crc(PyObject* s, PyObject* a) { return PyLong_FromUnsignedLong(blob_crc()); }
static PyMethodDef m[] = {{"value", value, METH_NOARGS, 0}, {"crc", crc, METH_NOARGS, 0}, {0}};
static struct PyModuleDef d = {PyModuleDef_HEAD_INIT, "_ext", 0, -1, m};
PyMODINIT_FUNC PyInit__ext(void) { return PyModule_Create(&d); }
C
EXT=$("$LIBPKG_PYTHON" -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))')
INC=$("$LIBPKG_PYTHON" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
TAG=$("$LIBPKG_PYTHON" -c 'import sys; t="cp%d%d" % sys.version_info[:2]; print(f"{t}-{t}-linux_x86_64")')
check "build libext" gcc -O1 -fPIC -shared -Wl,-soname,libext.so -o build/libext.so src/ext.c
check "build libbig" gcc -O1 -fPIC -shared -Wl,-soname,libbig.so -o tree/bigpkg/lib/libbig.so src/big.c \
  -Lbuild -lext "-Wl,--enable-new-dtags,-rpath,$SCRATCH/build"
check "build the extension" gcc -O1 -fPIC -shared "-I$INC" -o "tree/bigpkg/_ext$EXT" src/mod.c \
  -Ltree/bigpkg/lib -lbig '-Wl,--enable-new-dtags,-rpath,$ORIGIN/lib'
echo 'from ._ext import value, crc' >tree/bigpkg/__init__.py
mkdir -p tree/bigpkg-1.0.dist-info
printf 'Metadata-Version: 2.1\nName: bigpkg\nVersion: 1.0\n' >tree/bigpkg-1.0.dist-info/METADATA
printf 'Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: false\nTag: %s\n' "$TAG" \
  >tree/bigpkg-1.0.dist-info/WHEEL
check "wheel pack" "$PKGTOOL" wheel pack tree -d dist --no-cache
W=$(ls dist/*.whl)
[[ -f $W ]] || abort "no fixture wheel"
mkdir -p in/pack
cp "$W" in/pack/
for how in stored 1 6 9; do
  mkdir -p "in/z$how"
  check "re-zip ($how)" "${SC[@]}" rezip "$W" "in/z$how/${W##*/}" "$how"
done

# repair_to NAME INPUT ARGS...: repairs the wheel in in/INPUT/ into out-NAME/, keeps
# the JSON as NAME.json and sets R to the output wheel.
repair_to() {
  local name=$1 input=$2
  shift 2
  expect_status 0 "repair $name" "$PKGTOOL" repair "in/$input"/*.whl -w "out-$name" --lib-path build --json "$@"
  cp "$SCRATCH/last.out" "$name.json"
  R=$(ls "out-$name"/*.whl 2>/dev/null)
}

case_begin "reference: stored input, nothing spliced"
repair_to ref zstored --no-cache
REF=$R
check "the reference was not spliced" "$LIBPKG_PYTHON" -c '
import json, sys
r = json.load(open(sys.argv[1]))["result"]
assert r["spliced"] == 0 and r["spliced_reused_bytes"] == 0, r' ref.json
check "reference inflates" "${SC[@]}" inflate "$REF"
check "libbig.so edited in a few bytes" "${SC[@]}" unchanged-outside in/pack/*.whl "$REF" bigpkg/lib/libbig.so 65536

for input in pack z1 z6 z9; do
  case_begin "$input: spliced, same content as the reference"
  repair_to "$input" "$input" -j 2 --no-cache
  out=$R
  # The big member re-uses its unchanged chunks or blocks (MBs); the
  # small extension is compressed again (below a chunk).
  check "libbig.so spliced" "${SC[@]}" spliced "$input.json" $((2 << 20))
  check "only libbig.so spliced" "$LIBPKG_PYTHON" -c '
import json, sys
assert json.load(open(sys.argv[1]))["result"]["spliced"] == 1' "$input.json"
  check "zlib inflates every member to its CRC" "${SC[@]}" inflate "$out"
  check "unzip -t" unzip -tqq "$out"
  check "same members and bytes as the reference" "${SC[@]}" same-content "$REF" "$out"
  check "wheel verify" "$PKGTOOL" wheel verify "$out"
  repair_to "$input-j1" "$input" -j 1 --no-cache
  check "-j1 writes the same bytes as -j2" cmp "$out" "$R"
done

case_begin "chunk cache: cold and warm write the same bytes"
repair_to cold z6 -j 2 --cache-dir "$SCRATCH/cache"
check "cold cache = no cache" cmp "$R" "$(ls out-z6/*.whl)"
repair_to warm z6 -j 2 --cache-dir "$SCRATCH/cache"
check "warm cache = no cache" cmp "$R" "$(ls out-z6/*.whl)"
repair_to packwarm pack -j 2 --cache-dir "$SCRATCH/cache"
check "pack input, cache = no cache" cmp "$R" "$(ls out-pack/*.whl)"

case_begin "the spliced wheel imports and runs without the build directory"
mkdir -p site
(cd site && unzip -q "$(ls "$SCRATCH"/out-z6/*.whl)")
mv build build.gone
check "NEEDED is the grafted name" bash -c "readelf -dW site/bigpkg/lib/libbig.so | grep -q 'NEEDED.*libext-'"
check "runs: value and the blob's CRC-32" env PYTHONPATH="$SCRATCH/site" "$LIBPKG_PYTHON" -c '
import sys, zlib, bigpkg
assert bigpkg.value() == 43, bigpkg.value()
want = zlib.crc32(open(sys.argv[1], "rb").read())
assert bigpkg.crc() == want, (hex(bigpkg.crc()), hex(want))' "$SCRATCH/src/blob.bin"
mv build.gone build
finish
