# SPDX-License-Identifier: BSD-3-Clause
"""libpkg.wheel cross-checked with zipfile and hashlib."""

import csv
import io
import os
import zipfile
from pathlib import Path

import pytest

import libpkg
from conftest import record_hash


def test_pack_matches_zipfile_and_record(pure_tree, tmp_path):
    result = libpkg.wheel.pack(pure_tree, tmp_path / "out", timestamp=1700000000)
    assert isinstance(result.path, Path)
    assert result.path.name == "purepkg-2.5.0+cu124-py3-none-any.whl"
    with zipfile.ZipFile(result.path) as z:
        assert z.testzip() is None
        names = z.namelist()
        assert names[-1] == "purepkg-2.5.0+cu124.dist-info/RECORD"
        assert result.members == len(names)
        rows = list(csv.reader(io.StringIO(z.read(names[-1]).decode())))
        for path, digest, size in rows:
            if path.endswith("RECORD"):
                assert digest == "" and size == ""
                continue
            data = z.read(path)
            assert digest == record_hash(data) and int(size) == len(data)
        assert sorted(r[0] for r in rows) == sorted(names)
        assert z.read("purepkg/__init__.py") == (pure_tree / "purepkg/__init__.py").read_bytes()


def test_pack_reports_progress(pure_tree, tmp_path):
    calls = []
    result = libpkg.wheel.pack(pure_tree, tmp_path / "out",
                               progress=lambda done, total: calls.append((done, total)))
    assert calls and calls[-1][0] == calls[-1][1] >= result.bytes
    assert [d for d, _ in calls] == sorted(d for d, _ in calls)


def test_open_reports_name_tags_members(pure_wheel):
    with libpkg.wheel.open(pure_wheel) as w:
        assert w.name == "purepkg"
        assert w.version == "2.5.0+cu124"
        assert w.local_version == "cu124"
        assert w.build is None
        assert w.tags == ["py3-none-any"] == w.wheel_tags
        assert w.python_tags == ["py3"] and w.abi_tags == ["none"] and w.platform_tags == ["any"]
        assert w.dist_info == "purepkg-2.5.0+cu124.dist-info"
        assert w.root_is_purelib is True
        assert w.generator == "conftest"
        with zipfile.ZipFile(pure_wheel) as z:
            infos = {i.filename: i for i in z.infolist()}
            assert w.names == z.namelist()
            for m in w.members:
                zi = infos[m.name]
                assert (m.size, m.compressed_size, m.crc32) == (zi.file_size, zi.compress_size, zi.CRC)
                assert w.read(m.name) == z.read(m.name)
        with pytest.raises(KeyError):
            w.read("absent/member.py")
        assert w.verify().ok
    with pytest.raises(ValueError):
        w.members
    assert "purepkg" in repr(w)


def test_verify_finds_tampered_member(pure_wheel, tmp_path):
    tampered = tmp_path / pure_wheel.name
    with zipfile.ZipFile(pure_wheel) as src, zipfile.ZipFile(tampered, "w") as dst:
        for info in src.infolist():
            data = src.read(info)
            if info.filename == "purepkg/__init__.py":
                data = b"VALUE = 43\n"
            dst.writestr(info, data)
    report = libpkg.wheel.verify(tampered)
    assert not report.ok and not report
    kinds = {(f.kind, f.member) for f in report.findings}
    assert ("hash-mismatch", "purepkg/__init__.py") in kinds
    assert all(f.message for f in report.findings)
    with pytest.raises(libpkg.Error):
        libpkg.wheel.unpack(tampered, tmp_path / "x")


def test_retag_and_strip_local_version(pure_wheel, tmp_path):
    w = libpkg.wheel.open(pure_wheel)
    out = w.retag(python="py2.py3", strip_local_version=True, build="7", out_dir=tmp_path / "r")
    assert out.name == "purepkg-2.5.0-7-py2.py3-none-any.whl"
    with zipfile.ZipFile(out) as z:
        names = z.namelist()
        assert "purepkg-2.5.0.dist-info/METADATA" in names
        assert not any("+cu124" in n for n in names)
        metadata = z.read("purepkg-2.5.0.dist-info/METADATA").decode()
        assert "Version: 2.5.0\n" in metadata
        wheel = z.read("purepkg-2.5.0.dist-info/WHEEL").decode()
        assert "Tag: py2-none-any" in wheel and "Tag: py3-none-any" in wheel
        assert "Build: 7" in wheel
    assert libpkg.wheel.verify(out).ok
    stripped = w.strip_local_version(out_dir=tmp_path / "s")
    assert stripped.name == "purepkg-2.5.0-py3-none-any.whl"
    assert pure_wheel.exists()  # inputs are never modified
    with pytest.raises(libpkg.Error) as info:
        libpkg.wheel.retag(pure_wheel)  # would overwrite the input
    assert info.value.code == "usage"


def test_unpack_round_trip(pure_wheel, pure_tree, tmp_path):
    dest = libpkg.wheel.unpack(pure_wheel, tmp_path / "u")
    assert dest == tmp_path / "u" / "purepkg-2.5.0+cu124"
    for f in ("purepkg/__init__.py", "purepkg/data/table.txt"):
        assert (dest / f).read_bytes() == (pure_tree / f).read_bytes()
    assert (dest / "purepkg-2.5.0+cu124.dist-info" / "RECORD").exists()


def test_name_helpers():
    n = libpkg.wheel.parse_name("torch-2.5.0+cu124-cp311-cp311-linux_x86_64.whl")
    assert (n.distribution, n.version, n.local_version) == ("torch", "2.5.0+cu124", "cu124")
    assert n.without_local_version().filename == "torch-2.5.0-cp311-cp311-linux_x86_64.whl"
    assert n.tags == ["cp311-cp311-linux_x86_64"]
    assert str(n) == n.filename
    assert libpkg.wheel.canonicalize_name("Foo.Bar__baz") == "foo-bar-baz"
    assert libpkg.wheel.escape_distribution("Foo.Bar-baz") == "foo_bar_baz"
    assert libpkg.wheel.is_valid_version("1.0+cu124")
    assert not libpkg.wheel.is_valid_version("not a version")


def test_pack_through_the_chunk_cache(pure_tree, tmp_path):
    # A member of two 8 MiB chunks goes through the cache; the wheel is the
    # same bytes without the cache, cold and warm.
    words = [b"w%dx%d" % (i, i * 7919 % 1000) for i in range(3000)]
    (pure_tree / "purepkg" / "big.txt").write_bytes(
        b" ".join(words[(i * 2654435761) % 3000] for i in range(1_700_000)))
    ref = libpkg.wheel.pack(pure_tree, tmp_path / "ref", timestamp=1700000000)
    cache = tmp_path / "cache"
    cold = libpkg.wheel.pack(pure_tree, tmp_path / "cold", timestamp=1700000000, cache_dir=cache)
    # The entries: the files of the cache but its tag key (.hit-key-<uid>)
    # and the link to the cold wheel (packs/) the entries point into.
    def cache_entries():
        return sorted(p for p in cache.rglob("*") if p.is_file() and not p.name.startswith(".hit-key-")
                      and p.parent.name != "packs")
    entries = cache_entries()
    assert len(entries) >= 2
    assert [p.stat().st_ino for p in (cache / "packs").iterdir()] == [cold.path.stat().st_ino]
    for p in entries:  # aged: a hit sets the entry's mtime to now
        os.utime(p, ns=(10**9, 10**9))
    warm = libpkg.wheel.pack(pure_tree, tmp_path / "warm", timestamp=1700000000, cache_dir=cache)
    assert cold.path.read_bytes() == ref.path.read_bytes()
    assert warm.path.read_bytes() == ref.path.read_bytes()
    # The warm run used the entries (a hit refreshes an entry's mtime).
    assert cache_entries() == entries
    assert all(p.stat().st_mtime_ns > 10**9 for p in entries)
