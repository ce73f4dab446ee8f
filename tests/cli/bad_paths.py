#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Bad paths are one line naming the path: `error: PATH: reason`, exit 2.

For pkgtool's main subcommands, check_binary and the four drivers:
  - an input that does not exist ("No such file", "not found", ...),
  - a directory where a file is read (or a file where a directory is),
  - an output directory the caller may not create or write (the command
    runs as uid 65534 through setpriv, the tests running as root; the
    inputs stay readable), checked to be left empty.
stderr must be exactly one line that starts with `error: ` followed by the
offending path (the output directory or a file in it, for outputs), and the
exit status 2. No filesystem_error, bad_alloc or other exception text may
reach the user in another form. Fixtures (an ELF extension, wheels, a
libtorch tree and zip, a conda prefix and package) are built here.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.dont_write_bytecode = True
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lib"))
from testlib import missing, one_line_error, require_tools  # noqa: E402

PKGTOOL = Path(os.environ.get("PKGTOOL", ""))
BINARY_DIR = Path(os.environ.get("LIBPKG_BINARY_DIR", ""))
CHECK_BINARY = BINARY_DIR / "checks/check_binary/check_binary"
DRIVERS = {name: BINARY_DIR / f"drivers/{name}/{name}"
           for name in ("manywheel", "libtorch", "conda", "wheel_macos")}
NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]

# "no such file or directory", or the library's "no such install tree".
MISSING = re.compile(r"no such|not found|does not exist", re.I)
IS_DIR = re.compile(r"directory", re.I)
NOT_DIR = re.compile(r"not a directory", re.I)
DENIED = re.compile(r"permission denied", re.I)

failures: list[str] = []
checked = 0


def sh(argv, cwd: Path) -> None:
    p = subprocess.run([str(a) for a in argv], cwd=cwd, capture_output=True, text=True)
    if p.returncode != 0:
        missing(f"fixture step failed: {' '.join(map(str, argv))}: {p.stderr}")


def expect(what: str, argv: list, cwd: Path, path: str, reason: re.Pattern,
           as_nobody: bool = False) -> None:
    """argv exits 2 with one line `error: PATH...: ...` matching `reason`."""
    global checked
    checked += 1
    full = (NOBODY if as_nobody else []) + [str(a) for a in argv]
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("DESIRED_", "PACKAGE_TYPE", "BUILD_ENVIRONMENT", "PYTORCH_"))}
    # The chunk cache under the build tree is root's: uid 65534 would get a
    # warning line about it, which is not what is tested here.
    env["LIBPKG_NO_CACHE"] = "1"
    problem, _ = one_line_error(full, starts=f"error: {path}", pattern=reason, cwd=cwd, env=env)
    if problem:
        failures.append(f"{what}: {problem}")


def fixtures(w: Path) -> dict:
    """Wheels (one with an ELF extension), a libtorch tree and zip, a conda
    prefix and package, all readable by uid 65534."""
    f = {}
    (w / "ext.c").write_text('#include <stdio.h>\nint demo(void) { return puts("x"); }\n')
    sh(["gcc", "-shared", "-fPIC", "-o", w / "ext.so", w / "ext.c"], w)
    tree = w / "tree"
    (tree / "demo").mkdir(parents=True)
    (tree / "demo-1.0.dist-info").mkdir()
    (tree / "demo/__init__.py").write_text("x = 1\n")
    shutil.copy(w / "ext.so", tree / "demo/_ext.so")
    (tree / "demo-1.0.dist-info/METADATA").write_text(
        "Metadata-Version: 2.1\nName: demo\nVersion: 1.0\n")
    (tree / "demo-1.0.dist-info/WHEEL").write_text(
        "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: false\n"
        "Tag: cp311-cp311-linux_x86_64\n")
    sh([PKGTOOL, "wheel", "pack", tree, "-d", w / "whl"], w)
    f["wheel"] = w / "whl/demo-1.0-cp311-cp311-linux_x86_64.whl"
    f["tree"] = tree
    lt = w / "lt"
    (lt / "lib").mkdir(parents=True)
    (lt / "include").mkdir()
    shutil.copy(w / "ext.so", lt / "lib/libdemo.so")
    (lt / "include/demo.h").write_text("int demo(void);\n")
    f["lt"] = lt
    sh([PKGTOOL, "libtorch", "pack", lt, "--version", "1.0", "--build-hash", "abc", "-o",
        w / "ltzip"], w)
    f["ltzip"] = next((w / "ltzip").glob("libtorch-*-1.0.zip"))
    cp = w / "prefix"
    (cp / "lib/python3.11/site-packages/demo").mkdir(parents=True)
    shutil.copy(w / "ext.so", cp / "lib/libdemo.so")
    (cp / "lib/python3.11/site-packages/demo/__init__.py").write_text("x = 1\n")
    f["prefix"] = cp
    sh([PKGTOOL, "conda", "pack", cp, "--name", "demo", "--version", "1.0", "-o",
        w / "conda/demo-1.0-0.conda"], w)
    f["conda"] = w / "conda/demo-1.0-0.conda"
    f["ext"] = w / "ext.so"
    for p in w.rglob("*"):
        p.chmod(0o755 if p.is_dir() or p.suffix == "" else 0o644)
    w.chmod(0o755)
    return f


def main() -> None:
    if not PKGTOOL.is_file() or not CHECK_BINARY.is_file():
        missing("PKGTOOL and LIBPKG_BINARY_DIR (run through ctest)")
    require_tools("gcc", "setpriv")
    if os.geteuid() != 0:
        missing("root, to run commands as uid 65534 (ctest runs as root here)")
    with tempfile.TemporaryDirectory() as tmp:
        w = Path(tmp)
        f = fixtures(w)
        P = PKGTOOL
        D = DRIVERS
        gone = "gone/nothing"          # a path that does not exist
        gone_whl = "gone/demo-1.0-cp311-cp311-linux_x86_64.whl"
        adir = str(f["tree"])           # a directory where a file is read
        afile = str(f["ext"])           # a file where a directory is read
        env = ["--no-env"]

        # -- inputs that do not exist
        for what, argv, path in [
            ("inspect", [P, "inspect", gone], gone),
            ("symbols", [P, "symbols", gone], gone),
            ("ldd", [P, "ldd", gone], gone),
            ("census", [P, "census", gone], gone),
            ("patchelf --print-rpath", [P, "patchelf", "--print-rpath", gone], gone),
            ("patchelf --set-rpath", [P, "patchelf", "--set-rpath", "x", gone], gone),
            ("zip list", [P, "zip", "list", gone], gone),
            ("zip extract", [P, "zip", "extract", gone, "-d", "x1"], gone),
            ("wheel verify", [P, "wheel", "verify", gone_whl], gone_whl),
            ("wheel unpack", [P, "wheel", "unpack", gone_whl, "-d", "x2"], gone_whl),
            ("wheel info", [P, "wheel", "info", gone_whl], gone_whl),
            ("wheel tags", [P, "wheel", "tags", gone_whl, "--python-tag", "cp312"], gone_whl),
            ("wheel update", [P, "wheel", "update", gone_whl, "--remove", "a", "-d", "x3"],
             gone_whl),
            ("wheel pack", [P, "wheel", "pack", gone], gone),
            ("show", [P, "show", gone_whl], gone_whl),
            ("repair", [P, "repair", gone_whl, "-w", "x4"], gone_whl),
            ("check", [P, "check", gone], gone),
            ("diff", [P, "diff", gone_whl, f["wheel"]], gone_whl),
            ("conda verify", [P, "conda", "verify", "gone/demo-1.0-0.conda"], "gone/demo-1.0-0.conda"),
            ("conda extract", [P, "conda", "extract", "gone/demo-1.0-0.conda", "-d", "x5"],
             "gone/demo-1.0-0.conda"),
            ("conda pack", [P, "conda", "pack", gone, "--name", "d", "--version", "1"], gone),
            ("libtorch verify", [P, "libtorch", "verify", "gone/libtorch-shared-with-deps-1.zip"],
             "gone/libtorch-shared-with-deps-1.zip"),
            ("libtorch pack", [P, "libtorch", "pack", gone, "--version", "1", "--build-hash", "h"],
             gone),
            ("macho edit", [P, "macho", "edit", "-id", "x", gone], gone),
            ("check_binary", [CHECK_BINARY, gone], gone),
            ("manywheel --wheel", [D["manywheel"], *env, "--build-env", "manywheel 3.11 cpu",
                                   "--wheel", gone_whl, "--dry-run"], gone_whl),
            ("libtorch --tree", [D["libtorch"], *env, "--build-env", "libtorch cpu", "--tree",
                                 gone, "--build-hash", "h", "--dry-run"], gone),
            ("libtorch --wheel", [D["libtorch"], *env, "--build-env", "libtorch cpu", "--wheel",
                                  gone_whl, "--build-hash", "h", "--dry-run"], gone_whl),
            ("conda --prefix", [D["conda"], *env, "--build-env", "conda 3.11 cpu", "--prefix",
                                gone, "--dry-run"], gone),
            ("wheel_macos --wheel", [D["wheel_macos"], *env, "--build-env", "wheel 3.11 cpu",
                                     "--wheel", "gone/demo-1.0-cp311-cp311-macosx_11_0_arm64.whl",
                                     "--dry-run"], "gone/demo-1.0-cp311-cp311-macosx_11_0_arm64.whl"),
        ]:
            expect(f"missing input: {what}", argv, w, path, MISSING)

        # -- a directory where a file is read, a file where a directory is
        dir_whl = w / "dirs/demo-1.0-cp311-cp311-linux_x86_64.whl"
        dir_whl.mkdir(parents=True)
        dir_conda = w / "dirs/demo-1.0-0.conda"   # named like a package
        dir_conda.mkdir()
        for what, argv, path, reason in [
            ("inspect", [P, "inspect", adir], adir, IS_DIR),
            ("symbols", [P, "symbols", adir], adir, IS_DIR),
            ("patchelf", [P, "patchelf", "--print-needed", adir], adir, IS_DIR),
            ("zip list", [P, "zip", "list", adir], adir, IS_DIR),
            ("wheel verify", [P, "wheel", "verify", dir_whl], dir_whl, IS_DIR),
            ("wheel unpack", [P, "wheel", "unpack", dir_whl, "-d", "y1"], dir_whl, IS_DIR),
            ("repair", [P, "repair", dir_whl, "-w", "y2"], dir_whl, IS_DIR),
            ("show", [P, "show", dir_whl], dir_whl, IS_DIR),
            ("conda verify", [P, "conda", "verify", dir_conda], dir_conda, IS_DIR),
            ("libtorch verify", [P, "libtorch", "verify", adir], adir, IS_DIR),
            ("diff", [P, "diff", dir_whl, f["wheel"]], dir_whl, IS_DIR),
            ("wheel pack FILE", [P, "wheel", "pack", afile], afile, NOT_DIR),
            ("conda pack FILE", [P, "conda", "pack", afile, "--name", "d", "--version", "1"],
             afile, NOT_DIR),
            ("libtorch pack FILE", [P, "libtorch", "pack", afile, "--version", "1",
                                    "--build-hash", "h"], afile, NOT_DIR),
            ("manywheel --wheel DIR", [D["manywheel"], *env, "--build-env", "manywheel 3.11 cpu",
                                       "--wheel", dir_whl, "--dry-run"], dir_whl, IS_DIR),
            ("libtorch --tree FILE", [D["libtorch"], *env, "--build-env", "libtorch cpu",
                                      "--tree", afile, "--build-hash", "h", "--dry-run"], afile,
             NOT_DIR),
            ("conda --prefix FILE", [D["conda"], *env, "--build-env", "conda 3.11 cpu",
                                     "--prefix", afile, "--dry-run"], afile, NOT_DIR),
        ]:
            expect(f"wrong kind of input: {what}", argv, w, str(path), reason)

        # -- outputs where uid 65534 may not write: a new directory under a
        # root-owned one, and that root-owned directory itself.
        ro = w / "ro"
        ro.mkdir(mode=0o755)
        ro.chmod(0o755)
        for out in (str(ro / "out"), str(ro)):
            for what, argv in [
                ("wheel unpack", [P, "wheel", "unpack", f["wheel"], "-d", out]),
                ("wheel pack", [P, "wheel", "pack", f["tree"], "-d", out]),
                ("wheel tags", [P, "wheel", "tags", f["wheel"], "--python-tag", "cp312", "-d",
                                out]),
                ("wheel update", [P, "wheel", "update", f["wheel"], "--remove",
                                  "demo/__init__.py", "-d", out]),
                ("zip extract", [P, "zip", "extract", f["wheel"], "-d", out + "/x"]),
                ("conda pack", [P, "conda", "pack", f["prefix"], "--name", "d", "--version", "1",
                                "-o", out + "/d-1-0.conda"]),
                ("conda extract", [P, "conda", "extract", f["conda"], "-d", out + "/x"]),
                ("conda transmute", [P, "conda", "transmute", f["conda"], "--to", "tar.bz2",
                                     "-o", out]),
                ("libtorch pack", [P, "libtorch", "pack", f["lt"], "--version", "1.0",
                                   "--build-hash", "abc", "-o", out]),
                ("repair", [P, "repair", f["wheel"], "-w", out]),
                ("manywheel -o", [D["manywheel"], *env, "--build-env", "manywheel 3.11 cpu",
                                  "--wheel", f["wheel"], "--no-check", "-o", out]),
                ("libtorch -o", [D["libtorch"], *env, "--build-env", "libtorch cpu", "--tree",
                                 f["lt"], "--build-hash", "abc", "--no-check", "-o", out]),
                ("conda -o", [D["conda"], *env, "--build-env", "conda 3.11 cpu", "--prefix",
                              f["prefix"], "--no-check", "-o", out]),
            ]:
                expect(f"unwritable output {out}: {what}", argv, w, out, DENIED, as_nobody=True)
            # patchelf, like patchelf, creates no directory for --output: a
            # missing one is "No such file", an unwritable one "Permission denied".
            expect(f"unwritable output {out}: patchelf --output",
                   [P, "patchelf", "--set-soname", "x", f["ext"], "--output", out + "/ext.so"],
                   w, out, DENIED if out == str(ro) else MISSING, as_nobody=True)
            leftovers = [p.name for p in ro.iterdir()]
            if leftovers:
                failures.append(f"{ro} is not empty after the refused writes: {leftovers}")

    for f in failures:
        print(f"FAIL: {f}", file=sys.stderr)
    print(f"{checked} checks, {len(failures)} failures")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
