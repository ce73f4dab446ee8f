# SPDX-License-Identifier: BSD-3-Clause
"""libpkg.repair / libpkg.show on an extension wheel that needs a library
from outside the wheel; results checked with zipfile, readelf and an
import of the repaired extension."""

import json
import os
import subprocess
import sys
import zipfile

import pytest

import libpkg
from conftest import readelf_dynamic


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
