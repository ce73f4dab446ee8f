# SPDX-License-Identifier: BSD-3-Clause
"""Fixtures for the libpkg Python suite, compiled at test time.

The suite runs against whichever `libpkg` is importable: run_suite.py
installs the repaired wheel into a fresh venv (LIBPKG_EXPECT_INSTALLED_IN
names its site-packages, and test_installed.py checks the module really
comes from there), or PYTHONPATH=<build>/python for a quick run against the
build tree. Facts are cross-checked with independent tools (readelf,
c++filt, zipfile, tarfile, hashlib), never with libpkg itself.
"""

import base64
import hashlib
import os
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lib"))
from testlib import readelf_dynamic  # noqa: E402

CC = os.environ.get("CC", "cc")
CXX = os.environ.get("CXX", "c++")


def sh(*argv, cwd=None, env=None) -> str:
    p = subprocess.run([str(a) for a in argv], capture_output=True, text=True, cwd=cwd, env=env)
    if p.returncode != 0:
        raise AssertionError(f"{' '.join(map(str, argv))} failed ({p.returncode}):\n{p.stderr}{p.stdout}")
    return p.stdout



def record_hash(data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
    return "sha256=" + digest.decode()


def interpreter_tag() -> str:
    py = f"cp{sys.version_info.major}{sys.version_info.minor}"
    plat = sysconfig.get_platform().replace("-", "_").replace(".", "_")
    return f"{py}-{py}{sys.abiflags}-{plat}"


def pytest_configure(config):
    for tool in ("readelf", CC, CXX):
        if shutil.which(tool) is None:
            pytest.exit(f"FAIL: {tool} not installed (scripts/setup.sh installs it)", returncode=1)


# ------------------------------------------------------------------ ELF

LIBDEMO_CPP = """\
#include <cmath>
#include <string>
namespace demo {
std::string greet(const std::string& who) { return "hello " + who; }
int add(int a, int b) { return a + b; }
}
extern "C" double demo_cos(double x) { return std::cos(x) * 2.0; }
extern "C" int demo_old(void) { return 1; }
extern "C" int demo_new(void) { return 2; }
__asm__(".symver demo_old,demo_v@DEMO_1.0");
__asm__(".symver demo_new,demo_v@@DEMO_2.0");
"""

LIBDEMO_MAP = """\
DEMO_1.0 { global: demo_cos; demo_v; extern "C++" { demo::*; }; local: *; };
DEMO_2.0 { global: demo_v; } DEMO_1.0;
"""


@pytest.fixture(scope="session")
def elf_dir(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("elf")
    (d / "demo.cpp").write_text(LIBDEMO_CPP)
    (d / "demo.map").write_text(LIBDEMO_MAP)
    sh(CXX, "-shared", "-fPIC", "-O1", "-o", d / "libdemo.so.1", d / "demo.cpp",
       "-Wl,-soname,libdemo.so.1", f"-Wl,--version-script={d / 'demo.map'}",
       "-Wl,--disable-new-dtags", "-Wl,-rpath,/opt/demo/lib:$ORIGIN", "-lm")
    (d / "main.c").write_text("int demo_v(void);\nint main(void) { return demo_v() == 2 ? 0 : 1; }\n")
    sh(CC, "-o", d / "main", d / "main.c", d / "libdemo.so.1", "-Wl,--enable-new-dtags",
       "-Wl,-rpath,$ORIGIN")
    return d


@pytest.fixture
def libdemo(elf_dir, tmp_path) -> Path:
    """A fresh copy (tests edit it)."""
    dst = tmp_path / "libdemo.so.1"
    shutil.copy2(elf_dir / "libdemo.so.1", dst)
    return dst


@pytest.fixture
def demo_exe(elf_dir, tmp_path) -> Path:
    shutil.copy2(elf_dir / "libdemo.so.1", tmp_path / "libdemo.so.1")
    dst = tmp_path / "main"
    shutil.copy2(elf_dir / "main", dst)
    return dst


# ---------------------------------------------------------------- wheels

def write_tree(root: Path, name: str, version: str, tag: str, files: dict) -> Path:
    """An unpacked wheel: `files` (member → bytes) plus a .dist-info."""
    for member, data in files.items():
        p = root / member
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data)
    info = root / f"{name}-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n\nA fixture.\n")
    purelib = "true" if tag.endswith("-none-any") else "false"
    (info / "WHEEL").write_text(
        f"Wheel-Version: 1.0\nGenerator: conftest\nRoot-Is-Purelib: {purelib}\nTag: {tag}\n")
    return root


@pytest.fixture
def pure_tree(tmp_path) -> Path:
    return write_tree(tmp_path / "tree", "purepkg", "2.5.0+cu124", "py3-none-any", {
        "purepkg/__init__.py": b"VALUE = 42\n",
        "purepkg/data/table.txt": b"a,b\n1,2\n" * 100,
    })


@pytest.fixture
def pure_wheel(pure_tree, tmp_path) -> Path:
    import libpkg
    return libpkg.wheel.pack(pure_tree, tmp_path / "dist").path


EXT_C = """\
#define PY_SSIZE_T_CLEAN
#include <Python.h>
int helper_value(void);
static PyObject* value(PyObject* self, PyObject* args) {
  (void)self; (void)args;
  return PyLong_FromLong(helper_value());
}
static PyMethodDef methods[] = {{"value", value, METH_NOARGS, "helper value"}, {NULL, NULL, 0, NULL}};
static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_demoext", NULL, -1, methods};
PyMODINIT_FUNC PyInit__demoext(void) { return PyModule_Create(&module); }
"""


@pytest.fixture(scope="session")
def ext_build(tmp_path_factory) -> dict:
    """A C extension needing libhelper.so.1, which lives outside the wheel
    (in `libdir`): what `repair` must graft."""
    d = tmp_path_factory.mktemp("ext")
    libdir = d / "lib"
    libdir.mkdir()
    (d / "helper.c").write_text("int helper_value(void) { return 1234; }\n")
    sh(CC, "-shared", "-fPIC", "-o", libdir / "libhelper.so.1", d / "helper.c",
       "-Wl,-soname,libhelper.so.1")
    (d / "_demoext.c").write_text(EXT_C)
    suffix = sysconfig.get_config_var("EXT_SUFFIX")
    ext = d / f"_demoext{suffix}"
    sh(CC, "-shared", "-fPIC", f"-I{sysconfig.get_paths()['include']}", "-o", ext,
       d / "_demoext.c", f"-L{libdir}", "-l:libhelper.so.1")
    return {"dir": d, "libdir": libdir, "ext": ext}


@pytest.fixture
def ext_wheel(ext_build, tmp_path) -> Path:
    import libpkg
    tree = write_tree(tmp_path / "exttree", "demoext", "1.0+cu124", interpreter_tag(), {
        "demoext/__init__.py": b"from ._demoext import value\n",
        f"demoext/{ext_build['ext'].name}": ext_build["ext"].read_bytes(),
    })
    return libpkg.wheel.pack(tree, tmp_path / "extdist").path
