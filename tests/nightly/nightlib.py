# SPDX-License-Identifier: BSD-3-Clause
"""Helpers shared by the nightly tests: run pkgtool, write job files. The
checks and the case runner are tests/lib/testlib.py's."""
import atexit
import json
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from testlib import case, check, finish, run  # noqa: E402

__all__ = ["PKGTOOL", "case", "check", "finish", "load", "pkgtool", "run", "scratch",
           "sh_job", "write_jobs"]

PKGTOOL = os.environ["PKGTOOL"]


def pkgtool(*args, check=None, **kw):
    """Runs `pkgtool ARGS`; check= the expected exit status."""
    return run([PKGTOOL, *args], expect=check, **kw)


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
    """A private scratch directory, removed when the script exits (TEST_KEEP=1
    keeps it, as tests/lib/harness.sh does). Every CI pass makes hundreds of
    these, tens of MB each: left behind, they fill a shared disk."""
    d = tempfile.mkdtemp(prefix="nightly-test-")
    if os.environ.get("TEST_KEEP") == "1":
        print(f"scratch directory kept: {d}", flush=True)
    else:
        atexit.register(_remove_tree, d)
    return d


def _remove_tree(path):
    # Tests leave read-only directories behind (mode checks): make them
    # writable first, or rmtree leaves them.
    for root, dirs, _ in os.walk(path):
        for name in dirs:
            try:
                os.chmod(os.path.join(root, name), 0o700)
            except OSError:
                pass
    shutil.rmtree(path, ignore_errors=True)
