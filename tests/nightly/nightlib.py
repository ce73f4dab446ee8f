# SPDX-License-Identifier: BSD-3-Clause
"""Helpers shared by the nightly tests: run pkgtool, write job files."""
import json
import os
import subprocess
import sys
import tempfile

PKGTOOL = os.environ["PKGTOOL"]
FAILURES = []


def pkgtool(*args, check=None, **kw):
    """Runs `pkgtool ARGS`; check= the expected exit status."""
    p = subprocess.run([PKGTOOL, *args], capture_output=True, text=True, **kw)
    if check is not None and p.returncode != check:
        raise AssertionError(f"pkgtool {' '.join(args)}: exit {p.returncode}, "
                             f"expected {check}\nstdout:\n{p.stdout}\nstderr:\n{p.stderr}")
    return p


def write_jobs(path, jobs, **extra):
    with open(path, "w") as f:
        json.dump({"jobs": jobs, **extra}, f)
    return path


def sh_job(name, script, **fields):
    return {"name": name, "argv": ["sh", "-c", script], **fields}


def load(path):
    with open(path) as f:
        return json.load(f)


def scratch():
    return tempfile.mkdtemp(prefix="nightly-test-")


def case(fn):
    """Runs one test case, recording a failure instead of stopping."""
    try:
        fn()
        print(f"ok   {fn.__name__}")
    except Exception as e:  # noqa: BLE001 - report every failing case
        import traceback
        traceback.print_exc()
        print(f"FAIL {fn.__name__}: {e}")
        FAILURES.append(fn.__name__)
    return fn


def finish():
    if FAILURES:
        print(f"{len(FAILURES)} failed: {', '.join(FAILURES)}")
        sys.exit(1)
    print("all passed")
