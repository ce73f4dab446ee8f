# SPDX-License-Identifier: BSD-3-Clause
"""Helpers the Python test scripts share (the Python side of harness.sh).

A script imports it after putting this folder on sys.path:

    sys.path.insert(0, str(Path(__file__).resolve().parents[N] / "lib"))
    from testlib import missing, readelf_dynamic, require_tools, skip_no_gpu

A skip is not a pass: the only reason to skip (exit 77) is a property of the
machine that scripts/setup.sh cannot change (no GPU / CUDA toolkit; see
tests/skip-allowlist.txt). A missing tool, interpreter, header or built
target is a failure (exit 1), because setup.sh or the build provides it.
"""

import re
import shutil
import subprocess
import sys


def skip_no_gpu(reason: str) -> None:
    """Exit with ctest's skip code: only for a GPU / CUDA toolkit the
    machine does not have."""
    print(f"SKIP: {reason}", flush=True)
    sys.exit(77)


def missing(what: str) -> None:
    """Fail (exit 1): something the test needs is not there, and
    scripts/setup.sh (or the build) would have provided it."""
    print(f"FAIL: {what} (scripts/setup.sh installs the tools; build the targets)",
          file=sys.stderr, flush=True)
    sys.exit(1)


def require_tools(*tools: str) -> None:
    """Fails (missing) unless every tool is on PATH."""
    for tool in tools:
        if shutil.which(tool) is None:
            missing(f"{tool} not installed")


def readelf_dynamic(path) -> dict:
    """NEEDED (a list, in order), SONAME, RPATH and RUNPATH (None when
    absent) as `readelf -dW` prints them: the independent oracle of the
    dynamic section."""
    out = subprocess.run(["readelf", "-dW", str(path)], capture_output=True, text=True)
    if out.returncode != 0:
        raise AssertionError(f"readelf -dW {path} failed:\n{out.stderr}")
    facts: dict = {"NEEDED": [], "SONAME": None, "RPATH": None, "RUNPATH": None}
    for line in out.stdout.splitlines():
        m = re.search(r"\((NEEDED|SONAME|RPATH|RUNPATH)\)\s+\S.*?\[(.*)\]\s*$", line)
        if m:
            if m.group(1) == "NEEDED":
                facts["NEEDED"].append(m.group(2))
            else:
                facts[m.group(1)] = m.group(2)
    return facts
