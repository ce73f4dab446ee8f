# SPDX-License-Identifier: BSD-3-Clause
# Shared harness for the tests/wheel integration scripts (sourced, not run).
#
# Environment (set by ctest): PKGTOOL, LIBPKG_PYTHON. TEST_KEEP=1 keeps
# the scratch directory. Fixtures are built at test time: a wheel tree with
# a compiled C extension, a pure module, package data, an executable script
# in <name>.data/scripts and a .dist-info with METADATA and WHEEL.
# log/fail/pass/case_begin/finish/make_scratch/require_tools and the
# expect_* checks come from the shared harness.
source "$(dirname "${BASH_SOURCE[0]}")/../../lib/harness.sh"

WHEELTEST_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PY=("$LIBPKG_PYTHON")
CHECK=("$LIBPKG_PYTHON" "$WHEELTEST_DIR/lib/wheelcheck.py")
unset LD_LIBRARY_PATH LD_PRELOAD PIP_INDEX_URL PIP_FIND_LINKS



# Interpreter facts for tags and the extension suffix.
py_facts() {
  PYTAG=$("${PY[@]}" -c 'import sys; print(f"cp{sys.version_info[0]}{sys.version_info[1]}")')
  PLATTAG=$("${PY[@]}" -c 'import sysconfig; print(sysconfig.get_platform().replace("-", "_").replace(".", "_"))')
  EXT_SUFFIX=$("${PY[@]}" -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))')
  PYINC=$("${PY[@]}" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
  [[ -f $PYINC/Python.h ]] || missing "Python.h not found in $PYINC (python3-dev)"
}

# make_tree DIR NAME VERSION [EXTRA_BYTES]: an unpacked wheel for project
# NAME (import package NAME) with a C extension NAME._ext (add(a, b)).
# EXTRA_BYTES adds a compressible data file of that size (NAME/big.dat).
make_tree() {
  local dir=$1 name=$2 version=$3 extra=${4:-0}
  local di="$dir/$name-$version.dist-info"
  mkdir -p "$dir/$name/data" "$di" "$dir/$name-$version.data/scripts"
  cat >"$dir/$name/_ext.c" <<CEOF
#define PY_SSIZE_T_CLEAN
#include <Python.h>
static PyObject* add(PyObject* self, PyObject* args) {
  long a, b;
  (void)self;
  if (!PyArg_ParseTuple(args, "ll", &a, &b)) return NULL;
  return PyLong_FromLong(a + b);
}
static PyMethodDef methods[] = {{"add", add, METH_VARARGS, "a + b"},
                                {NULL, NULL, 0, NULL}};
static struct PyModuleDef mod = {PyModuleDef_HEAD_INIT, "_ext", NULL, -1,
                                 methods, NULL, NULL, NULL, NULL};
PyMODINIT_FUNC PyInit__ext(void) { return PyModule_Create(&mod); }
CEOF
  gcc -shared -fPIC -O1 -I"$PYINC" -o "$dir/$name/_ext$EXT_SUFFIX" "$dir/$name/_ext.c"
  rm "$dir/$name/_ext.c"
  cat >"$dir/$name/__init__.py" <<PEOF
from ._ext import add
from .pure import greet
PEOF
  printf 'def greet(who):\n    return "hello " + who\n' >"$dir/$name/pure.py"
  printf 'alpha,1\nbeta,2\n' >"$dir/$name/data/table.csv"
  # A name that needs CSV quoting in RECORD.
  printf 'odd\n' >"$dir/$name/data/odd, \"name\".txt"
  printf '#!python\nimport %s\nprint(%s.add(20, 22))\n' "$name" "$name" \
    >"$dir/$name-$version.data/scripts/$name-run"
  chmod 0755 "$dir/$name-$version.data/scripts/$name-run"
  if ((extra > 0)); then
    "${PY[@]}" - "$dir/$name/big.dat" "$extra" <<'PYEOF'
import random, sys
rng = random.Random(7)
words = [bytes(rng.choice(b"abcdefghij") for _ in range(rng.randint(2, 9))) for _ in range(4000)]
out = bytearray()
n = int(sys.argv[2])
while len(out) < n:
    out += rng.choice(words) + b" "
open(sys.argv[1], "wb").write(out[:n])
PYEOF
  fi
  printf 'Metadata-Version: 2.1\nName: %s\nVersion: %s\nSummary: libpkg test fixture\n\nA test fixture.\n' \
    "$name" "$version" >"$di/METADATA"
  printf 'Wheel-Version: 1.0\nGenerator: libpkg-test\nRoot-Is-Purelib: false\nTag: %s-%s-%s\n\n' \
    "$PYTAG" "$PYTAG" "$PLATTAG" >"$di/WHEEL"
  printf 'MIT\n' >"$di/LICENSE"
}

# pack_demo_wheel DIR: the demo 1.0 tree (make_tree) in ./tree, packed by
# pkgtool into a new directory DIR; W is the wheel's file name in DIR.
pack_demo_wheel() {
  make_tree tree demo 1.0
  W="demo-1.0-$PYTAG-$PYTAG-$PLATTAG.whl"
  mkdir "$1"
  "$PKGTOOL" wheel pack tree -d "$1" >/dev/null
}

# pip_install_check WHEEL NAME VENV: installs into a fresh venv (no index,
# no deps; the venv has no pip of its own, so pip >= 22.3's --python drives
# it) and calls the extension and the script.
pip_install_check() {
  local wheel=$1 name=$2 venv=$3 out
  if ! "${PY[@]}" -m venv --without-pip "$venv" >/dev/null 2>&1; then
    fail "venv creation failed"
    return
  fi
  if ! out=$("${PY[@]}" -m pip --python "$venv/bin/python" install --no-index --no-deps \
    --disable-pip-version-check -q "$wheel" 2>&1); then
    fail "pip install $wheel failed: $out"
    return
  fi
  pass
  expect_eq "import + call extension" \
    "5 hello x" "$("$venv/bin/python" -c "import $name; print($name.add(2, 3), $name.greet('x'))" 2>&1)"
  expect_eq "installed script runs" "42" "$("$venv/bin/$name-run" 2>&1)"
}
