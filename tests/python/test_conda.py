# SPDX-License-Identifier: BSD-3-Clause
"""libpkg.conda cross-checked with tarfile / zipfile."""

import json
import tarfile
import zipfile

import pytest

import libpkg

META = {
    "name": "demo-pkg",
    "version": "1.2.3",
    "build_number": 4,
    "depends": ["python >=3.11"],
    "license": "BSD-3-Clause",
    "summary": "a fixture",
}


@pytest.fixture
def prefix(tmp_path):
    p = tmp_path / "prefix"
    (p / "lib").mkdir(parents=True)
    (p / "lib" / "data.txt").write_text("payload\n")
    (p / "bin").mkdir()
    (p / "bin" / "tool").write_text("#!/bin/sh\necho hi\n")
    (p / "bin" / "tool").chmod(0o755)
    return p


def test_pack_both_formats_verify_and_extract(prefix, tmp_path):
    outputs = libpkg.conda.pack(prefix, META, tmp_path / "out", formats=["conda", "tar.bz2"],
                                timestamp_ms=1700000000000)
    assert [o.name for o in outputs] == ["demo-pkg-1.2.3-4.conda", "demo-pkg-1.2.3-4.tar.bz2"]
    for o in outputs:
        assert libpkg.conda.verify(o) == []
    with tarfile.open(outputs[1]) as t:
        index = json.load(t.extractfile("info/index.json"))
        assert (index["name"], index["version"], index["build"]) == ("demo-pkg", "1.2.3", "4")
        assert index["depends"] == ["python >=3.11"]
        assert t.extractfile("lib/data.txt").read() == b"payload\n"
        assert t.getmember("bin/tool").mode & 0o111
    with zipfile.ZipFile(outputs[0]) as z:
        assert z.namelist()[0] == "metadata.json"
        assert json.loads(z.read("metadata.json")) == {"conda_pkg_format_version": 2}
    dest = libpkg.conda.extract(outputs[0], tmp_path / "x")
    assert (dest / "lib" / "data.txt").read_text() == "payload\n"
    assert json.loads((dest / "info" / "index.json").read_text())["name"] == "demo-pkg"
    assert libpkg.conda.stem(outputs[0]) == "demo-pkg-1.2.3-4"


def test_pack_reports_progress_and_reraises(prefix, tmp_path):
    import os
    (prefix / "lib" / "blob.bin").write_bytes(os.urandom(9 << 20))  # > 2 steps
    calls = []
    (pkg,) = libpkg.conda.pack(prefix, META, tmp_path / "out", zstd_level=1,
                               progress=lambda done, total: calls.append((done, total)))
    assert libpkg.conda.verify(pkg) == []
    assert len(calls) >= 3
    total = calls[-1][1]
    assert total > 9 << 20 and all(t == total for _, t in calls)
    assert [d for d, _ in calls] == sorted(d for d, _ in calls)
    assert calls[-1][0] == total

    def boom(done, total):
        raise RuntimeError("stop here")

    with pytest.raises(RuntimeError, match="stop here"):
        libpkg.conda.pack(prefix, META, tmp_path / "out2", zstd_level=1, progress=boom)


def test_transmute(prefix, tmp_path):
    (pkg,) = libpkg.conda.pack(prefix, META, tmp_path / "out")
    other = libpkg.conda.transmute(pkg, tmp_path / "t", "tar.bz2")
    assert other.name == "demo-pkg-1.2.3-4.tar.bz2"
    assert libpkg.conda.verify(other) == []


def test_metadata_from_json_file(prefix, tmp_path):
    meta = tmp_path / "meta.json"
    meta.write_text(json.dumps(META))
    (pkg,) = libpkg.conda.pack(prefix, meta, tmp_path / "out")
    assert pkg.name == "demo-pkg-1.2.3-4.conda"


def test_verify_reports_tampering(prefix, tmp_path):
    (pkg,) = libpkg.conda.pack(prefix, META, tmp_path / "out", formats=["tar.bz2"])
    tampered = tmp_path / pkg.name
    with tarfile.open(pkg) as src, tarfile.open(tampered, "w:bz2") as dst:
        for m in src.getmembers():
            data = src.extractfile(m).read() if m.isfile() else None
            if m.name == "lib/data.txt":
                data = b"PAYLOAD\n"
            if data is not None:
                import io
                m.size = len(data)
                dst.addfile(m, io.BytesIO(data))
            else:
                dst.addfile(m)
    findings = libpkg.conda.verify(tampered)
    assert any(f.where == "lib/data.txt" for f in findings), findings


def test_bad_metadata(prefix, tmp_path):
    with pytest.raises(libpkg.Error) as info:
        libpkg.conda.pack(prefix, {**META, "nmae": "typo"}, tmp_path / "out")
    assert "nmae" in str(info.value)
    with pytest.raises(libpkg.Error):
        libpkg.conda.pack(prefix, {**META, "name": "Bad Name"}, tmp_path / "out")
    with pytest.raises(libpkg.Error):
        libpkg.conda.pack(prefix, META, tmp_path / "out", formats=["zip"])
