# SPDX-License-Identifier: BSD-3-Clause
"""libpkg.config: build configurations, versions and names."""

import datetime

import pytest

import libpkg


def test_parse_build_environment():
    c = libpkg.config.parse("manywheel 3.11 cu124")
    assert c.package_type == "manywheel"
    assert str(c.python) == "3.11" and c.python.python_tag == "cp311" and c.python.abi_tag == "cp311"
    assert c.accelerator.kind == "cuda" and c.accelerator.tag == "cu124"
    assert c.accelerator.version == "12.4" and (c.accelerator.major, c.accelerator.minor) == (12, 4)
    assert c.cxx_abi == "pre-cxx11"
    assert c.build_environment.startswith("manywheel 3.11 cu124")
    assert libpkg.config.parse(c.build_environment) == c
    assert c.variant is None


def test_names_and_overrides():
    c = libpkg.config.parse("manywheel 3.11 cu124").with_overrides(base_version="2.5.0",
                                                                   build_number=1)
    assert c.version == "2.5.0"  # the local suffix is the driver's (package_version)
    assert c.wheel_name() == "torch-2.5.0-cp311-cp311-linux_x86_64.whl"
    roles = dict(c.artifact_names())
    assert roles["wheel"] == c.wheel_name()
    assert c.package_dir_suffix() == "124"
    c2 = c.with_overrides(build_number=3)
    assert c2.version == "2.5.0.post3" and c2.build_number == 3
    lt = libpkg.config.parse("libtorch cpu")
    assert lt.variant == "shared-with-deps" and lt.python is None
    conda = libpkg.config.parse("conda 3.11 cpu").with_overrides(base_version="2.5.0")
    assert conda.conda_build_string() == "py3.11_cpu_1"  # PYTORCH_BUILD_NUMBER defaults to 1
    assert conda.conda_file_name() == "pytorch-2.5.0-py3.11_cpu_1.tar.bz2"
    assert conda.conda_file_name(".conda") == "pytorch-2.5.0-py3.11_cpu_1.conda"


def test_from_environment_mapping():
    c = libpkg.config.from_environment({
        "PACKAGE_TYPE": "manywheel", "DESIRED_PYTHON": "3.12", "DESIRED_CUDA": "cu118",
        "PYTORCH_BUILD_VERSION": "2.4.1", "PYTORCH_BUILD_NUMBER": "1"})
    assert (c.package_type, str(c.python), c.accelerator.tag, c.version) == (
        "manywheel", "3.12", "cu118", "2.4.1")
    with pytest.raises(libpkg.Error) as info:
        libpkg.config.from_environment({"PACKAGE_TYPE": "manywheel", "DESIRED_PYTHON": "three",
                                        "DESIRED_CUDA": "cpu"})
    assert "DESIRED_PYTHON" in str(info.value)
    with pytest.raises(TypeError):
        libpkg.config.from_environment({"PACKAGE_TYPE": 1})


def test_version_helpers():
    assert libpkg.config.nightly_version("2.5.0", datetime.date(2024, 9, 12)) == "2.5.0.dev20240912"
    # 2019-09-12 23:30 UTC, whatever the local time zone says.
    assert libpkg.config.nightly_version("1.3.0", 1568331000) == "1.3.0.dev20190912"
    today = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%d")
    assert libpkg.config.nightly_version("2.5.0") in (f"2.5.0.dev{today}",)
    assert libpkg.config.release_version("v2.4.1-rc1") == "2.4.1"
    assert libpkg.config.upload_channel("2.5.0.dev20240912") == "nightly"
    assert libpkg.config.upload_channel("2.5.0") == "test"
    assert libpkg.config.with_build_number("2.5.0+cu124", 2) == "2.5.0.post2+cu124"
    assert libpkg.config.local_suffix("manywheel", "12.4") == "+cu124"
    assert libpkg.config.local_suffix("conda", "cu124") == ""
    assert libpkg.config.package_version("2.5.0", "manywheel", "cpu") == "2.5.0+cpu"
    # Darwin gets no suffix whatever the package type (the libtorch zip too).
    assert libpkg.config.local_suffix("libtorch", "cpu") == "+cpu"
    assert libpkg.config.local_suffix("libtorch", "cpu", os="macos") == ""
    assert libpkg.config.package_version("2.5.0", "libtorch", "cpu", os="macos") == "2.5.0"
    assert libpkg.config.local_suffix("wheel", "cpu") == ""
    assert libpkg.config.parse_accelerator("rocm6.1").tag == "rocm6.1"
    assert libpkg.config.parse_python("cp313-cp313t").free_threaded
    with pytest.raises(libpkg.Error):
        libpkg.config.release_version("latest")
