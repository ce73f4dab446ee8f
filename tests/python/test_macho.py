# SPDX-License-Identifier: BSD-3-Clause
"""libpkg.macho on dylibs linked at test time (clang-14 + ld64.lld, no SDK),
cross-checked with llvm-objdump-14, llvm-nm-14 and llvm-lipo-14."""

import os
import re
import shutil
import sys
from pathlib import Path

import pytest

import libpkg
from conftest import sh

TARGETS = {"arm64": "arm64-apple-macos11", "x86_64": "x86_64-apple-macos10.15"}
SRC = """
namespace c10 { int counter = 3; template <class T> T twice(T t) { return t + t; }
template int twice<int>(int); }
namespace ext { int imported(int); }
extern "C" int weak_one(void) __attribute__((weak_import));
extern "C" int plain_c(void) { return c10::counter + ext::imported(1) + (weak_one ? weak_one() : 0); }
"""


@pytest.fixture(scope="module")
def dylibs(tmp_path_factory):
    for tool in ("clang-14", "llvm-objdump-14", "llvm-nm-14", "llvm-lipo-14"):
        assert shutil.which(tool), f"{tool} missing (scripts/setup.sh installs it)"
    d = tmp_path_factory.mktemp("macho")
    (d / "a.cpp").write_text(SRC)
    out = {}
    for arch, target in TARGETS.items():
        out[arch] = d / f"liba.{arch}.dylib"
        sh("clang-14", "-target", target, "-fuse-ld=lld", "-nostdlib", "-Wl,-undefined,dynamic_lookup",
           "-x", "c++", "-fno-exceptions", "-fno-rtti", "-Wno-stdlibcxx-not-found", "-dynamiclib",
           "-Wl,-headerpad_max_install_names", "-Wl,-rpath,/build/lib",
           "-install_name", "/opt/x/liba.dylib", "-o", out[arch], d / "a.cpp")
    return d, out


def objdump(path, *flags):
    return sh("llvm-objdump-14", "--macho", "--arch=all", *flags, path)


def test_inspect_reads_slices(dylibs):
    d, libs = dylibs
    fat = d / "fat.dylib"
    libpkg.macho.lipo_create([libs["x86_64"], libs["arm64"]], fat)
    sh("llvm-lipo-14", "-create", libs["x86_64"], libs["arm64"], "-output", d / "fat.llvm")
    assert fat.read_bytes() == (d / "fat.llvm").read_bytes()
    info = libpkg.macho.inspect(fat)
    assert info["fat"] is True
    assert [s["arch"] for s in info["slices"]] == ["x86_64", "arm64"]
    by = {s["arch"]: s for s in info["slices"]}
    assert by["arm64"]["minos"] == "11.0" and by["x86_64"]["minos"] == "10.15"
    assert by["arm64"]["id"] == "/opt/x/liba.dylib"
    assert by["arm64"]["rpaths"] == ["/build/lib"]
    assert by["arm64"]["filetype"] == "dylib"
    # lld signs arm64 ad hoc and leaves x86_64 unsigned.
    sig = by["arm64"]["signature"]
    assert sig["verified"] and sig["adhoc"] and sig["problems"] == []
    assert by["x86_64"]["signature"] is None
    assert "/opt/x/liba.dylib" in objdump(fat, "--dylib-id")
    thin = d / "thin.arm64"
    libpkg.macho.lipo_thin(fat, "arm64", thin)
    assert thin.read_bytes() == libs["arm64"].read_bytes()


def test_edit_then_verify(dylibs):
    d, libs = dylibs
    lib = d / "edit.dylib"
    shutil.copy(libs["arm64"], lib)
    r = libpkg.macho.edit(lib, id="@rpath/liba.dylib", rpath=[("/build/lib", "@loader_path")],
                          add_rpath=["@loader_path/../lib"])
    assert r["changed"] and r["slices"][0]["signing"] == "resigned"
    text = objdump(lib, "--dylib-id", "--rpaths")
    assert "@rpath/liba.dylib" in text
    assert re.findall(r"path (\S+)", sh("llvm-otool-14", "-l", lib)) == ["@loader_path", "@loader_path/../lib"]
    [v] = libpkg.macho.verify(lib)
    assert v["arch"] == "arm64" and v["signature"]["verified"]
    # A no-op edit changes nothing.
    assert libpkg.macho.edit(lib, id="@rpath/liba.dylib")["changed"] is False


def test_sign_unsigned_x86_64(dylibs):
    d, libs = dylibs
    lib = d / "sign.dylib"
    shutil.copy(libs["x86_64"], lib)
    [v] = libpkg.macho.verify(lib)
    assert v["signature"] is None
    r = libpkg.macho.sign(lib)
    assert r["rewritten"] and r["slices"] == [{"name": f"{lib} (x86_64)", "signed": True}]
    [v] = libpkg.macho.verify(lib)
    sig = v["signature"]
    assert sig["verified"] and sig["adhoc"] and sig["identifier"] == "sign.dylib"
    assert "LC_CODE_SIGNATURE" in sh("llvm-otool-14", "-l", lib)
    # An independent verifier recomputes every page hash.
    tool = Path(os.environ["LIBPKG_SOURCE_DIR"]) / "tests/tools/macho_cs_verify.py"
    sh(sys.executable, tool, lib)
    assert libpkg.macho.sign(lib)["rewritten"] is False  # already signed so


def nm_line(x):
    return f"{'':16} U {x['name']}" if x["type"] == "U" else f"{x['value']:016x} {x['type']} {x['name']}"


def test_symbols_match_llvm_nm(dylibs):
    _, libs = dylibs
    for arch, lib in libs.items():
        [s] = libpkg.macho.symbols(lib)
        assert s["arch"] == arch
        assert [nm_line(x) for x in s["symbols"]] == sh("llvm-nm-14", "-g", lib).splitlines()
        [d] = libpkg.macho.symbols(lib, defined_only=True)
        assert [nm_line(x) for x in d["symbols"]] == sh("llvm-nm-14", "-gU", lib).splitlines()
        dem = {x["demangled"] for x in s["symbols"]}
        assert "int c10::twice<int>(int)" in dem and "c10::counter" in dem
        [u] = libpkg.macho.symbols(lib, undefined_only=True)
        assert [x["name"] for x in u["symbols"]] == sh("llvm-nm-14", "-u", lib).splitlines()
        by = {x["name"]: x for x in u["symbols"]}
        # -undefined dynamic_lookup: dyld looks them up in every image.
        imp = by["__ZN3ext8importedEi"]
        assert imp["demangled"] == "ext::imported(int)" and not imp["defined"]
        assert imp["lookup"] == "dynamic" and imp["library"] is None, imp
        assert by["_weak_one"]["weak_import"] is True
        assert "(undefined) weak external _weak_one" in sh("llvm-nm-14", "-m", "-u", lib)


def test_errors_are_libpkg_errors(dylibs, tmp_path):
    d, libs = dylibs
    text = tmp_path / "text"
    text.write_text("not mach-o")
    with pytest.raises(libpkg.FormatError) as e:
        libpkg.macho.inspect(text)
    assert e.value.file == str(text)
    with pytest.raises(libpkg.UsageError):
        libpkg.macho.lipo_create([libs["arm64"], libs["arm64"]], tmp_path / "out")
    assert not (tmp_path / "out").exists()
    with pytest.raises(libpkg.UsageError):
        libpkg.macho.symbols(libs["arm64"], arch="x86_64")
    # An rpath that is not there: refused, file untouched.
    before = libs["arm64"].read_bytes()
    with pytest.raises(libpkg.Error):
        libpkg.macho.edit(libs["arm64"], delete_rpath=["/nope"])
    assert libs["arm64"].read_bytes() == before
