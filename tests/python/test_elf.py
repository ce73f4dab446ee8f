# SPDX-License-Identifier: BSD-3-Clause
"""libpkg.elf against readelf / c++filt on compiled fixtures."""

import re
import subprocess

import pytest

import libpkg
from conftest import readelf_dynamic, sh


def readelf_dynsyms(path) -> dict:
    """name → version ('' when none) for every defined or undefined
    .dynsym entry, from `readelf --dyn-syms -W`."""
    out = {}
    for line in sh("readelf", "--dyn-syms", "-W", path).splitlines():
        parts = line.split()
        if len(parts) < 8 or not parts[0].rstrip(":").isdigit() or parts[0] == "0:":
            continue
        full = parts[7]
        name, _, version = full.partition("@")
        out.setdefault(name, set()).add(version.lstrip("@"))
    return out


def test_dynamic_facts_match_readelf(libdemo):
    facts = readelf_dynamic(libdemo)
    e = libpkg.elf.open(libdemo)
    assert e.needed == facts["NEEDED"]
    assert e.soname == facts["SONAME"] == "libdemo.so.1"
    assert e.rpath == facts["RPATH"] == "/opt/demo/lib:$ORIGIN"
    assert e.runpath is None and facts["RUNPATH"] is None
    assert e.interpreter is None
    header = sh("readelf", "-hW", libdemo)
    assert ("X86-64" in header) == (e.machine == "x86_64")
    assert e.is_64 == ("ELF64" in header)
    assert e.path == libdemo


def test_executable_interpreter_and_runpath(demo_exe):
    e = libpkg.elf.open(demo_exe)
    interp = re.search(r"Requesting program interpreter: (\S+)\]", sh("readelf", "-lW", demo_exe))
    assert e.interpreter == interp.group(1)
    assert e.runpath == readelf_dynamic(demo_exe)["RUNPATH"] == "$ORIGIN"
    assert "libdemo.so.1" in e.needed


def test_symbols_are_lazy_and_match_readelf(libdemo):
    e = libpkg.elf.open(libdemo)
    it = e.symbols()
    assert iter(it) is it
    first = next(it)
    assert isinstance(first, libpkg.elf.Symbol)
    rest = list(it)
    with pytest.raises(StopIteration):
        next(it)
    symbols = [first] + rest
    assert len(symbols) == e.symbol_count
    expected = readelf_dynsyms(libdemo)
    got = {}
    for s in symbols:
        # readelf prints a version definition's own symbol (DEMO_1.0 in
        # version DEMO_1.0) without its version.
        got.setdefault(s.name, set()).add("" if s.version == s.name else s.version)
    assert got == expected
    by_name = {(s.name, s.version): s for s in symbols}
    assert by_name[("demo_v", "DEMO_2.0")].defined
    assert not by_name[("demo_v", "DEMO_2.0")].version_hidden
    assert by_name[("demo_v", "DEMO_1.0")].version_hidden
    assert by_name[("demo_cos", "DEMO_1.0")].type == "FUNC"
    assert by_name[("demo_cos", "DEMO_1.0")].binding == "GLOBAL"
    cos = [s for s in symbols if s.name == "cos"]
    assert cos and not cos[0].defined and cos[0].version.startswith("GLIBC_")
    assert cos[0].version_file == "libm.so.6"


def test_demangled_names_match_cxxfilt(libdemo):
    mangled = [s.name for s in libpkg.elf.open(libdemo).symbols() if s.name.startswith("_Z")]
    assert mangled
    expected = subprocess.run(["c++filt"], input="\n".join(mangled), capture_output=True,
                              text=True, check=True).stdout.split("\n")
    demangled = {s.name: s.demangled for s in libpkg.elf.open(libdemo).symbols()}
    for name, want in zip(mangled, expected):
        assert demangled[name] == want
    assert libpkg.elf.demangle("_ZN4demo3addEii") == "demo::add(int, int)"
    assert libpkg.elf.demangle("plain") == "plain"


def test_version_requirements_match_readelf(libdemo):
    e = libpkg.elf.open(libdemo)
    text = sh("readelf", "-VW", libdemo)
    needs_part = text[text.index("Version needs section"):]
    expected = {}
    current = None
    for line in needs_part.splitlines():
        m = re.search(r"File: (\S+)", line)
        if m:
            current = m.group(1)
            expected[current] = set()
        m = re.search(r"Name: (\S+)", line)
        if m and current:
            expected[current].add(m.group(1))
    got = {r.file: set(r.versions) for r in e.version_requirements}
    assert got == expected
    assert e.version_definitions[1:] == ["DEMO_1.0", "DEMO_2.0"]


def test_editor_context_manager_applies_all_edits(libdemo):
    with libpkg.elf.open(libdemo).edit() as ed:
        ed.set_soname("libdemo-renamed.so.1")
        ed.set_rpath("$ORIGIN/../lib", force_rpath=True)
        ed.replace_needed("libm.so.6", "libm-0123abcd.so.6")
        ed.add_needed("libextra.so.2")
        assert ed.pending
    facts = readelf_dynamic(libdemo)
    assert facts["SONAME"] == "libdemo-renamed.so.1"
    assert facts["RPATH"] == "$ORIGIN/../lib" and facts["RUNPATH"] is None
    assert "libm-0123abcd.so.6" in facts["NEEDED"] and "libm.so.6" not in facts["NEEDED"]
    assert "libextra.so.2" in facts["NEEDED"]
    # The edited library still loads through the dynamic linker's view.
    assert libpkg.elf.open(libdemo).needed == facts["NEEDED"]


def test_editor_runpath_and_chaining(libdemo, tmp_path):
    out = tmp_path / "out.so"
    result = (libpkg.elf.edit(libdemo).set_rpath("/a").remove_needed("libm.so.6")
              .save(out))
    assert result.changed and result.path == out
    facts = readelf_dynamic(out)
    assert facts["RUNPATH"] == "/a" and facts["RPATH"] is None
    assert "libm.so.6" not in facts["NEEDED"]
    assert readelf_dynamic(libdemo)["RPATH"] == "/opt/demo/lib:$ORIGIN"  # input untouched


def test_editor_exception_in_with_block_writes_nothing(libdemo):
    before = libdemo.read_bytes()
    with pytest.raises(RuntimeError):
        with libpkg.elf.edit(libdemo) as ed:
            ed.set_soname("changed.so")
            raise RuntimeError("abort")
    assert libdemo.read_bytes() == before


def test_editor_grows_file_and_executable_still_runs(demo_exe):
    long = "/very/long/runpath/entry/" * 20 + ":$ORIGIN"
    with libpkg.elf.edit(demo_exe) as ed:
        ed.set_rpath(long)
    assert readelf_dynamic(demo_exe)["RUNPATH"] == long
    assert subprocess.run([demo_exe]).returncode == 0


def test_editor_add_and_shrink_rpath(demo_exe):
    libpkg.elf.edit(demo_exe).add_rpath("/nonexistent/dir").save()
    assert readelf_dynamic(demo_exe)["RUNPATH"] == "$ORIGIN:/nonexistent/dir"
    libpkg.elf.edit(demo_exe).shrink_rpath().save()
    assert readelf_dynamic(demo_exe)["RUNPATH"] == "$ORIGIN"


def test_set_interpreter(demo_exe, tmp_path):
    interp = libpkg.elf.open(demo_exe).interpreter
    # A longer path to the same loader: the string cannot fit in place.
    alias = tmp_path / ("a-long-directory-name-for-the-loader" * 3) / "ld.so"
    alias.parent.mkdir()
    alias.symlink_to(interp)
    libpkg.elf.edit(demo_exe).set_interpreter(str(alias)).save()
    assert libpkg.elf.open(demo_exe).interpreter == str(alias)
    assert re.search(r"Requesting program interpreter: (\S+)\]",
                     sh("readelf", "-lW", demo_exe)).group(1) == str(alias)
    assert subprocess.run([demo_exe]).returncode == 0


def test_conflicting_rpath_operations(libdemo):
    ed = libpkg.elf.edit(libdemo).set_rpath("/x")
    with pytest.raises(libpkg.Error) as info:
        ed.remove_rpath()
    assert info.value.code == "usage"
    with pytest.raises(libpkg.Error):
        ed.page_size(3000)
