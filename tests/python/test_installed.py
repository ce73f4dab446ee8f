# SPDX-License-Identifier: BSD-3-Clause
"""When run by run_suite.py, the module under test is the installed wheel,
not the build tree, and it needs nothing from the build machine."""

import os
import subprocess
from pathlib import Path

import pytest

import libpkg

SITE = os.environ.get("LIBPKG_EXPECT_INSTALLED_IN")


@pytest.mark.skipif(not SITE, reason="not run against an installed wheel")
def test_module_comes_from_the_installed_wheel():
    pkg = Path(libpkg.__file__).resolve().parent
    assert pkg == (Path(SITE) / "libpkg").resolve()
    ext = Path(libpkg._libpkg.__file__)
    assert ext.parent == pkg
    ldd = subprocess.run(["ldd", ext], capture_output=True, text=True, check=True).stdout
    assert "not found" not in ldd
    binary_dir = os.environ.get("LIBPKG_BINARY_DIR")
    if binary_dir:
        assert binary_dir not in ldd
    # The libraries grafted by `pkgtool repair` sit next to the package.
    assert list(Path(SITE).glob("libpkg.libs/*.so*"))


def test_version():
    assert libpkg.__version__.count(".") == 2
