#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Packages libpkg as a wheel with the project's own tools, installs it into
a fresh venv and runs the pytest suite against the installed module.

    run_suite.py            the whole flow (ctest: python_wheel)
    run_suite.py --build-tree   the suite against <build>/python directly

Environment (set by ctest): LIBPKG_BINARY_DIR, LIBPKG_SOURCE_DIR,
LIBPKG_PY_PACKAGE_DIR (the built package: extension + Python files),
PKGTOOL, CHECK_BINARY. Exit 77 (skip) when something it needs is missing.
"""

import importlib.util
import os
import subprocess
import sys
import tempfile
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lib"))
from testlib import missing  # noqa: E402

HERE = Path(__file__).resolve().parent
SOURCE = Path(os.environ.get("LIBPKG_SOURCE_DIR", HERE.parents[1]))




def run(argv, **kw) -> subprocess.CompletedProcess:
    print("+", " ".join(map(str, argv)), flush=True)
    return subprocess.run([str(a) for a in argv], **kw)


def pytest_argv(python, basetemp) -> list:
    # --basetemp in our own temporary directory: pytest's default keeps the
    # last three runs' fixtures in /tmp (~300 MB each here), run after run.
    return [python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rs",
            f"--basetemp={basetemp}", HERE]


def main() -> int:
    package_dir = Path(os.environ.get("LIBPKG_PY_PACKAGE_DIR", ""))
    if not list(package_dir.glob("_libpkg*.so")):
        missing(f"{package_dir}: no built extension (build the _libpkg target)")
    if importlib.util.find_spec("pytest") is None:
        missing("pytest is not installed for " + sys.executable)

    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    if "--build-tree" in sys.argv:
        env["PYTHONPATH"] = str(package_dir.parent)
        with tempfile.TemporaryDirectory(prefix="libpkg-pysuite-") as tmp:
            return run(pytest_argv(sys.executable, Path(tmp) / "pytest"), env=env,
                       cwd=package_dir.parent).returncode

    for var in ("PKGTOOL", "CHECK_BINARY"):
        if not os.access(os.environ.get(var, ""), os.X_OK):
            missing(f"{var} is not an executable (build the pkgtool and check_binary targets)")
    with tempfile.TemporaryDirectory(prefix="libpkg-pysuite-") as tmp:
        tmp = Path(tmp)
        build = run([sys.executable, SOURCE / "python/build_wheel.py",
                     "--package-dir", package_dir, "--version", version(),
                     "--pkgtool", os.environ["PKGTOOL"],
                     "--check-binary", os.environ["CHECK_BINARY"],
                     "--out-dir", tmp / "dist"], capture_output=True, text=True)
        sys.stdout.write(build.stdout)
        sys.stderr.write(build.stderr)
        if build.returncode != 0:
            print("FAIL: build_wheel.py", file=sys.stderr)
            return 1
        (wheel,) = (tmp / "dist").glob("libpkg-*.whl")
        if "-manylinux_" not in wheel.name:
            print(f"FAIL: {wheel.name}: repair did not give a manylinux tag", file=sys.stderr)
            return 1

        # Debian's pytest comes from the system site packages; the module
        # under test only from the venv.
        venv = tmp / "venv"
        if run([sys.executable, "-m", "venv", "--system-site-packages", venv]).returncode != 0:
            missing("python3 -m venv failed (python3-venv missing?)")
        py = venv / "bin/python"
        if run([py, "-m", "pip", "install", "--no-index", "--no-deps", "-q", wheel],
               env=env).returncode != 0:
            print("FAIL: pip install of the wheel", file=sys.stderr)
            return 1
        site = subprocess.run([py, "-c", "import sysconfig; print(sysconfig.get_paths()['platlib'])"],
                              capture_output=True, text=True, check=True).stdout.strip()
        env["LIBPKG_EXPECT_INSTALLED_IN"] = site
        # Run from outside the source and build trees so only the venv's
        # libpkg can be imported.
        work = tmp / "work"
        work.mkdir()
        return run(pytest_argv(py, tmp / "pytest"), env=env, cwd=work).returncode


def version() -> str:
    for line in (SOURCE / "CMakeLists.txt").read_text().splitlines():
        if line.startswith("project(libpkg VERSION "):
            return line.split()[2]
    raise SystemExit("no project version in CMakeLists.txt")


if __name__ == "__main__":
    sys.exit(main())
