# SPDX-License-Identifier: BSD-3-Clause
"""Helpers shared by the nightly tests: run pkgtool, write job files. The
checks and the case runner are tests/lib/testlib.py's."""
import json
import os
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
    return tempfile.mkdtemp(prefix="nightly-test-")
