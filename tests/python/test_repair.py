# SPDX-License-Identifier: BSD-3-Clause
"""libpkg.repair / libpkg.show on an extension wheel that needs a library
from outside the wheel; results checked with zipfile, readelf and an
import of the repaired extension."""

import json
import os
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest

import libpkg
from conftest import CC, interpreter_tag, readelf_dynamic, sh, write_tree


def test_show_explains_tag(ext_wheel, ext_build):
    a = libpkg.show(ext_wheel, lib_paths=[str(ext_build["libdir"])], ld_library_path=[])
    assert a is not None and a.wheel == ext_wheel
    assert [b.member for b in a.binaries] == [
        f"demoext/{ext_build['ext'].name}"]
    assert a.binaries[0].extension
    assert "libhelper.so.1" in a.binaries[0].needed
    ext = {e.soname: e for e in a.externals}
    assert ext["libhelper.so.1"].path == ext_build["libdir"] / "libhelper.so.1"
    assert ext["libhelper.so.1"].would_graft and not ext["libhelper.so.1"].system
    # As it is, the wheel needs a library no policy allows: only linux_<arch>.
    assert a.tag == f"linux_{a.arch}"
    assert a.repaired_tag.startswith("manylinux")
    text = a.explain()
    assert text == str(a) and a.repaired_tag in text and "libhelper.so.1" in text
    assert any("libhelper.so.1" in " ".join(why) for _, why in a.blockers)
    assert a.to_dict() == json.loads(a.to_json())


def test_missing_library_is_reported(ext_wheel):
    a = libpkg.show(ext_wheel, ld_library_path=[])
    assert "libhelper.so.1" in a.missing
    with pytest.raises(libpkg.Error) as info:
        libpkg.repair.analyze(ext_wheel, ld_library_path=[])
    assert info.value.code == "not_found"
    assert "libhelper.so.1" in str(info.value)


def test_plan_and_apply(ext_wheel, ext_build, tmp_path):
    plan = libpkg.repair.analyze(ext_wheel, lib_paths=[str(ext_build["libdir"])],
                                 ld_library_path=[])
    assert [g.soname for g in plan.grafts] == ["libhelper.so.1"]
    graft = plan.grafts[0]
    assert graft.source == ext_build["libdir"] / "libhelper.so.1"
    assert graft.member == f"{plan.graft_dir}/{graft.new_soname}"
    assert graft.new_soname.startswith("libhelper-") and graft.reason
    assert plan.policy.startswith("manylinux")
    assert plan.output_name.startswith("demoext-1.0+cu124-cp")
    assert all(t.startswith("manylinux") for t in plan.platform_tags)
    d = plan.to_dict()
    assert d == json.loads(plan.to_json())
    assert {g["soname"] for g in d["grafts"]} == {"libhelper.so.1"}
    assert graft.new_soname in plan.to_text()
    edits = {e.member: e for e in plan.edits}
    ext_member = f"demoext/{ext_build['ext'].name}"
    assert edits[ext_member].replace_needed == {"libhelper.so.1": graft.new_soname}

    result = libpkg.repair.apply(plan, tmp_path / "out")
    assert result.path == tmp_path / "out" / plan.output_name
    assert libpkg.wheel.verify(result.path).ok
    with zipfile.ZipFile(result.path) as z:
        assert graft.member in z.namelist()
        z.extractall(tmp_path / "site")
    site = tmp_path / "site"
    facts = readelf_dynamic(site / ext_member)
    assert graft.new_soname in facts["NEEDED"] and "libhelper.so.1" not in facts["NEEDED"]
    assert "$ORIGIN" in (facts["RPATH"] or facts["RUNPATH"])
    assert readelf_dynamic(site / graft.member)["SONAME"] == graft.new_soname
    # The repaired extension imports with nothing but the wheel's contents.
    env = {k: v for k, v in os.environ.items() if k != "LD_LIBRARY_PATH"}
    out = subprocess.run([sys.executable, "-c", "import demoext; print(demoext.value())"],
                         cwd=site, env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "1234"


def test_analyze_memoizes_graft_digests(ext_wheel, ext_build, tmp_path):
    # A graft is named after its library's SHA-256, memoized in the chunk
    # cache under the file's identity once the file is 2 s old
    # (archive/file_digest.hpp): one 64-byte entry, the same names.
    lib = (ext_build["libdir"] / "libhelper.so.1").resolve()
    age = time.time() - max(lib.stat().st_mtime, lib.stat().st_ctime)
    time.sleep(max(0.0, 2.1 - age))
    args = dict(lib_paths=[str(ext_build["libdir"])], ld_library_path=[])
    plain = libpkg.repair.analyze(ext_wheel, **args)
    cache = tmp_path / "cache"
    for _ in range(2):  # stores, then reads the memo
        plan = libpkg.repair.analyze(ext_wheel, cache_dir=cache, **args)
        assert [g.new_soname for g in plan.grafts] == [g.new_soname for g in plain.grafts]
    entries = [f for f in cache.rglob("*") if f.is_file() and not f.name.startswith(".")]
    assert [f.stat().st_size for f in entries] == [64], entries


def test_repair_options(ext_wheel, ext_build):
    plan = libpkg.repair.analyze(ext_wheel, lib_paths=[str(ext_build["libdir"])],
                                 ld_library_path=[], keep_names=["libhelper*"],
                                 lib_dir="demoext/lib", rpath_tag="runpath")
    assert plan.grafts[0].keep_name and plan.grafts[0].new_soname == "libhelper.so.1"
    assert plan.graft_dir == "demoext/lib"
    with pytest.raises(libpkg.Error):
        libpkg.repair.analyze(ext_wheel, lib_paths=[str(ext_build["libdir"])],
                              ld_library_path=[], rpath_tag="neither")
    with pytest.raises(libpkg.Error) as info:
        libpkg.repair.analyze(ext_wheel, lib_paths=[str(ext_build["libdir"])],
                              ld_library_path=[], plat="nonsense_1_0")
    assert info.value.code == "usage"
    assert libpkg.repair.default_keep_names()


def test_pure_wheel_has_nothing_to_repair(pure_wheel):
    with pytest.raises(libpkg.Error) as info:
        libpkg.repair.analyze(pure_wheel)
    assert info.value.code == "usage"


def _arch_wheel(tmp_path, name: str, member: str, so: Path, tag: str = "linux_x86_64") -> Path:
    tree = write_tree(tmp_path / f"{name}tree", name, "1.0", f"cp312-cp312-{tag}",
                      {member: so.read_bytes()})
    return libpkg.wheel.pack(tree, tmp_path / f"{name}dist").path


def test_libc_root_and_isa_arguments(tmp_path):
    # An extension with neither an interpreter nor a libc NEEDED, under a
    # name without the -linux-gnu/-linux-musl suffix, in a linux_ wheel:
    # only the libc argument decides (pkgtool's --libc).
    (tmp_path / "silent.c").write_text("int PyInit__s(void) { return 0; }\n")
    silent = tmp_path / "silent.so"
    sh(CC, "-shared", "-fPIC", "-nostdlib", "-o", silent, tmp_path / "silent.c")
    assert not readelf_dynamic(silent)["NEEDED"]
    wheel = _arch_wheel(tmp_path, "silentpkg", "sp/_s.so", silent)
    with pytest.raises(libpkg.Error) as info:
        libpkg.show(wheel, ld_library_path=[])
    assert "libc" in str(info.value)
    musl = libpkg.show(wheel, ld_library_path=[], libc="musl")
    assert musl.tag.startswith("musllinux_") and musl.tag.endswith("_x86_64")
    assert libpkg.show(wheel, ld_library_path=[], libc="glibc").tag.startswith("manylinux")
    plan = libpkg.repair.analyze(wheel, ld_library_path=[], libc="musl")
    assert plan.platform_tags and all(t.startswith("musllinux_") for t in plan.platform_tags)
    with pytest.raises(libpkg.Error) as info:
        libpkg.show(wheel, ld_library_path=[], libc="uclibc")
    assert info.value.code == "usage"

    # root: the library is found under the sysroot's default directories
    # only (pkgtool's --root).
    sysroot = tmp_path / "sysroot"
    (sysroot / "usr/lib").mkdir(parents=True)
    (tmp_path / "foo.c").write_text("int foo_value(void) { return 42; }\n")
    sh(CC, "-shared", "-fPIC", "-Wl,-soname,libpyfoo.so.1", "-o", sysroot / "usr/lib/libpyfoo.so.1",
       tmp_path / "foo.c")
    (tmp_path / "ext.c").write_text("int foo_value(void);\nint PyInit__f(void) { return foo_value(); }\n")
    ext = tmp_path / "ext.so"
    sh(CC, "-shared", "-fPIC", "-o", ext, tmp_path / "ext.c", sysroot / "usr/lib/libpyfoo.so.1")
    wheel = _arch_wheel(tmp_path, "rootpkg", "rp/_f.cpython-312-x86_64-linux-gnu.so", ext)
    assert "libpyfoo.so.1" in libpkg.show(wheel, ld_library_path=[]).missing
    found = libpkg.show(wheel, ld_library_path=[], root=sysroot)
    assert {e.soname: e.path for e in found.externals}["libpyfoo.so.1"] == \
        sysroot / "usr/lib/libpyfoo.so.1"
    plan = libpkg.repair.analyze(wheel, ld_library_path=[], root=sysroot)
    assert [g.soname for g in plan.grafts] == ["libpyfoo.so.1"]

    # disable_isa_ext_check: an x86-64-v3 extension (GNU property note).
    v3 = tmp_path / "v3.so"
    sh(CC, "-shared", "-fPIC", "-march=x86-64-v3", "-Wl,-z,x86-64-v3", "-o", v3,
       tmp_path / "silent.c")
    assert "x86-64-v3" in sh("readelf", "-nW", v3)
    wheel = _arch_wheel(tmp_path, "isapkg", "ip/_s.cpython-312-x86_64-linux-gnu.so", v3)
    blocked = libpkg.show(wheel, ld_library_path=[])
    assert blocked.tag == "linux_x86_64" and blocked.repaired_tag == "linux_x86_64"
    assert "x86-64-v3" in blocked.explain()
    with pytest.raises(libpkg.Error) as info:
        libpkg.repair.analyze(wheel, ld_library_path=[])
    assert "x86-64-v3" in str(info.value)
    lifted = libpkg.show(wheel, ld_library_path=[], disable_isa_ext_check=True)
    assert lifted.tag.startswith("manylinux")
    plan = libpkg.repair.analyze(wheel, ld_library_path=[], disable_isa_ext_check=True)
    assert all(t.startswith("manylinux") for t in plan.platform_tags)


def _raw_member(wheel: Path, name: str) -> bytes:
    """The compressed bytes of `name` as stored in the wheel (local header
    parsed by hand, so nothing of libpkg reads them)."""
    with zipfile.ZipFile(wheel) as z:
        info = z.getinfo(name)
    with open(wheel, "rb") as f:
        f.seek(info.header_offset)
        header = f.read(30)
        assert header[:4] == b"PK\x03\x04"
        skip = int.from_bytes(header[26:28], "little") + int.from_bytes(header[28:30], "little")
        f.seek(info.header_offset + 30 + skip)
        return f.read(info.compress_size)


def test_apply_reports_spliced_members(ext_build, tmp_path):
    # A 32 MiB library (a blob of the system's shared libraries, so it
    # deflates like code) in the wheel needs libhelper.so.1 from outside:
    # repair edits its NEEDED entry, a few bytes, and splices the rest of
    # its deflate data from the input (docs/archives.md, "Splice").
    blob = tmp_path / "blob.bin"
    libs = sorted(p for p in Path("/usr/lib/x86_64-linux-gnu").glob("*.so*")
                  if p.is_file() and not p.is_symlink())
    with open(blob, "wb") as f:
        left = 32 << 20
        for lib in libs:
            data = lib.read_bytes()[:left]
            f.write(data)
            left -= len(data)
            if not left:
                break
    assert blob.stat().st_size == 32 << 20
    (tmp_path / "big.c").write_text(
        '__asm__(".section .rodata.blob,\\"a\\"\\n.incbin \\"' + str(blob) + '\\"\\n.text\\n");\n'
        "int helper_value(void);\nint big_value(void) { return helper_value() + 1; }\n")
    big = tmp_path / "libbig.so"
    sh(CC, "-shared", "-fPIC", "-o", big, tmp_path / "big.c",
       f"-L{ext_build['libdir']}", "-l:libhelper.so.1", "-Wl,-soname,libbig.so")
    member = "bigpkg/lib/libbig.so"
    tree = write_tree(tmp_path / "bigtree", "bigpkg", "1.0", interpreter_tag(), {
        "bigpkg/__init__.py": b"",
        member: big.read_bytes(),
    })
    packed = libpkg.wheel.pack(tree, tmp_path / "pack").path
    # The same wheel with every member stored: nothing to splice from.
    stored = tmp_path / "stored" / packed.name
    stored.parent.mkdir()
    with zipfile.ZipFile(packed) as zin, zipfile.ZipFile(stored, "w", zipfile.ZIP_STORED) as zout:
        for info in zin.infolist():
            zout.writestr(info.filename, zin.read(info), zipfile.ZIP_STORED)

    def repair(wheel: Path, out: str):
        plan = libpkg.repair.analyze(wheel, lib_paths=[str(ext_build["libdir"])],
                                     ld_library_path=[], libc="glibc")
        assert [e.member for e in plan.edits if not e.graft] == [member]
        return libpkg.repair.apply(plan, tmp_path / out)

    spliced = repair(packed, "out-pack")
    reference = repair(stored, "out-stored")
    assert reference.spliced == 0 and reference.spliced_reused_bytes == 0
    # Only the big library is spliced; the small grafted helper is compressed.
    assert spliced.spliced == 1 and spliced.compressed >= 2
    assert spliced.members == reference.members
    assert spliced.size == spliced.path.stat().st_size
    assert reference.size == reference.path.stat().st_size
    assert f"spliced={spliced.spliced}" in repr(spliced)
    with zipfile.ZipFile(spliced.path) as a, zipfile.ZipFile(reference.path) as b:
        assert a.testzip() is None
        assert sorted(a.namelist()) == sorted(b.namelist())
        for name in a.namelist():
            assert a.read(name) == b.read(name), name
    # The re-used bytes are the input's compressed data copied verbatim:
    # the input's 64 KiB windows found as they are in the output cover them
    # but for the two partial windows at each end of a re-used span (the
    # wheel writer's restart points: one span per unchanged 8 MiB chunk).
    # The edit touches the first and the last chunk (headers, and what it
    # appends), so the two chunks in between at least are re-used.
    before, after = _raw_member(packed, member), _raw_member(spliced.path, member)
    window = 64 << 10
    found = sum(window for at in range(0, len(before) - window + 1, window)
                if before[at:at + window] in after)
    reused = spliced.spliced_reused_bytes
    assert len(before) // 4 <= reused <= len(before), (reused, len(before))
    assert found >= reused - 2 * window * 4, (found, reused)
