#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The shared test helpers do what the scripts rely on: readelf_dynamic
reads a library compiled here; a missing tool FAILS (exit 1) in both
testlib.require_tools and harness.sh's require_tools instead of skipping
(exit 77) — a skip is not a pass; testlib.Checks and harness.sh's
check/succeeds/abort/finish count and end a run as documented."""

import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import re  # noqa: E402

import testlib  # noqa: E402
from testlib import Checks, data_rows, newest_per_major, one_line_error, readelf_dynamic  # noqa: E402

NO_TOOL = "libpkg-no-such-tool-xyz"
checks = Checks()
expect = checks.check


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


def harness(script: str) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", "-c", f'source "{HERE}/harness.sh"; {script}'],
                          capture_output=True, text=True, env={**os.environ, "PKGTOOL": "/bin/true"})


# finish: 0 when every check passed, 1 after a failed one (the run goes on).
r = harness('check one true; check two false; check three true; echo after; finish')
expect(r.returncode == 1 and "after" in r.stdout and "FAIL: two" in r.stderr
       and "1 check(s) FAILED, 2 passed" in r.stdout, f"harness check/finish: {r}")
# abort: fails and stops at once.
r = harness('check one true; abort "the build broke"; echo reached')
expect(r.returncode == 1 and "reached" not in r.stdout and "the build broke" in r.stderr,
       f"harness abort: {r}")
# succeeds: counts like expect_ok and returns the command's status.
r = harness('make_scratch; if succeeds "t" true; then echo yes; fi; '
            'if succeeds "f" false; then echo no; fi; finish')
expect(r.returncode == 1 and "yes" in r.stdout and "no" not in r.stdout.split()
       and "FAIL: f:" in r.stderr, f"harness succeeds: {r}")

# testlib.Checks: the same contract on the Python side.
py = subprocess.run([sys.executable, "-c",
                     f"import sys; sys.path.insert(0, {str(HERE)!r}); import testlib; "
                     "c = testlib.Checks(); c.check(True, 'a'); c.eq('b', 1, 2); "
                     "print('after'); c.finish()"], capture_output=True, text=True)
expect(py.returncode == 1 and "after" in py.stdout and "b: got 1, expected 2" in py.stderr
       and "1 check(s) FAILED, 1 passed" in py.stdout, f"testlib.Checks: {py}")
py = subprocess.run([sys.executable, "-c",
                     f"import sys; sys.path.insert(0, {str(HERE)!r}); import testlib; "
                     "testlib.Checks().finish()"], capture_output=True, text=True)
expect(py.returncode == 1 and "no check ran" in py.stderr, f"testlib.Checks with no check: {py}")

# one_line_error: exit 2 and one stderr line of the right shape, else says
# what is off.
def refusal(script: str, **kw):
    return one_line_error(["sh", "-c", script], **kw)


problem, line = refusal("echo 'error: f.whl: no such file' >&2; exit 2", starts="error: f.whl",
                        mentions="no such", pattern=re.compile("file$"), stdout_empty=True)
expect(problem is None and line == "error: f.whl: no such file", f"one_line_error: {problem}")
for script, kw, want in [
    ("echo 'error: x' >&2; exit 1", {}, "exit 1, expected 2"),
    ("printf 'error: x\\nusage: y\\n' >&2; exit 2", {}, "2 lines on stderr"),
    ("echo 'x' >&2; exit 2", {}, "does not start with 'error: '"),
    ("echo 'error: x' >&2; exit 2", {"mentions": "--lib-path"}, "does not name '--lib-path'"),
    ("echo 'error: x' >&2; exit 2", {"pattern": re.compile("y")}, "does not match /y/"),
    ("echo out; echo 'error: x' >&2; exit 2", {"stdout_empty": True}, "stdout not empty"),
]:
    problem, _ = refusal(script, **kw)
    expect(problem is not None and want in problem, f"one_line_error({script!r}): {problem!r}")

# data_rows: every row in the normal build, the representatives in the
# sanitized one (LIBPKG_SANITIZED=1); newest_per_major keeps list order.
versions = ["10.2", "11.0", "11.8", "12.1", "12.10", "12.9", "13.0"]
saved = os.environ.pop("LIBPKG_SANITIZED", None)
expect(data_rows(versions, newest_per_major) == versions, "data_rows outside the sanitized build: every row")
os.environ["LIBPKG_SANITIZED"] = "1"
got = data_rows(versions, newest_per_major)
expect(got == ["10.2", "11.8", "12.10", "13.0"], f"data_rows in the sanitized build: {got}")
try:
    data_rows(versions, lambda rows: [])
    expect(False, "data_rows with no representative raises")
except ValueError:
    pass
expect(testlib.sanitized_build(), "sanitized_build() with LIBPKG_SANITIZED=1")
os.environ.pop("LIBPKG_SANITIZED")
if saved is not None:
    os.environ["LIBPKG_SANITIZED"] = saved

checks.finish()
