# SPDX-License-Identifier: BSD-3-Clause
"""libpkg.check.run: the report as data, progress lines, and callbacks that
raise."""

import json

import pytest

import libpkg


@pytest.fixture
def repaired(ext_wheel, ext_build, tmp_path):
    plan = libpkg.repair.analyze(ext_wheel, lib_paths=[str(ext_build["libdir"])],
                                 ld_library_path=[])
    return libpkg.repair.apply(plan, tmp_path / "repaired").path


def test_repaired_wheel_passes(repaired):
    lines = []
    report = libpkg.check.run(repaired, runtime=False, progress=lines.append)
    assert report.passed and report, report.to_text(verbose=True)
    assert report.kind == "wheel" and report.artifact == repaired
    ids = [c.id for c in report.checks]
    assert ids == libpkg.check.ids()
    assert report.find("integrity").status == "pass"
    assert report.find("import").status == "skip"
    assert report.find("no-such-check") is None
    assert report.count("fail") == 0
    assert report.to_dict() == json.loads(report.to_json())
    assert lines and any(str(repaired) in line for line in lines)


def test_unrepaired_wheel_fails_dependencies(ext_wheel):
    report = libpkg.check.run(ext_wheel, runtime=False)
    assert not report.passed
    dep = report.find("dependencies")
    assert dep.status == "fail"
    assert any("libhelper.so.1" in p.message for p in dep.problems)
    assert "dependencies" in report.to_text()


def test_import_check_in_a_venv(repaired):
    report = libpkg.check.run(repaired, only=["import"], import_modules=["demoext"])
    assert report.find("import").status == "pass", report.to_text(verbose=True)


def test_progress_callback_exception_propagates(repaired):
    def boom(line):
        raise KeyError("stop: " + line)

    with pytest.raises(KeyError):
        libpkg.check.run(repaired, runtime=False, progress=boom)


def test_bad_check_options(repaired):
    with pytest.raises(libpkg.Error) as info:
        libpkg.check.run(repaired, only=["no-such-check"])
    assert info.value.code == "usage"
    with pytest.raises(ValueError):
        libpkg.check.run(repaired, runtime=False).count("maybe")
