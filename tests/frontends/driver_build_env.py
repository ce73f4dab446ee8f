#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""The drivers with a BUILD_ENVIRONMENT string and the CI environment.

CI exported the string together with PYTORCH_BUILD_VERSION and friends
(binary_populate_env.sh), so with `--build-env` (or BUILD_ENVIRONMENT):
  - PYTORCH_BUILD_VERSION / PYTORCH_BUILD_NUMBER / OVERRIDE_PACKAGE_VERSION /
    TORCH_PACKAGE_NAME from the environment are honoured (the summary's
    config and the artifact names carry them), never a silent 1.0.0;
  - a flag wins over the variable (--build-version);
  - --no-env reads no variable (1.0.0 again, on purpose);
  - a variable that restates the job and contradicts the string
    (DESIRED_CUDA, PACKAGE_TYPE, DESIRED_PYTHON) is refused: exit 2, one line
    naming the variable, its value and the string.
Run on the libtorch, conda and manywheel drivers with --dry-run (inputs
built here: a libtorch tree, a conda prefix, a wheel with an ELF
extension) and on wheel_macos for the refusal.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.dont_write_bytecode = True
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lib"))
from testlib import missing, require_tools  # noqa: E402

PKGTOOL = Path(os.environ.get("PKGTOOL", ""))
BINARY_DIR = Path(os.environ.get("LIBPKG_BINARY_DIR", ""))
JOB_VARS = ("BUILD_ENVIRONMENT", "PACKAGE_TYPE", "DESIRED_", "MATRIX_", "GPU_ARCH_", "PYTORCH_",
            "OVERRIDE_PACKAGE_VERSION", "TORCH_PACKAGE_NAME", "CUDNN_VERSION", "LIBTORCH_",
            "BUILD_PYTHONLESS", "SOURCE_DATE_EPOCH")

failures: list[str] = []
checked = 0


def driver(name: str) -> Path:
    return BINARY_DIR / f"drivers/{name}/{name}"


def run(argv: list, env: dict, cwd: Path) -> subprocess.CompletedProcess:
    e = {k: v for k, v in os.environ.items() if not k.startswith(JOB_VARS)}
    e.update(env)
    return subprocess.run([str(a) for a in argv], cwd=cwd, env=e, capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, timeout=300)


def expect(cond: bool, what: str) -> None:
    global checked
    checked += 1
    if not cond:
        failures.append(what)


def summary(what: str, argv: list, env: dict, cwd: Path) -> dict:
    r = run([*argv, "--dry-run", "--json", "--no-check"], env, cwd)
    expect(r.returncode == 0, f"{what}: exit {r.returncode}: {r.stderr[:500]}")
    try:
        return json.loads(r.stdout)
    except json.JSONDecodeError:
        failures.append(f"{what}: no JSON summary: {r.stdout[:300]!r}")
        return {}


def refused(what: str, argv: list, env: dict, cwd: Path, needles: list[str]) -> None:
    r = run([*argv, "--dry-run", "--no-check"], env, cwd)
    lines = r.stderr.splitlines()
    expect(r.returncode == 2 and len(lines) == 1 and lines[0].startswith("error: ")
           and all(n in lines[0] for n in needles),
           f"{what}: expected exit 2 and one line naming {needles}; got {r.returncode} "
           f"{r.stderr[:500]!r}")


def fixtures(w: Path) -> dict:
    def sh(argv):
        p = subprocess.run([str(a) for a in argv], capture_output=True, text=True, cwd=w)
        if p.returncode:
            missing(f"fixture: {' '.join(map(str, argv))}: {p.stderr}")
    (w / "ext.c").write_text('#include <stdio.h>\nint demo(void) { return puts("x"); }\n')
    sh(["gcc", "-shared", "-fPIC", "-o", w / "ext.so", w / "ext.c"])
    lt = w / "lt"
    (lt / "lib").mkdir(parents=True)
    (lt / "include").mkdir()
    shutil.copy(w / "ext.so", lt / "lib/libdemo.so")
    (lt / "include/demo.h").write_text("int demo(void);\n")
    prefix = w / "prefix"
    (prefix / "lib/python3.11/site-packages/demo").mkdir(parents=True)
    shutil.copy(w / "ext.so", prefix / "lib/libdemo.so")
    (prefix / "lib/python3.11/site-packages/demo/__init__.py").write_text("x = 1\n")
    tree = w / "tree"
    (tree / "torch").mkdir(parents=True)
    (tree / "torch-1.0.dist-info").mkdir()
    (tree / "torch/__init__.py").write_text("x = 1\n")
    shutil.copy(w / "ext.so", tree / "torch/_C.so")
    (tree / "torch-1.0.dist-info/METADATA").write_text(
        "Metadata-Version: 2.1\nName: torch\nVersion: 1.0\n")
    (tree / "torch-1.0.dist-info/WHEEL").write_text(
        "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: false\n"
        "Tag: cp311-cp311-linux_x86_64\n")
    sh([PKGTOOL, "wheel", "pack", tree, "-d", w / "whl"])
    return {"lt": lt, "prefix": prefix, "wheel": w / "whl/torch-1.0-cp311-cp311-linux_x86_64.whl"}


def main() -> None:
    if not PKGTOOL.is_file() or not BINARY_DIR.is_dir():
        missing("PKGTOOL and LIBPKG_BINARY_DIR (run through ctest)")
    require_tools("gcc")
    with tempfile.TemporaryDirectory() as tmp:
        w = Path(tmp)
        f = fixtures(w)
        jobs = [
            ("libtorch", "libtorch cpu", "2.6.0.dev20250101+cpu",
             [driver("libtorch"), "--tree", f["lt"], "--build-hash", "abc", "-o", w / "o1"]),
            ("conda", "conda 3.11 cpu", "2.6.0.dev20250101",
             [driver("conda"), "--prefix", f["prefix"], "-o", w / "o2"]),
            ("manywheel", "manywheel 3.11 cpu", "2.6.0.dev20250101+cpu",
             [driver("manywheel"), "--wheel", f["wheel"], "-o", w / "o3"]),
        ]
        for name, string, version, argv in jobs:
            ci = {"PYTORCH_BUILD_VERSION": version, "PYTORCH_BUILD_NUMBER": "1"}
            for how, args, env in [("--build-env", ["--build-env", string], ci),
                                   ("BUILD_ENVIRONMENT", [], {**ci, "BUILD_ENVIRONMENT": string})]:
                s = summary(f"{name} {how} + PYTORCH_BUILD_VERSION", [*argv, *args], env, w)
                got = s.get("config", {}).get("version")
                expect(got == version, f"{name} {how}: version {got!r}, expected {version!r} "
                                       f"from PYTORCH_BUILD_VERSION")
                names = " ".join(a.get("path", "") for a in s.get("artifacts", []))
                expect(version.split("+")[0] in names or name == "manywheel" or not names,
                       f"{name} {how}: artifact names {names!r} lack {version!r}")
            # The job's own restatement, consistent: accepted.
            consistent = {**ci, "DESIRED_CUDA": "cpu", "PACKAGE_TYPE": name}
            s = summary(f"{name} consistent DESIRED_CUDA", [*argv, "--build-env", string],
                        consistent, w)
            expect(s.get("config", {}).get("version") == version,
                   f"{name}: consistent variables: {s.get('config')}")
            # OVERRIDE_PACKAGE_VERSION and TORCH_PACKAGE_NAME too.
            s = summary(f"{name} OVERRIDE_PACKAGE_VERSION", [*argv, "--build-env", string],
                        {"OVERRIDE_PACKAGE_VERSION": "2.5.1", "TORCH_PACKAGE_NAME": "torch"}, w)
            expect(s.get("config", {}).get("version") == "2.5.1",
                   f"{name}: OVERRIDE_PACKAGE_VERSION: {s.get('config')}")
            # A flag wins over the variable.
            s = summary(f"{name} --build-version", [*argv, "--build-env", string,
                                                    "--build-version", "2.7.0"], ci, w)
            expect(s.get("config", {}).get("version") == "2.7.0",
                   f"{name}: --build-version over PYTORCH_BUILD_VERSION: {s.get('config')}")
            # --no-env: no variable at all.
            s = summary(f"{name} --no-env", [*argv, "--build-env", string, "--no-env"], ci, w)
            expect(s.get("config", {}).get("version") == "1.0.0",
                   f"{name}: --no-env ignores PYTORCH_BUILD_VERSION: {s.get('config')}")
            # Contradictions are refused, naming both sides.
            refused(f"{name} DESIRED_CUDA contradicts", [*argv, "--build-env", string],
                    {**ci, "DESIRED_CUDA": "cu126"}, w,
                    ["DESIRED_CUDA 'cu126'", f"--build-env '{string}'", "accelerator cpu"])
            refused(f"{name} BUILD_ENVIRONMENT + PACKAGE_TYPE contradicts", argv,
                    {**ci, "BUILD_ENVIRONMENT": string,
                     "PACKAGE_TYPE": "conda" if name != "conda" else "manywheel"}, w,
                    ["PACKAGE_TYPE", f"BUILD_ENVIRONMENT '{string}'", f"package type {name}"])
        refused("wheel_macos DESIRED_PYTHON contradicts",
                [driver("wheel_macos"), "--build-env", "wheel 3.11 cpu arm64", "--wheel",
                 w / "torch-1.0-cp311-none-macosx_11_0_arm64.whl"],
                {"DESIRED_PYTHON": "3.12"}, w,
                ["DESIRED_PYTHON '3.12'", "--build-env 'wheel 3.11 cpu arm64'", "python 3.11"])
    for msg in failures:
        print(f"FAIL: {msg}", file=sys.stderr)
    print(f"{checked} checks, {len(failures)} failures")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
