#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Packages the libpkg Python module as a wheel with the project's own tools.

    build_wheel.py --package-dir BUILD/python/libpkg --version 0.1.0 \
        --pkgtool BUILD/tools/pkgtool/pkgtool \
        --check-binary BUILD/checks/check_binary/check_binary --out-dir DIST

1. stages libpkg/ (the Python files and the built extension) and a
   .dist-info (METADATA, WHEEL tagged for this interpreter),
2. `pkgtool wheel pack` makes linux_<arch> wheel,
3. `pkgtool repair --strip` grafts the shared libraries the extension needs
   from the build machine (fmt, libarchive, ...) so the wheel runs without
   them, strips debug info, and retags it manylinux,
4. `check_binary` checks the repaired wheel (RECORD, symbol versions vs the
   tag, dependencies, RPATHs, and an import in a fresh venv).

Prints the repaired wheel's path on the last line. Exit status 2 for bad
arguments, 1 when a step fails (its output is shown).
"""

import argparse
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

# What goes into the wheel from the package directory (never __pycache__
# or editor droppings from the build tree).
PACKAGE_PATTERNS = ("*.py", "*.pyi", "py.typed", "_libpkg*.so")


def interpreter_tags() -> tuple[str, str, str]:
    """(python, abi, platform) of the running interpreter, as pip sees it."""
    py = f"cp{sys.version_info.major}{sys.version_info.minor}"
    abi = py + (sys.abiflags or "")
    platform = sysconfig.get_platform().replace("-", "_").replace(".", "_")
    return py, abi, platform


def run(argv: list, what: str) -> str:
    print("+", " ".join(str(a) for a in argv), flush=True)
    p = subprocess.run([str(a) for a in argv], capture_output=True, text=True)
    sys.stdout.write(p.stdout)
    if p.returncode != 0:
        sys.stderr.write(p.stderr)
        raise SystemExit(f"build_wheel: {what} failed (exit {p.returncode})")
    return p.stdout


def stage(package_dir: Path, version: str, root: Path) -> None:
    dest = root / "libpkg"
    dest.mkdir(parents=True)
    copied = set()
    for pattern in PACKAGE_PATTERNS:
        for f in sorted(package_dir.glob(pattern)):
            shutil.copy2(f, dest / f.name)
            copied.add(f.name)
    if "__init__.py" not in copied or not any(n.startswith("_libpkg") for n in copied):
        raise SystemExit(
            f"build_wheel: {package_dir}: needs __init__.py and the built _libpkg extension "
            "(build the _libpkg target)")
    py, abi, platform = interpreter_tags()
    info = root / f"libpkg-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\n"
        "Name: libpkg\n"
        f"Version: {version}\n"
        "Summary: Packaging toolkit for native code: ELF editing, wheels, conda, repair, checks\n"
        f"Requires-Python: =={sys.version_info.major}.{sys.version_info.minor}.*\n")
    (info / "WHEEL").write_text(
        "Wheel-Version: 1.0\n"
        "Generator: libpkg build_wheel.py\n"
        "Root-Is-Purelib: false\n"
        f"Tag: {py}-{abi}-{platform}\n")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--package-dir", type=Path, required=True)
    ap.add_argument("--version", required=True)
    ap.add_argument("--pkgtool", type=Path, required=True)
    ap.add_argument("--check-binary", type=Path, required=True)
    ap.add_argument("--out-dir", type=Path, required=True)
    ap.add_argument("--no-check", action="store_true", help="skip check_binary")
    ap.add_argument("--no-strip", action="store_true",
                    help="keep debug info (default: `pkgtool repair --strip`)")
    args = ap.parse_args()
    for tool in (args.pkgtool, args.check_binary):
        if not os.access(tool, os.X_OK):
            ap.error(f"{tool}: not an executable (build the pkgtool and check_binary targets)")

    args.out_dir.mkdir(parents=True, exist_ok=True)
    for old in args.out_dir.glob("libpkg-*.whl"):
        old.unlink()
    with tempfile.TemporaryDirectory(prefix="libpkg-wheel-") as tmp:
        tmp = Path(tmp)
        stage(args.package_dir, args.version, tmp / "stage")
        run([args.pkgtool, "wheel", "pack", tmp / "stage", "-d", tmp / "raw"], "pkgtool wheel pack")
        (raw,) = (tmp / "raw").glob("*.whl")
        strip = [] if args.no_strip else ["--strip"]
        run([args.pkgtool, "repair", raw, "-w", args.out_dir, *strip], "pkgtool repair")
        (repaired,) = args.out_dir.glob("libpkg-*.whl")
        if not args.no_check:
            # The import check installs the wheel into a venv of this
            # interpreter (the one the wheel is tagged for).
            run([args.check_binary, repaired, "--python", sys.executable, "--import", "libpkg"],
                "check_binary")
    print(repaired)
    return 0


if __name__ == "__main__":
    sys.exit(main())
