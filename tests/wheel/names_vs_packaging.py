#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Cross-checks libpkg's wheel file name parser against pip's vendored
packaging (parse_wheel_filename, canonicalize_name) on a list of names.

Both must accept or both reject; when both accept, the canonical project
name, the PEP 440 version, the build tag and the set of tags must agree, and
our canonical format() must parse back to the same result in packaging.
A few names are rejected by us on purpose although packaging accepts them
(empty fields or tags that no installer could match); they are listed in
STRICTER and must be exactly the disagreements.
"""
import json
import os
import subprocess
import sys
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lib"))
from testlib import missing  # noqa: E402

try:
    from pip._vendor.packaging.utils import (canonicalize_name,
                                             parse_wheel_filename)
    from pip._vendor.packaging.version import Version
except ImportError as e:  # pragma: no cover
    missing(f"pip's vendored packaging (python3-pip): {e}")

NAMES = [
    "demo-1.0-py3-none-any.whl",
    "torch-2.5.0+cu124-cp311-cp311-linux_x86_64.whl",
    "torch-2.5.0+cu124-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl",
    "six-1.16.0-py2.py3-none-any.whl",
    "six-1.16.0-py3.py2-none-any.whl",
    "x-1-cp39.cp310.cp39-abi3-linux_x86_64.whl",
    "pkg-1.0-1-py3-none-any.whl",
    "pkg-1.0-20240101abc-py3-none-any.whl",
    "pkg-1.0-0_rc.1-py3-none-any.whl",
    "Foo.Bar-0.1-py2.py3-none-any.whl",
    "Foo_Bar-0.1-py3-none-any.whl",
    "zope.interface-6.0-cp311-cp311-win_amd64.whl",
    "Django-4.2-py3-none-any.whl",
    "a-1.0.post1.dev2-py3-none-any.whl",
    "a-1!2.0rc1+local_1.x-py3-none-any.whl",
    "a-v1.0-py3-none-any.whl",
    "a-1.0_post_2-py3-none-any.whl",
    "a-1.0a1-py3-none-any.whl",
    "a-1.0.RC1-py3-none-any.whl",
    "a-1.0+CU124-py3-none-any.whl",
    "numpy-1.26.4-cp312-cp312-macosx_11_0_arm64.whl",
    "numpy-1.26.4-pp39-pypy39_pp73-manylinux_2_17_x86_64.manylinux2014_x86_64.whl",
    "cryptography-42.0.5-cp39-abi3-musllinux_1_2_aarch64.whl",
    "A-1-PY3-NONE-ANY.whl",
    # rejects (both)
    "demo-1.0-py3-none-any.zip",
    "demo-1.0-py3-none.whl",
    "demo-1.0-1-2-py3-none-any.whl",
    "demo-one-py3-none-any.whl",
    "demo-1.0-abc-py3-none-any.whl",
    "de__mo-1.0-py3-none-any.whl",
    "de mo-1.0-py3-none-any.whl",
    "demo--py3-none-any.whl",
    "demo-1.0+-py3-none-any.whl",
    "demo-1..0-py3-none-any.whl",
    "demo-1.0.whl",
    "demo.whl",
]

# We reject these deliberately; packaging accepts them.
STRICTER = {
    "-1.0-py3-none-any.whl": "empty distribution name",
    "demo-1.0-py3..py2-none-any.whl": "empty tag in a compressed set",
    "demo-1.0-py3-none-an$y.whl": "character outside [A-Za-z0-9_] in a tag",
    "demo-1.0-py3--any.whl": "empty abi tag",
    "..-1.0-py3-none-any.whl": "PEP 508: a name begins and ends alphanumeric",
    "_demo-1.0-py3-none-any.whl": "PEP 508: a name begins and ends alphanumeric",
}


def packaging_parse(name):
    try:
        return parse_wheel_filename(name)
    except Exception as e:  # InvalidWheelFilename or InvalidVersion
        return e


def main():
    probe = os.environ["WHEEL_PROBE"]
    inputs = NAMES + list(STRICTER)
    out = subprocess.run([probe, "names"], input="\n".join(inputs) + "\n",
                         capture_output=True, text=True, check=True).stdout
    ours = [json.loads(line) for line in out.splitlines()]
    assert len(ours) == len(inputs), (len(ours), len(inputs))
    failures = []
    accepted = rejected = 0
    for name, mine in zip(inputs, ours):
        theirs = packaging_parse(name)
        pip_ok = not isinstance(theirs, Exception)
        if name in STRICTER:
            if mine["ok"] or not pip_ok:
                failures.append(f"{name}: expected us to reject and packaging "
                                f"to accept ({STRICTER[name]}); ours={mine}, "
                                f"packaging={theirs!r}")
            continue
        if mine["ok"] != pip_ok:
            failures.append(f"{name}: ours ok={mine['ok']} "
                            f"({mine.get('error')}), packaging={theirs!r}")
            continue
        if not pip_ok:
            rejected += 1
            continue
        accepted += 1
        p_name, p_version, p_build, p_tags = theirs
        checks = {
            "name": (mine["canonical"], p_name),
            "canonicalize_name": (mine["canonical"],
                                  canonicalize_name(mine["distribution"])),
            "version": (Version(mine["version"]), p_version),
            "build": (() if mine["build"] is None else
                      (int("".join(c for c in mine["build"][:len(mine["build"]) - len(mine["build"].lstrip("0123456789"))])),
                       mine["build"].lstrip("0123456789")), p_build),
            "tags": ({t.lower() for t in mine["tags"]},
                     {str(t) for t in p_tags}),
        }
        # Our canonical spelling must mean the same to packaging.
        again = packaging_parse(mine["formatted"])
        checks["formatted"] = (again, theirs)
        for what, (a, b) in checks.items():
            if a != b:
                failures.append(f"{name}: {what}: ours {a!r} != packaging {b!r}")
    for f in failures:
        print("FAIL", f)
    print(f"{accepted} accepted and {rejected} rejected by both, "
          f"{len(STRICTER)} deliberately stricter; {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
