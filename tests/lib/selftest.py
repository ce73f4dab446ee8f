#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The shared test helpers do what the scripts rely on: readelf_dynamic
reads a library compiled here, and a missing tool FAILS (exit 1) in both
testlib.require_tools and harness.sh's require_tools instead of skipping
(exit 77) — a skip is not a pass."""

import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from testlib import readelf_dynamic  # noqa: E402

NO_TOOL = "libpkg-no-such-tool-xyz"
failures = []


def expect(ok: bool, what: str) -> None:
    if not ok:
        failures.append(what)
        print(f"FAIL: {what}", file=sys.stderr)


with tempfile.TemporaryDirectory() as tmp:
    src = Path(tmp) / "a.c"
    src.write_text("#include <stdio.h>\nint a(void) { return puts(\"a\"); }\n")
    lib = Path(tmp) / "liba.so.1"
    subprocess.run([os.environ.get("CC", "cc"), "-shared", "-fPIC", "-o", lib, src,
                    "-Wl,-soname,liba.so.1", "-Wl,--enable-new-dtags,-rpath,$ORIGIN:/opt/x",
                    "-Wl,--no-as-needed", "-lm"], check=True)
    d = readelf_dynamic(lib)
    expect(d["SONAME"] == "liba.so.1", f"SONAME: {d['SONAME']}")
    expect(d["RUNPATH"] == "$ORIGIN:/opt/x" and d["RPATH"] is None, f"RUNPATH/RPATH: {d}")
    expect(d["NEEDED"] == ["libm.so.6", "libc.so.6"], f"NEEDED: {d['NEEDED']}")

py = subprocess.run([sys.executable, "-c",
                     f"import sys; sys.path.insert(0, {str(HERE)!r}); "
                     f"import testlib; testlib.require_tools('sh', {NO_TOOL!r})"],
                    capture_output=True, text=True)
expect(py.returncode == 1 and NO_TOOL in py.stderr,
       f"testlib.require_tools: exit {py.returncode}, stderr {py.stderr!r}")

sh = subprocess.run(["bash", "-c", f'source "{HERE}/harness.sh"; require_tools sh {NO_TOOL}; echo reached'],
                    capture_output=True, text=True, env={**os.environ, "PKGTOOL": "/bin/true"})
expect(sh.returncode == 1 and NO_TOOL in sh.stderr and "reached" not in sh.stdout,
       f"harness.sh require_tools: exit {sh.returncode}, stderr {sh.stderr!r}")

ok = subprocess.run(["bash", "-c", f'source "{HERE}/harness.sh"; require_tools sh bash; echo reached'],
                    capture_output=True, text=True, env={**os.environ, "PKGTOOL": "/bin/true"})
expect(ok.returncode == 0 and "reached" in ok.stdout, f"harness.sh require_tools with tools present: {ok}")

print("FAILED" if failures else "PASS: test helpers")
sys.exit(1 if failures else 0)
