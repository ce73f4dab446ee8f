# SPDX-License-Identifier: BSD-3-Clause
"""libpkg.deps.ldd against the real loader (ld.so --list) and readelf."""

import os
import re
import subprocess
from pathlib import Path

import pytest

import libpkg
from conftest import CC, sh


def loader_list(exe: Path) -> dict:
    """soname → path as the system's dynamic loader resolves it (--list)."""
    interp = re.search(r"Requesting program interpreter: (\S+)\]", sh("readelf", "-lW", exe)).group(1)
    env = {k: v for k, v in os.environ.items() if k != "LD_LIBRARY_PATH"}
    out = subprocess.run([interp, "--list", str(exe)], capture_output=True, text=True, env=env).stdout
    found = {}
    for line in out.splitlines():
        m = re.match(r"\s*(\S+) => (\S+) \(0x", line)
        if m:
            found[m.group(1)] = os.path.realpath(m.group(2))
    return found


def test_ldd_matches_the_loader(demo_exe):
    tree = libpkg.deps.ldd(demo_exe, ld_library_path=[])
    assert tree["path"] == str(demo_exe)
    assert tree["libc"] == "glibc"
    assert tree["missing"] == []
    assert tree["libs"]["libdemo.so.1"]["via"] == "runpath"
    assert tree["libs"]["libdemo.so.1"]["needed_by"] == str(demo_exe)
    real = loader_list(demo_exe)
    assert "libdemo.so.1" in real
    for soname, path in real.items():
        assert os.path.realpath(tree["libs"][soname]["realpath"]) == path, soname


def test_ldd_names_what_is_missing(demo_exe, elf_dir, tmp_path):
    moved = tmp_path / "elsewhere"
    moved.mkdir()
    (demo_exe.parent / "libdemo.so.1").rename(moved / "libdemo.so.1")
    tree = libpkg.deps.ldd(demo_exe, ld_library_path=[])
    assert tree["missing"] == ["libdemo.so.1"]
    assert tree["libs"]["libdemo.so.1"]["path"] is None
    # Found again through LD_LIBRARY_PATH, and through lib_paths.
    tree = libpkg.deps.ldd(demo_exe, ld_library_path=[str(moved)])
    assert tree["libs"]["libdemo.so.1"]["via"] == "ld_library_path"
    tree = libpkg.deps.ldd(demo_exe, ld_library_path=[], lib_paths=[str(moved)])
    assert tree["libs"]["libdemo.so.1"]["via"] == "extra_path"
    assert tree["missing"] == []


def test_ldd_libc_follows_the_file_and_the_argument(tmp_path):
    # An Android executable (bionic's loader): the JSON says bionic, not glibc
    # or musl (pkgtool ldd --json printed "glibc" for it).
    (tmp_path / "a.c").write_text("void _start(void) { for (;;) {} }\n")
    exe = tmp_path / "android_tool"
    sh(CC, "-nostdlib", "-fPIE", "-pie", "-o", exe, tmp_path / "a.c",
       "-Wl,--dynamic-linker=/system/bin/linker64")
    assert "/system/bin/linker64" in sh("readelf", "-lW", exe)
    assert libpkg.deps.ldd(exe)["libc"] == "bionic"
    assert libpkg.deps.ldd(exe, libc="musl")["libc"] == "musl"
    with pytest.raises(libpkg.UsageError, match="libc must be"):
        libpkg.deps.ldd(exe, libc="uclibc")


def test_ldd_errors_name_the_file(tmp_path):
    with pytest.raises(libpkg.MissingFileError):
        libpkg.deps.ldd(tmp_path / "absent")
    text = tmp_path / "notes.txt"
    text.write_text("not an ELF file\n")
    with pytest.raises(libpkg.FormatError) as e:
        libpkg.deps.ldd(text)
    assert "notes.txt" in str(e.value)


def test_ldd_default_ld_library_path_is_split_as_glibc_splits_it(demo_exe, tmp_path, monkeypatch):
    """ld_library_path=None reads this process's LD_LIBRARY_PATH the way
    glibc's loader does (elf/dl-load.c: ':' and ';' separate entries, an
    empty entry is the current directory); it used to split on ':' only
    and drop empty entries. The real loader is the oracle."""
    moved = tmp_path / "elsewhere"
    moved.mkdir()
    (demo_exe.parent / "libdemo.so.1").rename(moved / "libdemo.so.1")
    env = {k: v for k, v in os.environ.items() if k != "LD_LIBRARY_PATH"}
    interp = re.search(r"Requesting program interpreter: (\S+)\]", sh("readelf", "-lW", demo_exe)).group(1)

    def loader_finds(value: str, cwd: Path) -> bool:
        out = subprocess.run([interp, "--list", str(demo_exe)], capture_output=True, text=True,
                             env={**env, "LD_LIBRARY_PATH": value}, cwd=cwd).stdout
        # A library found through the empty entry is loaded by its bare name
        # (relative to the current directory): --list then prints no "=>".
        m = re.search(r"libdemo\.so\.1(?: => (\S+))? \(0x", out)
        found = m.group(1) or "libdemo.so.1" if m else None
        return found is not None and os.path.realpath(cwd / found) == os.path.realpath(moved / "libdemo.so.1")

    monkeypatch.chdir(tmp_path)
    for value, cwd in ((f"/nonexistent;{moved}", tmp_path), ("/nonexistent::/x", moved)):
        assert loader_finds(value, cwd), (value, "the loader's own answer")
        monkeypatch.chdir(cwd)
        monkeypatch.setenv("LD_LIBRARY_PATH", value)
        tree = libpkg.deps.ldd(demo_exe)
        assert tree["libs"]["libdemo.so.1"]["via"] == "ld_library_path", (value, tree)
        assert os.path.realpath(tree["libs"]["libdemo.so.1"]["realpath"]) == os.path.realpath(moved / "libdemo.so.1")
