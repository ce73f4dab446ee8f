# SPDX-License-Identifier: BSD-3-Clause
"""libpkg.cuda on a fake /usr/local."""

import json
import os

import pytest

import libpkg


@pytest.fixture
def root(tmp_path):
    r = tmp_path / "local"
    t = r / "cuda-12.4"
    t.mkdir(parents=True)
    (t / "version.json").write_text(json.dumps({"cuda": {"name": "CUDA SDK", "version": "12.4.1"}}))
    (r / "cuda-11.8" / "lib64").mkdir(parents=True)
    (r / "cuda-11.8" / "lib64" / "libcudart.so.11.8.89").write_bytes(b"")
    os.symlink("cuda-11.8", r / "cuda")
    return r


def test_list_current_switch(root):
    kits = libpkg.cuda.list(root)
    assert [k.version for k in kits] == ["11.8.89", "12.4.1"]
    assert [(k.major, k.minor) for k in kits] == [(11, 8), (12, 4)]
    assert kits[0].version_source.startswith("libcudart.so")
    assert [k.dir.name for k in kits] == ["cuda-11.8", "cuda-12.4"]
    assert kits[1].version_source == "version.json"
    assert [k.is_current for k in kits] == [True, False]
    assert libpkg.cuda.current(root).dir.name == "cuda-11.8"
    r = libpkg.cuda.switch("cu124", root=root, switch_magma=False)
    assert os.readlink(root / "cuda") == "cuda-12.4"
    assert str(r.old_target) == "cuda-11.8" and r.magma == "skipped"
    assert libpkg.cuda.current(root).version == "12.4.1"
    assert any(line.startswith("export CUDA_HOME=") for line in kits[1].environment())
    assert libpkg.cuda.probe(root / "cuda-12.4").major == 12
    assert libpkg.cuda.probe(root) is None


def test_errors(root, tmp_path):
    with pytest.raises(libpkg.Error) as info:
        libpkg.cuda.list(tmp_path / "missing")
    assert info.value.code == "not_found"
    with pytest.raises(libpkg.Error) as info:
        libpkg.cuda.switch("12.6", root=root)
    assert info.value.code == "not_found" and "12.4" in str(info.value)
