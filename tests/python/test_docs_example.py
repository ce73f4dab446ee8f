# SPDX-License-Identifier: BSD-3-Clause
"""Runs the release-script example of docs/python.md on a directory of
wheels and checks its outputs with zipfile."""

import os
import re
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

import libpkg
from conftest import CC, interpreter_tag, sh, write_tree

DOCS = Path(os.environ.get("LIBPKG_SOURCE_DIR", Path(__file__).resolve().parents[2])) / "docs/python.md"

PLAIN_EXT = """\
#include <Python.h>
static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_plain", NULL, -1, NULL};
PyMODINIT_FUNC PyInit__plain(void) { return PyModule_Create(&module); }
"""


@pytest.fixture
def script(tmp_path) -> Path:
    text = DOCS.read_text()
    m = re.search(r"<!-- release-example -->\n```python\n(.*?)```", text, re.S)
    assert m, f"{DOCS}: no release example"
    path = tmp_path / "promote.py"
    path.write_text(m.group(1))
    return path


def run(script, *args):
    return subprocess.run([sys.executable, script, *map(str, args)], capture_output=True, text=True)


def test_release_example_promotes_wheels(script, tmp_path, pure_wheel):
    src = tmp_path / "src"
    src.mkdir()
    pure_wheel.rename(src / pure_wheel.name)
    # A CUDA-style extension wheel that only needs libc: a linux_* tag that
    # the example must replace by the manylinux tag it meets.
    d = tmp_path / "build"
    d.mkdir()
    (d / "_plain.c").write_text(PLAIN_EXT)
    ext = d / f"_plain{sysconfig.get_config_var('EXT_SUFFIX')}"
    sh(CC, "-shared", "-fPIC", f"-I{sysconfig.get_paths()['include']}", "-o", ext, d / "_plain.c")
    tree = write_tree(tmp_path / "plaintree", "plain", "2.5.0+cu124", interpreter_tag(),
                      {f"plain/{ext.name}": ext.read_bytes(), "plain/__init__.py": b""})
    libpkg.wheel.pack(tree, src)

    out = run(script, src, tmp_path / "pypi")
    assert out.returncode == 0, out.stderr
    made = sorted(p.name for p in (tmp_path / "pypi").glob("*.whl"))
    assert len(made) == 2 and not any("+" in n for n in made)
    assert "purepkg-2.5.0-py3-none-any.whl" in made
    (plain,) = [n for n in made if n.startswith("plain-")]
    assert re.fullmatch(r"plain-2\.5\.0-cp\d+-cp\d+\w*-manylinux_\d+_\d+_\w+\.whl", plain), plain
    with zipfile.ZipFile(tmp_path / "pypi" / plain) as z:
        assert "Version: 2.5.0\n" in z.read("plain-2.5.0.dist-info/METADATA").decode()
        wheel = z.read("plain-2.5.0.dist-info/WHEEL").decode()
        assert "manylinux_" in wheel and "linux_x86_64" not in wheel.replace("manylinux", "")
    for name in made:
        assert libpkg.wheel.verify(tmp_path / "pypi" / name).ok
        assert f"-> {name}" in out.stdout
    # Inputs are left as they were.
    assert len(list(src.glob("*+cu124*.whl"))) == 2


def test_release_example_refuses_unrepaired_and_corrupt(script, tmp_path, ext_wheel, pure_wheel):
    src = tmp_path / "src"
    src.mkdir()
    ext_wheel.rename(src / ext_wheel.name)
    out = run(script, src, tmp_path / "pypi")
    assert out.returncode != 0 and "needs repair first" in out.stderr
    assert "libhelper.so.1" in out.stderr

    src2 = tmp_path / "src2"
    src2.mkdir()
    data = bytearray(pure_wheel.read_bytes())
    with zipfile.ZipFile(pure_wheel) as z:
        info = z.getinfo("purepkg/data/table.txt")
    # Flip a byte of that member's compressed data.
    off = info.header_offset
    name_len = int.from_bytes(data[off + 26:off + 28], "little")
    extra_len = int.from_bytes(data[off + 28:off + 30], "little")
    start = off + 30 + name_len + extra_len
    data[start + 5] ^= 0xFF
    (src2 / pure_wheel.name).write_bytes(bytes(data))
    out = run(script, src2, tmp_path / "pypi2")
    assert out.returncode != 0
    assert "purepkg/data/table.txt" in out.stderr
