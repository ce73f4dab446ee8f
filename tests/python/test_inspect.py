# SPDX-License-Identifier: BSD-3-Clause
"""libpkg.inspect returns the dict `pkgtool inspect --json` prints (one
schema, in the library), cross-checked with readelf for the ELF facts."""

import json
import os
import subprocess
from pathlib import Path

import pytest

import libpkg
from conftest import readelf_dynamic, sh

PKGTOOL = os.environ["PKGTOOL"]


def pkgtool_json(*files) -> list:
    return json.loads(sh(PKGTOOL, "inspect", "--json", *files))


def macho_dylib(tmp_path: Path, target: str) -> Path:
    """A Mach-O dylib linked without an SDK (as tests/macho/fixtures.sh)."""
    (tmp_path / "a.c").write_text("int a_value(void) { return 1; }\n")
    out = tmp_path / f"liba.{target.split('-')[0]}.dylib"
    sh("clang-14", "-target", target, "-fuse-ld=lld", "-nostdlib", "-Wl,-undefined,dynamic_lookup",
       "-dynamiclib", "-o", out, tmp_path / "a.c", "-install_name", "@rpath/liba.dylib",
       "-Wl,-rpath,@loader_path/../lib")
    return out


def test_inspect_is_pkgtool_inspect_json_for_elf(libdemo, demo_exe):
    files = [libdemo, demo_exe]
    assert [libpkg.inspect(f) for f in files] == pkgtool_json(*files)
    lib = libpkg.inspect(libdemo)
    facts = readelf_dynamic(libdemo)
    assert lib["file"] == str(libdemo)
    assert lib["soname"] == facts["SONAME"]
    assert lib["needed"] == facts["NEEDED"]
    assert lib["type"] == "DYN"
    assert "DEMO_2.0" in lib["version_defs"]
    assert libpkg.inspect(demo_exe)["needed"] == readelf_dynamic(demo_exe)["NEEDED"]


def test_inspect_is_pkgtool_inspect_json_for_macho(tmp_path):
    arm = macho_dylib(tmp_path, "arm64-apple-macos11")
    x86 = macho_dylib(tmp_path, "x86_64-apple-macos10.15")
    assert [libpkg.inspect(arm), libpkg.inspect(x86)] == pkgtool_json(arm, x86)
    info = libpkg.inspect(arm)
    assert info["format"] == "macho" and info["fat"] is False
    (slice_,) = info["slices"]
    assert slice_["arch"] == "arm64"
    assert slice_["id"] == "@rpath/liba.dylib"
    assert slice_["rpaths"] == ["@loader_path/../lib"]


def test_inspect_errors_name_the_file(tmp_path):
    with pytest.raises(libpkg.MissingFileError):
        libpkg.inspect(tmp_path / "absent")
    text = tmp_path / "notes.txt"
    text.write_text("not an ELF file\n")
    with pytest.raises(libpkg.FormatError) as e:
        libpkg.inspect(text)
    assert "notes.txt" in str(e.value)
    p = subprocess.run([PKGTOOL, "inspect", "--json", text], capture_output=True, text=True)
    assert p.returncode == 2 and str(e.value) in p.stderr
